import type { Request, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { UserService } from '../../accounts/user.service.js';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { hasAdminPermission } from '../../accounts/permissions.js';
import { actorOf } from '../server.js';
import { confidentialQuery, objectName, pathParam, userListParams, userListQuery } from '../../util/common.input.js';
import { disconnectQuery, userCreateInput, userUpdateInput, type UserInput } from '../../accounts/user.input.js';
import { locationOf, renderCreated } from '../location.js';

const usernameParam = Joi.object({ username: objectName.required() });

/** confidential_data=1 is honoured only for admins holding `*`. */
export function wantsConfidential(request: Request): boolean {
  return (request.query as { confidential_data?: number }).confidential_data === 1 && hasAdminPermission(adminOf(request).admin, '*');
}

/** /users: CRUD (view_users, add_users, edit_users, del_users), scoped to the role of a role admin. */
export function userRoutes(c: DependencyContainer): ServerRoute[] {
  const users = c.resolve(UserService);
  return [
    {
      method: 'GET',
      path: '/api/v2/users',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'view_users' } }, validate: { query: userListQuery } },
      handler: async (request) => {
        return users.listRendered(userListParams(request), adminOf(request).admin);
      },
    },
    {
      method: 'POST',
      path: '/api/v2/users',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'add_users' } }, validate: { payload: userCreateInput, query: confidentialQuery } },
      handler: async (request, h) => {
        const user = await users.create(request.payload as UserInput, adminOf(request).admin, actorOf(request));
        const body = await renderCreated(
          () => users.render(user, { confidential: wantsConfidential(request) }),
          () => users.delete(user.username, null, actorOf(request)),
        );
        return h.response(body).code(201).header('Location', locationOf('/api/v2/users', user.username));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/users/{username}',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'view_users' } }, validate: { params: usernameParam, query: confidentialQuery } },
      handler: async (request) => {
        return users.viewRendered(pathParam(request, 'username'), adminOf(request).admin, { confidential: wantsConfidential(request) });
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/users/{username}',
      options: {
        auth: ADMIN_AUTH,
        plugins: { ferry: { permission: 'edit_users' } },
        validate: { params: usernameParam, payload: userUpdateInput, query: disconnectQuery },
      },
      handler: async (request) => {
        const disconnect = (request.query as { disconnect: number }).disconnect === 1;
        await users.update(pathParam(request, 'username'), request.payload as UserInput, adminOf(request).admin, actorOf(request), disconnect);
        return { message: 'user updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/users/{username}',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'del_users' } }, validate: { params: usernameParam } },
      handler: async (request) => {
        await users.delete(pathParam(request, 'username'), adminOf(request).admin, actorOf(request));
        return { message: 'user deleted' };
      },
    },
  ];
}

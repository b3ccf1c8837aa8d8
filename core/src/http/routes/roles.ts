import type { ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { RoleService, type RoleInput } from '../../accounts/role.service.js';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { isSuperAdmin } from '../../accounts/permissions.js';
import { actorOf } from '../server.js';
import { listQuery, objectName, listParams, pathParam } from '../../util/common.input.js';
import { roleInput } from '../../accounts/role.input.js';
import { locationOf, renderCreated } from '../location.js';

const nameParam = Joi.object({ name: objectName.required() });

export function roleRoutes(c: DependencyContainer): ServerRoute[] {
  const roles = c.resolve(RoleService);
  const superOnly = (request: Parameters<typeof adminOf>[0]) => {
    if (!isSuperAdmin(adminOf(request).admin)) throw Boom.forbidden('only admins with the "*" permission and no role manage roles');
  };
  return [
    {
      method: 'GET',
      path: '/api/v2/roles',
      options: { auth: ADMIN_AUTH, validate: { query: listQuery } },
      handler: async (request) => {
        superOnly(request);
        const list = await roles.list(listParams(request));
        return Promise.all(list.map((r) => roles.render(r)));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/roles',
      options: { auth: ADMIN_AUTH, validate: { payload: roleInput } },
      handler: async (request, h) => {
        superOnly(request);
        const role = await roles.create(request.payload as RoleInput, actorOf(request));
        const body = await renderCreated(
          () => roles.render(role),
          () => roles.delete(role.name, actorOf(request)),
        );
        return h.response(body).code(201).header('Location', locationOf('/api/v2/roles', role.name));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/roles/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam } },
      handler: async (request) => {
        superOnly(request);
        return roles.render(await roles.get(pathParam(request, 'name')));
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/roles/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam, payload: roleInput } },
      handler: async (request) => {
        superOnly(request);
        await roles.update(pathParam(request, 'name'), request.payload as RoleInput, actorOf(request));
        return { message: 'role updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/roles/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam } },
      handler: async (request) => {
        superOnly(request);
        await roles.delete(pathParam(request, 'name'), actorOf(request));
        return { message: 'role deleted' };
      },
    },
  ];
}

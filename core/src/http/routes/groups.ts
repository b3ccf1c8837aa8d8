import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { GroupService } from '../../accounts/group.service.js';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { confidentialQuery, listParams, listQuery, objectName, pathParam } from '../../util/common.input.js';
import { groupCreateInput, groupInput, type GroupInput } from '../../accounts/group.input.js';
import { wantsConfidential } from './users.js';
import { locationOf, renderCreated } from '../location.js';

const nameParam = Joi.object({ name: objectName.required() });
const perm = { ferry: { permission: 'manage_groups' as const } };

/** /groups: CRUD (manage_groups). */
export function groupRoutes(c: DependencyContainer): ServerRoute[] {
  const groups = c.resolve(GroupService);
  return [
    {
      method: 'GET',
      path: '/api/v2/groups',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { query: listQuery } },
      handler: async (request) => {
        const em = groups.em();
        return groups.renderMany(await groups.list(listParams(request), em), { caller: adminOf(request).admin }, em);
      },
    },
    {
      method: 'POST',
      path: '/api/v2/groups',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { payload: groupCreateInput, query: confidentialQuery } },
      handler: async (request, h) => {
        const group = await groups.create(request.payload as GroupInput, actorOf(request));
        const body = await renderCreated(
          () => groups.render(group, { confidential: wantsConfidential(request), caller: adminOf(request).admin }),
          () => groups.delete(group.name, actorOf(request)),
        );
        return h.response(body).code(201).header('Location', locationOf('/api/v2/groups', group.name));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/groups/{name}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam, query: confidentialQuery } },
      handler: async (request) =>
        groups.render(await groups.get(pathParam(request, 'name')), { confidential: wantsConfidential(request), caller: adminOf(request).admin }),
    },
    {
      method: 'PUT',
      path: '/api/v2/groups/{name}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam, payload: groupInput } },
      handler: async (request) => {
        await groups.update(pathParam(request, 'name'), request.payload as GroupInput, actorOf(request));
        return { message: 'group updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/groups/{name}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam } },
      handler: async (request) => {
        await groups.delete(pathParam(request, 'name'), actorOf(request));
        return { message: 'group deleted' };
      },
    },
  ];
}

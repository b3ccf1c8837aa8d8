import type { ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { ConnectionManager, type Connection } from '../../vfs/connection-manager.js';
import type { AdminIdentity } from '../../auth/credentials.js';
import { pathParam } from '../../util/common.input.js';

/** An admin with a role sees (and closes) only the connections of users with that role. */
function visibleTo(admin: AdminIdentity, c: Connection): boolean {
  return !admin.role || c.role === admin.role;
}

export function connectionRoutes(c: DependencyContainer): ServerRoute[] {
  const connections = c.resolve(ConnectionManager);
  return [
    {
      method: 'GET',
      path: '/api/v2/connections',
      options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'view_conns' } } },
      handler: async (request) => {
        const admin = adminOf(request).admin;
        return connections
          .list()
          .filter((x) => visibleTo(admin, x))
          .sort((a, b) => a.connection_time - b.connection_time)
          .map((x) => connections.render(x));
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/connections/{connectionID}',
      options: {
        auth: ADMIN_AUTH,
        plugins: { ferry: { permission: 'close_conns' } },
        validate: { params: Joi.object({ connectionID: Joi.string().max(128).required() }) },
      },
      handler: async (request) => {
        const id = pathParam(request, 'connectionID');
        const conn = connections.get(id);
        if (!conn || !visibleTo(adminOf(request).admin, conn) || !connections.close(id)) {
          throw Boom.notFound(`connection "${id}" not found`);
        }
        return { message: 'connection closed' };
      },
    },
  ];
}

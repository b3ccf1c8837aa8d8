import type { Request, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { ConnectionManager, type Connection } from '../../vfs/connection-manager.js';
import { renderConnection } from '../connection-status.js';
import type { AdminIdentity } from '../../auth/credentials.js';
import { pathParam } from '../../util/common.input.js';
import { ClusterNodes } from '../../ops/cluster-nodes.service.js';
import type { Logger } from '../../logger.js';
import { TOKENS } from '../../tokens.js';

/** Marks a request forwarded by another node: it is answered from this node's connections only (no further forwarding). */
export const FORWARDED_HEADER = 'x-ferry-forwarded-by';
const FORWARD_TIMEOUT_MS = 5000;

/** An admin with a role sees (and closes) only the connections of users with that role. */
function visibleTo(admin: AdminIdentity, c: Connection): boolean {
  return !admin.role || c.role === admin.role;
}

export function connectionRoutes(c: DependencyContainer): ServerRoute[] {
  const connections = c.resolve(ConnectionManager);
  const nodes = c.resolve(ClusterNodes);
  const logger = c.resolve<Logger>(TOKENS.Logger);

  /**
   * Asks the other nodes alive to close the connection, with the caller's own
   * credentials (each node checks them and the admin's role as for any
   * request). True when one of them held it.
   */
  const closeElsewhere = async (request: Request, id: string): Promise<boolean> => {
    const headers: Record<string, string> = { [FORWARDED_HEADER]: nodes.self };
    for (const h of ['authorization', 'x-service-api-key']) {
      const v = request.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    const answers = await Promise.all(
      (await nodes.others()).map(async (n) => {
        try {
          const r = await fetch(`${n.url}/api/v2/connections/${encodeURIComponent(id)}`, {
            method: 'DELETE',
            headers,
            signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
          });
          await r.body?.cancel();
          if (r.status !== 200 && r.status !== 404) logger.warn({ node: n.id, status: r.status }, 'a node refused a forwarded connection close');
          return r.status === 200;
        } catch (err) {
          logger.warn({ err, node: n.id, url: n.url }, 'cannot reach a node to close a connection');
          return false;
        }
      }),
    );
    return answers.includes(true);
  };
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
          .map((x) => renderConnection(x, connections.node));
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
        if (conn) {
          if (visibleTo(adminOf(request).admin, conn) && connections.close(id)) return { message: 'connection closed' };
        } else if (request.headers[FORWARDED_HEADER] === undefined && (await closeElsewhere(request, id))) {
          // held by another node of the cluster
          return { message: 'connection closed' };
        }
        throw Boom.notFound(`connection "${id}" not found`);
      },
    },
  ];
}

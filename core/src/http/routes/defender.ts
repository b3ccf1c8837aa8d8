import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { DefenderService } from '../../security/defender.service.js';
import { defenderHostParams } from '../../security/defender.input.js';

const view = { ferry: { permission: 'view_defender' as const } };
const manage = { ferry: { permission: 'manage_defender' as const } };

/** The defender is server-wide: admins with a role (who manage only their role's objects) may not see or change it. */
function noRole(request: Request, h: ResponseToolkit) {
  const { admin } = adminOf(request);
  if (admin.role) throw Boom.forbidden(`the defender is server-wide: admins with a role ("${admin.role}") cannot access it`);
  return h.continue;
}
/** Checked right after authentication, like permissions (before the path is validated). */
const ext = { onPostAuth: { method: noRole } };

/** The address of the path's host id (the schema decoded and validated it). */
const ipOf = (request: Request) => (request.params as { id: string }).id;

/** `/api/v2/defender/hosts[/{id}]`: hosts banned or scored by the defender (while it is disabled the list is empty and a single host 404). */
export function defenderRoutes(c: DependencyContainer): ServerRoute[] {
  const defender = c.resolve(DefenderService);
  return [
    {
      method: 'GET',
      path: '/api/v2/defender/hosts',
      options: { auth: ADMIN_AUTH, plugins: view, ext },
      handler: () => defender.list(),
    },
    {
      method: 'GET',
      path: '/api/v2/defender/hosts/{id}',
      options: { auth: ADMIN_AUTH, plugins: view, ext, validate: { params: defenderHostParams } },
      handler: (request) => defender.get(ipOf(request)),
    },
    {
      method: 'DELETE',
      path: '/api/v2/defender/hosts/{id}',
      options: { auth: ADMIN_AUTH, plugins: manage, ext, validate: { params: defenderHostParams } },
      handler: async (request) => {
        await defender.delete(ipOf(request));
        return { message: 'host removed from the defender' };
      },
    },
  ];
}

import type { ServerRoute } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { RetentionChecks } from '../../event-manager/retention-checks.js';
import { ADMIN_AUTH } from '../auth-strategies.js';

/** GET /api/v2/retention/users/checks: data retention checks in progress on this node. */
export function retentionRoutes(c: DependencyContainer): ServerRoute[] {
  const checks = c.resolve(RetentionChecks);
  return [
    {
      method: 'GET',
      path: '/api/v2/retention/users/checks',
      options: { auth: ADMIN_AUTH },
      handler: () => checks.list(),
    },
  ];
}

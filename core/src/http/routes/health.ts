import type { ServerRoute } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from '../../tokens.js';
import { PluginRegistry } from '../../plugins/registry.js';
import { buildInfo } from '../../build-info.js';
import { ANY_AUTH } from '../../auth/strategies.js';

export function healthRoutes(c: DependencyContainer): ServerRoute[] {
  const registry = c.resolve<PluginRegistry>(TOKENS.Plugins);
  return [
    {
      method: 'GET',
      path: '/healthz',
      options: { auth: false },
      handler: (_req, h) => h.response('ok').type('text/plain'),
    },
    {
      method: 'GET',
      path: '/api/v2/version',
      options: { auth: ANY_AUTH, plugins: { ferry: { permission: 'any' } } },
      handler: () => {
        const b = buildInfo();
        return { version: b.version, build_date: b.build_date, commit_hash: b.commit_hash, features: registry.features() };
      },
    },
  ];
}

import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from '../../tokens.js';
import type { Logger } from '../../logger.js';
import { PluginRegistry } from '../../plugins/registry.js';
import { buildInfo } from '../../build-info.js';
import { ANY_AUTH } from '../auth-strategies.js';
import type { MikroORM } from '@mikro-orm/core';
import { DB_RETRY_AFTER_SECONDS } from '../../data/db-errors.js';

/** How long /readyz waits for the database before it answers "not ready". */
const READY_TIMEOUT_MS = 2000;

/** A trivial query on a connection of the pool, bounded in time. */
async function databaseAnswers(orm: MikroORM): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
  });
  try {
    const query = orm.em
      .getConnection()
      .execute('select 1 as ok')
      .then(
        () => null,
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(c: DependencyContainer): ServerRoute[] {
  const registry = c.resolve<PluginRegistry>(TOKENS.Plugins);
  const orm = c.resolve<MikroORM>(TOKENS.Orm);
  return [
    {
      // Liveness: the process is up and serving HTTP (it answers even while the database is down).
      method: 'GET',
      path: '/healthz',
      options: {
        auth: false,
        plugins: { ferry: { responses: { 200: { description: 'the word ok', type: 'text/plain', schema: Joi.string().valid('ok') } } } },
      },
      handler: (_req, h) => h.response('ok').type('text/plain'),
    },
    {
      // Readiness: this node can serve API requests (its database answers). Load balancers probe this.
      method: 'GET',
      path: '/readyz',
      options: { auth: false },
      handler: async (_req, h) => {
        const problem = await databaseAnswers(orm);
        if (!problem) return { status: 'ready', database: 'ok' };
        // The reason stays in the log: it may name hosts, users or databases.
        c.resolve<Logger>(TOKENS.Logger).warn({ component: 'readyz', reason: problem }, 'not ready: the database does not answer');
        return h
          .response({ message: 'not ready: the database is unavailable', error: 'Service Unavailable' })
          .code(503)
          .header('Retry-After', String(DB_RETRY_AFTER_SECONDS));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/version',
      options: {
        auth: ANY_AUTH,
        plugins: {
          ferry: {
            permission: 'any',
            responses: {
              200: {
                description: 'VersionInfo',
                schema: Joi.object({
                  version: Joi.string().required(),
                  build_date: Joi.string().allow('').required(),
                  commit_hash: Joi.string().allow('').required(),
                  features: Joi.array().items(Joi.string()).required(),
                }),
              },
            },
          },
        },
      },
      handler: () => {
        const b = buildInfo();
        return { version: b.version, build_date: b.build_date, commit_hash: b.commit_hash, features: registry.features() };
      },
    },
  ];
}

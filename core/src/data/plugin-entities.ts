import type { MikroORM } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/postgresql';
import type { Dialect } from './orm.js';
import { runMigrations } from './migrate.js';
import type { Logger } from '../logger.js';
import type { PluginDatabase, PluginEntitiesDef } from '../sdk/plugin-entities.js';

export type { PluginDatabase, PluginEntitiesDef, PluginMigration } from '../sdk/plugin-entities.js';

/**
 * Makes a plugin's MikroORM entities known to the open ORM and runs the
 * plugin's pending migrations for the database's dialect (recorded by name in
 * `ferry_migrations`, next to the core's, in one transaction). Called from
 * PluginContext.registerEntities() while plugins register, so a plugin's
 * tables exist before any request or event reaches it.
 */
export async function installPluginEntities(orm: MikroORM, dialect: Dialect, plugin: string, def: PluginEntitiesDef, logger: Logger): Promise<PluginDatabase> {
  if (def.entities.length) orm.discoverEntity(def.entities);
  const applied = await runMigrations(orm, def.migrations[dialect]);
  if (applied.length) logger.info({ plugin, migrations: applied }, 'plugin tables migrated');
  return Object.freeze({ dialect, em: () => orm.em.fork() as unknown as SqlEntityManager });
}

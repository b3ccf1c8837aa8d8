import type { EntitySchema, MikroORM } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/postgresql';
import type { Dialect } from './orm.js';
import { runMigrations, type NamedMigration } from './migrate.js';
import type { Logger } from '../logger.js';

/** A migration of a plugin's tables: SQL statements run in order, once (recorded by name). */
export interface PluginMigration extends NamedMigration {
  /** Unique among every migration, e.g. `Migration20261125170000_events_search`. */
  name: string;
}

/** Entities a plugin owns in the core database, with their migrations for both dialects. */
export interface PluginEntitiesDef {
  entities: EntitySchema<any>[];
  migrations: { sqlite: PluginMigration[]; postgresql: PluginMigration[] };
}

/** What registerEntities() gives back: the core database, with the plugin's entities known to it. */
export interface PluginDatabase {
  readonly dialect: 'sqlite' | 'postgresql';
  /** A fresh EntityManager fork (no identity map shared with requests); both dialects are SQL (query builder, knex). */
  em(): SqlEntityManager;
}

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

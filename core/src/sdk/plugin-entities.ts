import type { EntitySchema } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/postgresql';

// The tables a plugin owns in the core database (PluginContext.registerEntities; core's data/plugin-entities.ts).

/** A migration of a plugin's tables: SQL statements run in order, once (recorded by name). */
export interface PluginMigration {
  /** Unique among every migration, e.g. `Migration20261125170000_events_search`. */
  name: string;
  /** Run in order, in one transaction with the other pending migrations. */
  statements: string[];
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

import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Configuration, EntitySchema, MikroORM, Options } from '@mikro-orm/core';
import { coreEntities } from './entities/index.js';
import type { FerryConfig } from '../config/schema.js';
import { sqlDialectOf, withBoundParameters } from './bound-sql.js';
import { withUnavailableMarking } from './db-errors.js';
import { MIGRATIONS_TABLE, runMigrations, type NamedMigration } from './migrate.js';
import type { Logger } from '../logger.js';
import { releaseOrmContextsWhenIdle } from './async-context.js';

export type Dialect = 'sqlite' | 'postgresql';

export interface OrmOptions {
  driver: Dialect;
  /** SQLite file path or ':memory:'. */
  sqlitePath?: string;
  /** PostgreSQL URL. */
  url?: string;
  poolSize?: number;
  entities?: EntitySchema<any>[];
  /**
   * Where MikroORM's and knex's own messages go (knex prints "Connection
   * Error: ..." to the console otherwise). Without it they are dropped.
   */
  logger?: Logger;
}

/** knex's `log` option and MikroORM's `logger`: their messages as JSON lines of Ferry's logger. */
function ormLogging(logger: Logger | undefined): Pick<Options, 'logger'> & { driverOptions: Record<string, unknown> } {
  const log = logger?.child({ component: 'database' });
  const text = (m: unknown) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m));
  return {
    logger: (message: string) => log?.warn(message),
    driverOptions: {
      log: {
        warn: (m: unknown) => log?.warn(text(m)),
        error: (m: unknown) => log?.error(text(m)),
        deprecate: (m: unknown) => log?.debug(text(m)),
        debug: (m: unknown) => log?.debug(text(m)),
      },
    },
  };
}

export function ormOptionsFromConfig(cfg: FerryConfig): OrmOptions {
  const dp = cfg.data_provider;
  return {
    driver: dp.driver,
    sqlitePath: dp.name === ':memory:' ? ':memory:' : path.resolve(cfg.common.data_dir, dp.name),
    url: dp.url,
    poolSize: dp.pool_size,
  };
}

/** The core's migrations for a dialect. */
async function migrationsFor(dialect: Dialect): Promise<NamedMigration[]> {
  const mod = dialect === 'sqlite' ? await import('./migrations/sqlite/index.js') : await import('./migrations/postgresql/index.js');
  return mod.statements;
}

/**
 * Opens the database. The driver package is imported only when chosen, so a
 * PostgreSQL deployment never loads the SQLite binding and vice versa. Both
 * drivers run every query with bound parameters (see bound-sql.ts).
 */
export async function openOrm(o: OrmOptions): Promise<MikroORM> {
  releaseOrmContextsWhenIdle();
  const base: Options = {
    entities: [...coreEntities, ...(o.entities ?? [])],
    discovery: { warnWhenNoEntities: false },
    // ferry_migrations is runMigrations' (migrate.ts): the schema generator leaves it alone
    migrations: { tableName: MIGRATIONS_TABLE },
    debug: false,
    ...ormLogging(o.logger),
    allowGlobalContext: false,
    forceUndefined: false,
    serialization: { forceObject: true },
  };
  if (o.driver === 'sqlite') {
    const dbName = o.sqlitePath ?? ':memory:';
    if (dbName !== ':memory:') mkdirSync(path.dirname(dbName), { recursive: true });
    const lib = await import('@mikro-orm/libsql');
    const Connection = withUnavailableMarking(withBoundParameters(lib.LibSqlConnection, 'sqlite'));
    class LibSqlBoundDriver extends lib.AbstractSqlDriver<InstanceType<typeof Connection>, InstanceType<typeof lib.LibSqlPlatform>> {
      constructor(config: Configuration) {
        super(config, new lib.LibSqlPlatform(), Connection, ['knex', 'libsql']);
      }
    }
    const orm = await lib.MikroORM.init({ ...base, driver: LibSqlBoundDriver, dbName, pool: { min: 1, max: 1 } } as Options as any);
    if (dbName !== ':memory:') await useWriteAheadLog(orm, o.logger);
    return orm;
  }
  const pg = await import('@mikro-orm/postgresql');
  const Connection = withUnavailableMarking(withBoundParameters(pg.PostgreSqlConnection, 'postgresql'));
  class PostgreSqlBoundDriver extends pg.AbstractSqlDriver<InstanceType<typeof Connection>, InstanceType<typeof pg.PostgreSqlPlatform>> {
    constructor(config: Configuration) {
      super(config, new pg.PostgreSqlPlatform(), Connection, ['knex', 'pg']);
    }
  }
  const socketDir = pgSocketDir(o.url ?? '');
  return pg.MikroORM.init({
    ...base,
    driver: PostgreSqlBoundDriver,
    clientUrl: o.url,
    ...(socketDir ? { host: socketDir } : {}),
    pool: { min: 0, max: o.poolSize || 10 },
  } as Options as any);
}

/**
 * The Unix socket directory a PostgreSQL URL names in its `host` parameter
 * (postgresql://user@localhost/db?host=/var/run/postgresql, libpq's way), or
 * undefined. MikroORM takes the host from the URL's authority and drops the
 * parameter: without this the connection went over TCP to localhost.
 */
export function pgSocketDir(url: string): string | undefined {
  const host = URL.canParse(url) ? new URL(url).searchParams.get('host') : null;
  return host && host.startsWith('/') ? host : undefined;
}

/**
 * Puts a SQLite database file in write-ahead-log mode (kept in the file:
 * once is enough, every later open finds it). The driver runs on the event
 * loop's thread, so each commit's disk syncs stall every request meanwhile:
 * with the default rollback journal a commit syncs the journal and the
 * database (about 0.63 ms of stall per commit on this project's test
 * machines, tens of ms on slow disks), with the log one append and one sync
 * (0.16 ms). Still synchronous=FULL: a committed change (a login, a quota
 * update, an audit event) survives a power loss. The log is folded back into
 * the database by SQLite itself (every 1000 pages, and when the server stops).
 */
async function useWriteAheadLog(orm: MikroORM, logger?: Logger): Promise<void> {
  const rows = (await orm.em.getConnection().execute('pragma journal_mode = wal')) as { journal_mode?: string }[];
  const mode = rows[0]?.journal_mode;
  if (mode !== 'wal') {
    logger?.warn({ component: 'database', journal_mode: mode }, 'SQLite could not use write-ahead logging here: each commit syncs more often');
    return;
  }
  // The connection's cached statements can defer its close past the process's end, and with
  // it SQLite's own final checkpoint: fold the log in and empty it first, so that a stopped
  // server's database is whole in its one file (an operator may copy just that file).
  const close = orm.close.bind(orm);
  orm.close = async (force?: boolean) => {
    await orm.em
      .getConnection()
      .execute('pragma wal_checkpoint(TRUNCATE)')
      .catch((err: unknown) => logger?.warn({ component: 'database', err }, 'SQLite log checkpoint at close failed'));
    return close(force);
  };
}

/** Runs pending migrations; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  return runMigrations(orm, await migrationsFor(sqlDialectOf(orm.em)));
}

import type { MikroORM } from '@mikro-orm/core';
import type { AbstractSqlConnection } from '@mikro-orm/knex';
import { sqlDialectOf, type SqlDialect } from './bound-sql.js';

/** A migration: SQL statements run in order, once (recorded by name). */
export interface NamedMigration {
  name: string;
  statements: string[];
}

/** Where the names of the migrations run are recorded (the core's and every plugin's). */
export const MIGRATIONS_TABLE = 'ferry_migrations';

/**
 * The table's shape is the one MikroORM's migrator gave it (databases it
 * created keep working): an id, the migration's name, when it ran.
 */
const CREATE_TABLE: Record<SqlDialect, string> = {
  sqlite: `create table if not exists ${MIGRATIONS_TABLE} (id integer not null primary key autoincrement, name varchar(255), executed_at datetime default CURRENT_TIMESTAMP)`,
  postgresql: `create table if not exists ${MIGRATIONS_TABLE} (id serial primary key, name varchar(255), executed_at timestamptz default CURRENT_TIMESTAMP)`,
};

/** PostgreSQL advisory lock held by the transaction that migrates: nodes starting together migrate one after the other. */
const MIGRATION_LOCK = 0x66657272; // 'ferr'

type Row = { name: unknown };

/** The names recorded in MIGRATIONS_TABLE; none when it cannot be read (a new database: runMigrations creates it, or says why it cannot). */
async function recordedMigrations(conn: AbstractSqlConnection, ctx?: unknown): Promise<Set<string>> {
  try {
    const rows = (await conn.execute(`select name from ${MIGRATIONS_TABLE}`, [], 'all', ctx as never)) as Row[];
    return new Set(rows.map((r) => String(r.name)));
  } catch (err) {
    if (ctx) throw err;
    return new Set();
  }
}

/**
 * Runs the migrations of `list` that are not recorded yet, in order, and
 * records each: all in one transaction, so a failing statement leaves the
 * database as it was (PostgreSQL and SQLite both roll DDL back). On
 * PostgreSQL the transaction first takes an advisory lock and reads the
 * record again, so cluster nodes starting together on a new version do not
 * run a migration twice. Returns the names run.
 *
 * A start on an up-to-date database costs one read. (MikroORM's migrator,
 * which this replaces, brought umzug and its command-line and JSON-schema
 * packages: about 1.5 MB of modules held by every server process.)
 */
export async function runMigrations(orm: MikroORM, list: readonly NamedMigration[]): Promise<string[]> {
  const conn = orm.em.getConnection() as AbstractSqlConnection;
  const before = await recordedMigrations(conn);
  if (list.every((m) => before.has(m.name))) return [];
  const dialect = sqlDialectOf(orm.em);
  return conn.transactional(async (trx) => {
    const run = (sql: string, params: unknown[] = []) => conn.execute(sql, params, 'run', trx);
    if (dialect === 'postgresql') await conn.execute(`select pg_advisory_xact_lock(${MIGRATION_LOCK})`, [], 'all', trx);
    await run(CREATE_TABLE[dialect]);
    const recorded = await recordedMigrations(conn, trx);
    const applied: string[] = [];
    for (const m of list) {
      if (recorded.has(m.name)) continue;
      for (const sql of m.statements) await run(sql);
      await run(`insert into ${MIGRATIONS_TABLE} (name) values (?)`, [m.name]);
      applied.push(m.name);
    }
    return applied;
  });
}

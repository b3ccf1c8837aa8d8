import type { MikroORM } from '@mikro-orm/core';

/** A migration: SQL statements run in order, once (recorded by name). */
export interface NamedMigration {
  name: string;
  statements: string[];
}

/** Where the names of the migrations run are recorded (the core's and every plugin's). */
export const MIGRATIONS_TABLE = 'ferry_migrations';

/** The names recorded in MIGRATIONS_TABLE; none when it cannot be read (a new database: the migrator creates it, or says why it cannot). */
async function recordedMigrations(orm: MikroORM): Promise<Set<string>> {
  try {
    const rows = (await orm.em.getConnection().execute(`select name from ${MIGRATIONS_TABLE}`)) as { name: unknown }[];
    return new Set(rows.map((r) => String(r.name)));
  } catch {
    return new Set();
  }
}

/**
 * Runs the migrations of `list` that are not recorded yet, in order, in one
 * transaction, and records them; returns the names run. MikroORM's migrator
 * (umzug, and the command-line and JSON-schema packages it brings: about
 * 1.5 MB of modules that stay in memory once loaded) is imported only when
 * one is pending, so a server started on an up-to-date database never loads
 * it.
 */
export async function runMigrations(orm: MikroORM, list: readonly NamedMigration[]): Promise<string[]> {
  const recorded = await recordedMigrations(orm);
  if (list.every((m) => recorded.has(m.name))) return [];
  const { Migration, Migrator } = await import('@mikro-orm/migrations');
  const migrationsList = list.map((m) => ({
    name: m.name,
    class: class extends Migration {
      override async up(): Promise<void> {
        for (const sql of m.statements) this.addSql(sql);
      }
    },
  }));
  const original = orm.config.get('migrations');
  // the Migrator reads its options when built: one over this list only
  orm.config.set('migrations', { ...original, migrationsList });
  try {
    const applied = await new Migrator(orm.em as ConstructorParameters<typeof Migrator>[0]).up();
    return applied.map((m) => m.name);
  } finally {
    orm.config.set('migrations', original);
  }
}

import t from 'tap';
import type { MikroORM } from '@mikro-orm/core';
import type { AbstractSqlConnection } from '@mikro-orm/knex';
import { createPgDatabase, createTestApp, usePostgres } from '../../src/testing.js';
import { migrate, openOrm } from '../../src/data/orm.js';
import { MIGRATIONS_TABLE, runMigrations } from '../../src/data/migrate.js';

t.test(`migrations create exactly the schema the entities describe (${usePostgres() ? 'postgresql' : 'sqlite'})`, async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const diff = await ta.app.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
  t.equal(diff.trim(), '', 'no drift between entities and migrations: run `npm run db:generate -w @ferry/core`');
  t.same(await migrate(ta.app.orm), [], 'a second run applies nothing');
});

const conn = (orm: MikroORM) => orm.em.getConnection() as AbstractSqlConnection;
const recorded = async (orm: MikroORM, name: string) => (await conn(orm).execute(`select name from ${MIGRATIONS_TABLE} where name = ?`, [name])) as unknown[];

t.test('runMigrations runs what is not recorded, once, and records it; a failing one leaves nothing', async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const orm = ta.app.orm;
  const name = 'Migration20991231000000_probe';
  const list = [{ name, statements: ['create table migration_probe (id integer primary key, note varchar(20))'] }];
  t.same(await runMigrations(orm, list), [name]);
  t.same(await runMigrations(orm, list), [], 'recorded: not run again');
  t.same(await recorded(orm, name), [{ name }]);
  await conn(orm).execute(`insert into migration_probe (id, note) values (1, 'here')`);
  t.same(await conn(orm).execute('select note from migration_probe'), [{ note: 'here' }], 'its table exists');
  // all pending ones in one transaction: a failing statement undoes the migrations before it too
  const bad = [
    { name: 'Migration20991231000001_good', statements: ['create table migration_good (id integer primary key)'] },
    { name: 'Migration20991231000002_bad', statements: ['create table migration_bad (id integer primary key)', 'this is not sql'] },
  ];
  await t.rejects(runMigrations(orm, bad));
  for (const m of bad) t.same(await recorded(orm, m.name), [], `${m.name} not recorded`);
  await t.rejects(conn(orm).execute('select * from migration_good'), 'the first migration was rolled back');
  await t.rejects(conn(orm).execute('select * from migration_bad'), 'the failing one too');
});

t.test("a database migrated by MikroORM's migrator (its table, its records) is taken as it is", async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const orm = ta.app.orm;
  const knex = conn(orm).getKnex();
  const names = ((await conn(orm).execute(`select name from ${MIGRATIONS_TABLE} order by id`)) as { name: string }[]).map((r) => r.name);
  t.ok(names.length >= 6, 'the core migrations are recorded');
  // the table as @mikro-orm/migrations' storage created it (knex's increments, string and dateTime)
  await knex.schema.dropTable(MIGRATIONS_TABLE);
  await knex.schema.createTable(MIGRATIONS_TABLE, (tb) => {
    tb.increments();
    tb.string('name');
    tb.dateTime('executed_at').defaultTo(knex.fn.now());
  });
  for (const name of names) await knex(MIGRATIONS_TABLE).insert({ name });
  t.same(await migrate(orm), [], 'nothing runs again');
  const name = 'Migration20991231000003_after_upgrade';
  t.same(await runMigrations(orm, [{ name, statements: ['create table migration_after (id integer primary key)'] }]), [name]);
  const rows = (await conn(orm).execute(`select name, executed_at from ${MIGRATIONS_TABLE} where name = ?`, [name])) as { executed_at: unknown }[];
  t.equal(rows.length, 1);
  t.ok(rows[0]!.executed_at, 'executed_at filled by the default');
});

t.test('nodes starting together on PostgreSQL run a pending migration once', { skip: usePostgres() ? false : 'PostgreSQL only' }, async (t) => {
  const pg = await createPgDatabase();
  const orms = await Promise.all([1, 2, 3].map(() => openOrm({ driver: 'postgresql', url: pg.url })));
  t.teardown(async () => {
    for (const o of orms) await o.close(true);
    await pg.drop();
  });
  const name = 'Migration20991231000004_together';
  // a migration that fails when it runs twice (its table exists), slow enough for the others to arrive meanwhile
  const list = [{ name, statements: ['create table migration_together (id integer primary key)', 'select pg_sleep(0.3)'] }];
  const results = await Promise.all(orms.map((o) => migrate(o).then(() => runMigrations(o, list))));
  t.same(results.filter((r) => r.length).length, 1, 'one node ran it');
  t.same(results.flat(), [name]);
  t.same(await recorded(orms[0]!, name), [{ name }], 'recorded once');
});

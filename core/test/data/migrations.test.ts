import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestApp, usePostgres } from '../../src/testing.js';
import { migrate } from '../../src/data/orm.js';
import { MIGRATIONS_TABLE, runMigrations } from '../../src/data/migrate.js';

t.test(`migrations create exactly the schema the entities describe (${usePostgres() ? 'postgresql' : 'sqlite'})`, async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const diff = await ta.app.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
  t.equal(diff.trim(), '', 'no drift between entities and migrations: run `npm run db:generate -w @ferry/core`');
  t.same(await migrate(ta.app.orm), [], 'a second run applies nothing');
});

t.test('runMigrations runs what is not recorded, once, records it, and leaves the migrations option as it was', async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const orm = ta.app.orm;
  const before = orm.config.get('migrations');
  const name = 'Migration20991231000000_probe';
  const list = [{ name, statements: ['create table migration_probe (id integer primary key, note varchar(20))'] }];
  t.same(await runMigrations(orm, list), [name]);
  t.same(await runMigrations(orm, list), [], 'recorded: not run again');
  const conn = orm.em.getConnection();
  t.same(await conn.execute(`select name from ${MIGRATIONS_TABLE} where name = ?`, [name]), [{ name }]);
  await conn.execute(`insert into migration_probe (id, note) values (1, 'here')`);
  t.same(await conn.execute('select note from migration_probe'), [{ note: 'here' }], 'its table exists');
  t.equal(orm.config.get('migrations'), before);
  // a failing migration runs in a transaction: nothing of it stays, nothing is recorded
  const bad = [{ name: 'Migration20991231000001_bad', statements: ['create table migration_bad (id integer primary key)', 'this is not sql'] }];
  await t.rejects(runMigrations(orm, bad));
  t.same(await conn.execute(`select name from ${MIGRATIONS_TABLE} where name = ?`, [bad[0]!.name]), []);
  await t.rejects(conn.execute('select * from migration_bad'), 'its first statement was rolled back');
});

t.test('a server started on an up-to-date database does not load the migrator', { skip: usePostgres() ? 'run on a SQLite file' : false }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-migrate-probe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const core = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const probe = () =>
    JSON.parse(
      execFileSync(
        process.execPath,
        ['--conditions=ferry-src', '--no-warnings', '--import=@tapjs/typescript/import', 'test/fixtures/migrate-probe.ts', path.join(dir, 'f.db')],
        {
          cwd: core,
          encoding: 'utf8',
        },
      ),
    ) as { applied: number; migratorLoaded: boolean };
  const first = probe();
  t.ok(first.applied > 0, 'a new database is migrated');
  t.equal(first.migratorLoaded, true, 'by the migrator');
  t.same(probe(), { applied: 0, migratorLoaded: false }, 'up to date: nothing run, the migrator never imported');
});

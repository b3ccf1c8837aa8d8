// @ferry-test database-independent: opens SQLite files of its own whatever FERRY_TEST_DB says
import t from 'tap';
import { copyFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/core';
import { migrate, openOrm } from '../../src/data/orm.js';

const pragma = async (orm: MikroORM, name: string) => ((await orm.em.getConnection().execute(`pragma ${name}`)) as Record<string, unknown>[])[0]?.[name];

t.test('a SQLite database file is in write-ahead-log mode with full syncs, and keeps what was committed', async (t) => {
  const file = path.join(t.testdir({}), 'ferry.db');
  const orm = await openOrm({ driver: 'sqlite', sqlitePath: file });
  await migrate(orm);
  t.equal(await pragma(orm, 'journal_mode'), 'wal');
  t.equal(await pragma(orm, 'synchronous'), 2, 'FULL: a commit is on disk when it returns');
  await orm.em.getConnection().execute(`insert into ferry_migrations (name) values ('journal-probe')`);
  t.ok(existsSync(`${file}-wal`), 'commits go to the log while the database is open');
  await orm.close(true);
  t.equal(existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0, 0, 'closing folds the log back into the database file');
  // the database file alone (as an operator would copy it) holds every commit
  const copy = path.join(path.dirname(file), 'copy.db');
  copyFileSync(file, copy);
  const fromCopy = await openOrm({ driver: 'sqlite', sqlitePath: copy });
  t.same(
    await fromCopy.em.getConnection().execute(`select name from ferry_migrations where name = 'journal-probe'`),
    [{ name: 'journal-probe' }],
    'a copy of the file alone holds the commit',
  );
  await fromCopy.close(true);

  const again = await openOrm({ driver: 'sqlite', sqlitePath: file });
  t.teardown(() => again.close(true));
  t.equal(await pragma(again, 'journal_mode'), 'wal', 'kept in the file');
  t.same(await again.em.getConnection().execute(`select name from ferry_migrations where name = 'journal-probe'`), [{ name: 'journal-probe' }]);
});

t.test('an in-memory database keeps its own journal', async (t) => {
  const orm = await openOrm({ driver: 'sqlite', sqlitePath: ':memory:' });
  t.teardown(() => orm.close(true));
  t.equal(await pragma(orm, 'journal_mode'), 'memory');
});

import t from 'tap';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { createTestApp, usePostgres } from '../../src/testing.js';
import { rowBuilder, selectFirstRow, selectRows } from '../../src/data/bound-sql.js';

/**
 * selectRows (core/src/data/bound-sql.ts): the hot reads (token checks, user
 * lookups) answer what `connection.execute` answers. On SQLite an idle
 * connection runs them at once, without the pool; a connection held by a
 * transaction is never read through, so no read sees uncommitted data.
 */
t.test('same rows as execute, on both databases', async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const em = ta.app.orm.em.fork() as unknown as SqlEntityManager;
  const c = em.getConnection();
  await c.execute('create table sr_probe (id integer primary key, v text not null, flag boolean not null)');
  for (let i = 1; i <= 5; i++) await c.execute('insert into sr_probe (id, v, flag) values (?, ?, ?)', [i, `v${i}`, i % 2 === 0], 'run');
  t.teardown(() => c.execute('drop table sr_probe'));

  const cases: [string, unknown[]][] = [
    ['select id, v from sr_probe where id = ?', [3]],
    ['select id from sr_probe where id in (?) order by id', [[1, 4, 5]]],
    ['select count(*) as n from sr_probe where flag = ?', [true]],
    ['select id from sr_probe where v = ?', ["it's a ? in a value"]],
    ["select id, '?' as mark from sr_probe where id = ?", [2]],
    ['select id from sr_probe order by id desc', []],
  ];
  for (const [sql, params] of cases) {
    const expected = await c.execute(sql, params);
    t.same(await selectRows(em, sql, params), expected, sql);
    t.same(await selectFirstRow(em, sql, params), expected[0], `${sql}: selectFirstRow, the first of them`);
  }
  t.same(await selectRows(em, 'select id from sr_probe where id = ?', [99]), [], 'no row: an empty list');
  t.equal(await selectFirstRow(em, 'select id from sr_probe where id = ?', [99]), undefined, 'no row: selectFirstRow answers undefined');
  await t.rejects(selectFirstRow(em, 'select nope from sr_probe', []), 'selectFirstRow: an invalid statement fails too');
  // the same statement read whole and first in turn (one prepared statement serves both)
  t.same(await selectRows(em, 'select id from sr_probe order by id', []), [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }]);
  t.same(await selectFirstRow(em, 'select id from sr_probe order by id', []), { id: 1 });
  t.same(await selectRows(em, 'select id from sr_probe order by id', []), [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }], 'whole again after first');
  await t.rejects(selectRows(em, 'select nope from sr_probe', []), 'an invalid statement fails as with execute');
  t.throws(() => selectRows(em, 'delete from sr_probe', []), /reads only/, 'a write is refused before it runs');
  t.same(await selectRows(em, 'select count(*) as n from sr_probe', []), [{ n: usePostgres() ? '5' : 5 }], 'nothing was deleted');
});

t.test('SQLite: an idle connection is read at once, a held one never', { skip: usePostgres() && 'SQLite only' }, async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const orm = ta.app.orm;
  const c = (orm.em.fork() as unknown as SqlEntityManager).getConnection();
  await c.execute('create table sr_tx (id integer primary key)');
  const client = c.getKnex().client as { acquireConnection(): Promise<unknown> };
  const acquire = client.acquireConnection.bind(client);
  let acquired = 0;
  client.acquireConnection = () => (acquired++, acquire());
  t.teardown(() => {
    client.acquireConnection = acquire;
  });

  acquired = 0;
  t.same(await selectRows(orm.em, 'select count(*) as n from sr_tx', []), [{ n: 0 }]);
  t.equal(acquired, 0, 'idle connection: read without a pool acquisition');

  // a transaction holds the only connection: a read waits for it and sees committed data only
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let inserted!: () => void;
  const insertedP = new Promise<void>((r) => (inserted = r));
  const tx = orm.em
    .fork()
    .transactional(async (em) => {
      await em.getConnection().execute('insert into sr_tx (id) values (?)', [1], 'run', em.getTransactionContext());
      inserted();
      await held;
      throw new Error('roll back');
    })
    .catch((err: Error) => err.message);
  await insertedP;
  let settled = false;
  const read = selectRows<{ n: number }>(orm.em, 'select count(*) as n from sr_tx', []).then((rows) => {
    settled = true;
    return rows;
  });
  await new Promise((r) => setTimeout(r, 50));
  t.equal(settled, false, 'the read waits while the transaction holds the connection');
  release();
  t.equal(await tx, 'roll back');
  t.same(await read, [{ n: 0 }], 'the uncommitted row was never seen');

  // with MikroORM's query log on, reads take the logged path
  const logger = (orm.config as unknown as { getLogger(): { isEnabled(ns: string): boolean } }).getLogger();
  const isEnabled = logger.isEnabled.bind(logger);
  logger.isEnabled = (ns: string) => ns === 'query' || isEnabled(ns);
  acquired = 0;
  t.same(await selectRows(orm.em, 'select count(*) as n from sr_tx', []), [{ n: 0 }]);
  logger.isEnabled = isEnabled;
  t.equal(acquired, 1, 'query log on: the usual (logged) path');
  await c.execute('drop table sr_tx');
});

t.test('PostgreSQL: a prepared statement whose table changed shape is prepared again', { skip: !usePostgres() && 'PostgreSQL only' }, async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const em = ta.app.orm.em.fork() as unknown as SqlEntityManager;
  const c = em.getConnection();
  await c.execute('create table sr_shape (id integer primary key, v text)');
  t.teardown(() => c.execute('drop table sr_shape'));
  await c.execute('insert into sr_shape (id, v) values (?, ?)', [1, 'a'], 'run');
  const sql = 'select * from sr_shape where id = ?';
  t.same(await selectRows(em, sql, [1]), [{ id: 1, v: 'a' }]);
  await c.execute('alter table sr_shape add column w text');
  await c.execute("update sr_shape set w = 'b'", [], 'run');
  // the usual path answers the run that found the old statement, and only that one
  const execute = c.execute.bind(c);
  let fallbacks = 0;
  c.execute = ((...a: Parameters<typeof execute>) => (fallbacks++, execute(...a))) as typeof c.execute;
  for (let i = 0; i < 6; i++) t.same(await selectRows(em, sql, [1]), [{ id: 1, v: 'a', w: 'b' }], `run ${i + 1} after the change`);
  c.execute = execute;
  t.ok(fallbacks >= 1 && fallbacks <= 2, `the old statement failed once per connection that held it (${fallbacks})`);
});

t.test(
  'SQLite: rows of the direct path are named by the statement, also after the table changes shape',
  { skip: usePostgres() && 'SQLite only' },
  async (t) => {
    const ta = await createTestApp({ plugins: [] });
    t.teardown(() => ta.close());
    const orm = ta.app.orm;
    const c = (orm.em.fork() as unknown as SqlEntityManager).getConnection();
    await c.execute('create table sr_shape (id integer primary key, a text, b text)');
    await c.execute(`insert into sr_shape (id, a, b) values (1, 'a1', 'b1')`);
    const sql = 'select *, a as again, b as a from sr_shape where id = ?';
    const before = await selectRows(orm.em, sql, [1]);
    t.same(before, await c.execute(sql, [1]), 'as execute answers (a column named twice keeps its last value)');
    t.same(before, [{ id: 1, a: 'b1', b: 'b1', again: 'a1' }]);
    // through execute (as migrations run): the cached statement's names are read again
    await c.execute('alter table sr_shape add column c text');
    await c.execute(`update sr_shape set c = 'c1'`);
    t.same(await selectRows(orm.em, 'select * from sr_shape where id = ?', [1]), [{ id: 1, a: 'a1', b: 'b1', c: 'c1' }], 'the new column');
    t.same(await selectRows(orm.em, sql, [1]), [{ id: 1, a: 'b1', b: 'b1', c: 'c1', again: 'a1' }]);
    // behind its back (another process, knex's schema builder): a row of another length is noticed
    await c.getKnex().schema.alterTable('sr_shape', (tb) => tb.text('d'));
    await c.execute(`update sr_shape set d = 'd1'`, [], 'run');
    const after = await selectRows(orm.em, 'select * from sr_shape where id = ?', [1]);
    t.same(after, [{ id: 1, a: 'a1', b: 'b1', c: 'c1', d: 'd1' }], 'every column, named');
    t.same(after, await c.execute('select * from sr_shape where id = ?', [1]));
  },
);

t.test('rowBuilder: rows named by their columns, in column order, whatever the names hold', async (t) => {
  const names = ['id', 'a"b', "it's", 'back\\slash', 'line\nbreak', '${x}', '1', 'id'];
  const build = rowBuilder(names);
  const row = build([1, 2, 3, 4, 5, 6, 7, 8]);
  t.same(
    Object.keys(row),
    ['1', 'id', 'a"b', "it's", 'back\\slash', 'line\nbreak', '${x}'],
    'every name once (integer-like keys first, as objects order them)',
  );
  t.same(row, { id: 8, 'a"b': 2, "it's": 3, 'back\\slash': 4, 'line\nbreak': 5, '${x}': 6, '1': 7 }, 'a column named twice keeps its last value');
  t.equal(Object.getPrototypeOf(build([0, 0, 0, 0, 0, 0, 0, 0])), Object.prototype);
  t.not(build([9, 0, 0, 0, 0, 0, 0, 0]), build([9, 0, 0, 0, 0, 0, 0, 0]), 'a new object per row');

  const proto = rowBuilder(['id', '__proto__']);
  const p = proto([1, { polluted: true }]);
  t.equal(Object.getPrototypeOf(p), Object.prototype, '__proto__ is a column, not the prototype');
  t.same(Object.getOwnPropertyDescriptor(p, '__proto__')?.value, { polluted: true });
  t.equal((p as { polluted?: unknown }).polluted, undefined);
  t.same(Object.keys(p), ['id', '__proto__']);
});

t.test('SQLite: column names with quotes and the like come through the direct path', { skip: usePostgres() && 'SQLite only' }, async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const em = ta.app.orm.em;
  const c = (em.fork() as unknown as SqlEntityManager).getConnection();
  const sql = `select 1 as "a""b", 2 as "it's", 3 as "x\\y", 5 as "constructor"`;
  const rows = await selectRows(em, sql, []);
  t.same(rows, await c.execute(sql, []), 'as execute answers');
  t.same(Object.keys(rows[0]!), ['a"b', "it's", 'x\\y', 'constructor']);
  // the driver's objects lose a column named __proto__ (setting it sets the prototype); the direct path keeps it
  const proto = await selectRows<Record<string, unknown>>(em, 'select 1 as id, 4 as "__proto__"', []);
  t.same(Object.getOwnPropertyDescriptor(proto[0]!, '__proto__')?.value, 4);
  t.equal(Object.getPrototypeOf(proto[0]), Object.prototype);
});

import t from 'tap';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { createTestApp, usePostgres } from '../../src/testing.js';
import { cacheStatements } from '../../src/data/bound-sql.js';

/**
 * SQLite connections keep their prepared statements (core/src/data/bound-sql.ts,
 * cacheStatements): a statement is compiled once per connection and reused, the
 * cache stays bounded (least recently used dropped), and reuse never changes an
 * answer: other bindings, a failed run, a schema change between runs.
 */
t.test('a bounded LRU of prepared statements', async (t) => {
  const prepared: string[] = [];
  const conn = { prepare: (sql: string) => (prepared.push(sql), { sql }) };
  const cache = cacheStatements(conn, 2);
  const a = conn.prepare('select 1');
  t.equal(conn.prepare('select 1'), a, 'the same SQL answers the same statement');
  conn.prepare('select 2');
  conn.prepare('select 1'); // now most recently used
  conn.prepare('select 3'); // drops "select 2"
  t.same([...cache.keys()], ['select 1', 'select 3']);
  conn.prepare('select 2');
  t.same(prepared, ['select 1', 'select 2', 'select 3', 'select 2'], 'only new or dropped SQL is prepared again');
  t.equal(cacheStatements(conn, 2), cache, 'wrapping twice keeps one cache');
});

t.test('queries through the ORM on the real driver', { skip: usePostgres() && 'SQLite only' }, async (t) => {
  const ta = await createTestApp({ plugins: [] });
  t.teardown(() => ta.close());
  const c = (ta.app.orm.em.fork() as unknown as SqlEntityManager).getConnection();
  await c.execute('create table sc_probe (id integer primary key, v text not null unique)');
  const insert = 'insert into sc_probe (id, v) values (?, ?)';
  for (let i = 1; i <= 3; i++) await c.execute(insert, [i, `v${i}`], 'run');
  await t.rejects(c.execute(insert, [4, 'v1'], 'run'), 'a unique violation fails');
  await c.execute(insert, [4, 'v4'], 'run');
  const get = 'select v from sc_probe where id = ?';
  for (let i = 1; i <= 4; i++) t.same(await c.execute(get, [i]), [{ v: `v${i}` }], `row ${i} after reuse`);
  const knex = c.getKnex();
  const raw = (await knex.client.acquireConnection()) as { prepare(sql: string): unknown };
  try {
    t.equal(raw.prepare(get), raw.prepare(get), 'the connection answers its cached statement');
  } finally {
    await knex.client.releaseConnection(raw);
  }
  t.same(await c.execute('select * from sc_probe where id = ?', [2]), [{ id: 2, v: 'v2' }], 'select * before the schema change');
  await c.execute('alter table sc_probe add column w text');
  await c.execute('update sc_probe set w = v || ? where id = ?', ['!', 2], 'run');
  t.same(await c.execute('select * from sc_probe where id = ?', [2]), [{ id: 2, v: 'v2', w: 'v2!' }], 'a schema change is seen by a cached select *');
  await c.execute('drop table sc_probe');
  await t.rejects(c.execute(get, [1]), 'a cached statement on a dropped table fails like a new one');
});

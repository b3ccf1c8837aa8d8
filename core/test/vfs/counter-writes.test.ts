import 'reflect-metadata';
import t from 'tap';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { createTestApp } from '../../src/testing.js';
import { CounterWrites } from '../../src/vfs/counter-writes.js';
import { QuotaService, counterWritesOf } from '../../src/vfs/quota.service.js';

/**
 * CounterWrites (core/src/vfs/counter-writes.ts): the counter changes that
 * arrive together are summed per row and stored in one transaction; every
 * change's promise settles once its write is committed. On both databases.
 */
const ta = await createTestApp();
t.teardown(() => ta.close());
const admin = await ta.adminToken();
for (const username of ['cw1', 'cw2']) {
  const r = await ta.inject('POST', '/api/v2/users', {
    token: admin,
    payload: { username, password: 'counter-password-1', status: 1, home_dir: `/tmp/${username}`, permissions: { '/': ['*'] } },
  });
  // (no assertion at the top level: tap ends the root test after it when the next step takes a while)
  if (r.statusCode !== 201) throw new Error(`user ${username}: ${r.statusCode} ${r.payload}`);
}
const em = ta.app.orm.em.fork() as unknown as SqlEntityManager;
const conn = em.getConnection();
const ids = Object.fromEntries(
  ((await conn.execute('select id, username from users')) as { id: number; username: string }[]).map((r) => [r.username, Number(r.id)]),
) as Record<string, number>;
const counters = async (username: string) => {
  const [r] = (await conn.execute(
    'select used_upload_data_transfer as up, used_download_data_transfer as down, used_quota_size as size, used_quota_files as files from users where username = ?',
    [username],
  )) as Record<string, unknown>[];
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)]));
};

/** Counts the update statements run on the connection meanwhile. */
function countUpdates(t: { teardown(fn: () => void): void }): { n: number } {
  const seen = { n: 0 };
  const execute = conn.execute.bind(conn);
  (conn as { execute: unknown }).execute = (sql: unknown, ...rest: unknown[]) => {
    if (typeof sql === 'string' && sql.startsWith('update ')) seen.n++;
    return (execute as (...a: unknown[]) => unknown)(sql, ...rest);
  };
  t.teardown(() => {
    (conn as { execute: unknown }).execute = execute;
  });
  return seen;
}

t.test('changes of one row arriving together: one update, every promise settled once stored', async (t) => {
  const updates = countUpdates(t);
  const w = new CounterWrites(ta.app.orm);
  const before = await counters('cw1');
  await Promise.all(Array.from({ length: 20 }, () => w.add('users', ids.cw1!, 'transfer', 0, 4096)));
  const after = await counters('cw1');
  t.equal(after.down! - before.down!, 20 * 4096, 'every change stored');
  t.equal(updates.n, 1, 'in one statement');
});

t.test('changes of several rows and counter sets: stored together, each row once (its usage and transfer counters in one update)', async (t) => {
  const updates = countUpdates(t);
  const w = new CounterWrites(ta.app.orm);
  await Promise.all([
    w.add('users', ids.cw1!, 'usage', 100, 1),
    w.add('users', ids.cw2!, 'usage', 50, 2),
    w.add('users', ids.cw1!, 'usage', 10, 1),
    w.add('users', ids.cw2!, 'transfer', 7, 0),
  ]);
  t.same(await counters('cw1'), { up: 0, down: 20 * 4096, size: 110, files: 2 });
  t.same(await counters('cw2'), { up: 7, down: 0, size: 50, files: 2 });
  t.equal(updates.n, 2, 'one statement per row, whatever its counter sets');
});

t.test('changes arriving while a write runs go in the next one; nothing goes below zero', async (t) => {
  const w = new CounterWrites(ta.app.orm);
  const first = w.add('users', ids.cw2!, 'usage', -10, -1);
  await new Promise((r) => setImmediate(r));
  const second = w.add('users', ids.cw2!, 'usage', -1000, -5);
  await Promise.all([first, second]);
  t.same(await counters('cw2'), { up: 7, down: 0, size: 0, files: 0 });
});

t.test('a failed write rejects the promises of its changes', async (t) => {
  const w = new CounterWrites(ta.app.orm);
  const execute = conn.execute.bind(conn);
  (conn as { execute: unknown }).execute = () => Promise.reject(new Error('disk on fire'));
  t.teardown(() => {
    (conn as { execute: unknown }).execute = execute;
  });
  await t.rejects(w.add('users', ids.cw1!, 'transfer', 1, 0), /disk on fire/);
});

/** Whether `p` settled within `ms`. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}

t.test('lingering changes (downloads) one after the other: stored together once the linger is over', async (t) => {
  const updates = countUpdates(t);
  const w = new CounterWrites(ta.app.orm, 300);
  const before = await counters('cw1');
  const first = w.add('users', ids.cw1!, 'transfer', 0, 100, { linger: true });
  t.notOk(await settledWithin(first, 50), 'not stored at once');
  const second = w.add('users', ids.cw1!, 'transfer', 0, 23, { linger: true });
  t.equal((await counters('cw1')).down, before.down, 'nothing stored yet');
  await Promise.all([first, second]);
  t.equal((await counters('cw1')).down! - before.down!, 123, 'both stored');
  t.equal(updates.n, 1, 'in one statement');
});

t.test('a change that does not linger takes the lingering ones with it, at once', async (t) => {
  const updates = countUpdates(t);
  const w = new CounterWrites(ta.app.orm, 60_000);
  const before = await counters('cw2');
  const lingering = w.add('users', ids.cw2!, 'transfer', 0, 5, { linger: true });
  const urgent = w.add('users', ids.cw2!, 'usage', 10, 1);
  await Promise.all([lingering, urgent]);
  const after = await counters('cw2');
  t.same([after.down! - before.down!, after.size! - before.size!, after.files! - before.files!], [5, 10, 1]);
  t.equal(updates.n, 1, 'one statement for the row');
});

t.test('flush() stores the lingering changes at once and resolves once they are stored; with nothing pending it resolves at once', async (t) => {
  const w = new CounterWrites(ta.app.orm, 60_000);
  await w.flush();
  const before = await counters('cw1');
  const lingering = w.add('users', ids.cw1!, 'transfer', 7, 0, { linger: true });
  t.notOk(await settledWithin(lingering, 30), 'lingering');
  await w.flush();
  t.equal((await counters('cw1')).up! - before.up!, 7, 'stored when flush() resolved');
  t.ok(await settledWithin(lingering, 0), "the change's own promise settled too");
  // a flush asked while a write runs waits for the changes that arrived meanwhile
  const running = w.add('users', ids.cw1!, 'transfer', 1, 0);
  await new Promise((r) => setImmediate(r));
  const late = w.add('users', ids.cw1!, 'transfer', 0, 2, { linger: true });
  await w.flush();
  t.same([(await counters('cw1')).up! - before.up!, (await counters('cw1')).down! - before.down!], [8, 2]);
  await Promise.all([running, late]);
});

t.test("the server's stop stores the lingering changes before the database closes", async (t) => {
  const other = await createTestApp();
  const writes = counterWritesOf(other.app.orm);
  writes.lingerMs = 60_000;
  const quotas = other.app.container.resolve(QuotaService);
  let stored = false;
  // (a new database has no user: the update runs all the same, on no row)
  const lingering = quotas.addTransfer(1, 0, 1, { linger: true }).then(() => (stored = true));
  t.notOk(await settledWithin(lingering, 20), 'lingering');
  await other.close();
  t.ok(stored, 'stored by the time stop() was over');
});

t.test('flush() is over once what was added before it is stored, while lingering changes keep coming', async (t) => {
  const w = new CounterWrites(ta.app.orm, 20);
  const before = await counters('cw2');
  const adds: Promise<void>[] = [];
  // a download ends during every write (a busy server): the queue is never empty when a write is over
  const execute = conn.execute.bind(conn);
  (conn as { execute: unknown }).execute = (sql: unknown, ...rest: unknown[]) => {
    if (typeof sql === 'string' && sql.startsWith('update ') && adds.length < 100) adds.push(w.add('users', ids.cw2!, 'transfer', 0, 1, { linger: true }));
    return (execute as (...a: unknown[]) => unknown)(sql, ...rest);
  };
  t.teardown(() => {
    (conn as { execute: unknown }).execute = execute;
  });
  const first = w.add('users', ids.cw2!, 'transfer', 0, 1, { linger: true });
  const flushed = w.flush();
  t.ok(await settledWithin(flushed, 1000), 'flush() settled');
  await first;
  t.ok((await counters('cw2')).down! - before.down! >= 1, 'with the change added before it stored');
  t.ok(adds.length < 100, `without waiting for the changes that kept coming (${adds.length} came)`);
  (conn as { execute: unknown }).execute = execute;
  await w.flush();
  await Promise.all(adds);
});

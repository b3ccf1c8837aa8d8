/**
 * A batch retried after the connection dropped between the commit and the
 * acknowledgement (a PostgreSQL restart under load): the retry must not fail
 * on the rows already stored, and no event may be lost or doubled. Runs on
 * SQLite and on PostgreSQL (FERRY_TEST_DB=postgres).
 */
import t from 'tap';
import { appWithSearch, bus, fsEvent, logEvent, providerEvent, settled, storeOf } from './helpers.js';

type Execute = (...args: unknown[]) => Promise<unknown>;
interface Attempt {
  table: string;
  outcome: 'ok' | 'dropped after the commit' | string;
}

const ta = await appWithSearch({ batch_size: 1000, flush_interval: 20 });
t.teardown(() => ta.close());
const connection = ta.app.orm.em.getConnection() as unknown as { execute: Execute };
const execute = connection.execute.bind(connection);

/** Every INSERT into an event table, with its outcome; the first into `dropAfter` commits, then fails as a dropped connection. */
const attempts: Attempt[] = [];
let dropAfter: string | undefined;
connection.execute = async (...args: unknown[]) => {
  const sql = typeof args[0] === 'string' ? args[0] : '';
  const table = /^\s*insert\s+into\s+["`]?(events_(?:fs|provider|log))\b/i.exec(sql)?.[1];
  if (!table) return execute(...args);
  let result: unknown;
  try {
    result = await execute(...args);
  } catch (err) {
    attempts.push({ table, outcome: (err as Error).message });
    throw err;
  }
  if (table === dropAfter) {
    dropAfter = undefined;
    attempts.push({ table, outcome: 'dropped after the commit' });
    throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
  }
  attempts.push({ table, outcome: 'ok' });
  return result;
};
t.teardown(() => {
  connection.execute = execute;
});

async function stored(table: string, instance: string): Promise<{ n: number; distinct: number }> {
  const [row] = (await execute(`select count(*) as n, count(distinct id) as d from ${table} where instance_id = ?`, [instance])) as {
    n: unknown;
    d: unknown;
  }[];
  return { n: Number(row!.n), distinct: Number(row!.d) };
}

/** Waits (no time limit asserted) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

/** Set when a retry failed: the batch is then retried for ever and the next cases cannot run. */
let stuck = false;

for (const table of ['events_fs', 'events_provider', 'events_log']) {
  t.test(`the connection drops after the INSERT into ${table} committed: the retry stores the rest, nothing doubled`, async (t) => {
    if (stuck) return t.fail('an earlier batch is retried for ever');
    const instance = `node-${table}`;
    const N = 30;
    const from = attempts.length;
    dropAfter = table;
    for (let i = 0; i < N; i++) {
      bus(ta).publish('fs', fsEvent({ instance_id: instance, virtual_path: `/f-${i}` }));
      bus(ta).publish('provider', providerEvent({ instance_id: instance, object_name: `o-${i}` }));
      bus(ta).publish('log', logEvent({ instance_id: instance, message: `m-${i}` }));
    }
    // the retry of the batch writes the dropped table again: wait for that attempt's outcome
    const dropped = () => attempts.findIndex((a, i) => i >= from && a.outcome === 'dropped after the commit');
    await until(() => dropped() >= 0 && attempts.slice(dropped() + 1).some((a) => a.table === table));
    const retry = attempts.slice(dropped() + 1).find((a) => a.table === table)!;
    t.equal(retry.outcome, 'ok', `the retry's INSERT into ${table} ignores the rows stored before the drop`);
    if (retry.outcome !== 'ok') {
      stuck = true; // the batch is retried for ever: nothing more to check
      return;
    }
    await settled(ta);
    for (const each of ['events_fs', 'events_provider', 'events_log']) {
      t.same(await stored(each, instance), { n: N, distinct: N }, `${each}: every event once`);
    }
    t.same(storeOf(ta).stats().queued, 0);
  });
}

import t from 'tap';
import { captureLogger } from '@ferry/core/testing';
import { EventWriter } from '../src/writer.js';
import type { EventStore } from '../src/store.js';
import type { LogEventRow } from '../src/entities.js';

/** A store whose inserts fail while `down` is true. */
function fakeStore() {
  const rows: string[] = [];
  const state = { down: false, inserts: 0 };
  const store = {
    async insert(_kind: string, batch: { id: string }[]) {
      state.inserts++;
      await new Promise((r) => setTimeout(r, 1));
      if (state.down) throw new Error('database unavailable');
      rows.push(...batch.map((r) => r.id));
    },
  } as unknown as EventStore;
  return { store, rows, state };
}

const row = (id: string): LogEventRow => ({ id, event: 5, protocol: 'HTTP', username: 'u', ip: '', message: '', role: '', instance_id: '' });

async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

t.test('a full batch starts a write of the whole queue; a partial one waits for flush_interval or close', async (t) => {
  const { store, rows } = fakeStore();
  const w = new EventWriter(store, { queueSize: 1000, batchSize: 10, flushInterval: 60_000 }, captureLogger().logger);
  for (let i = 0; i < 25; i++) w.add({ kind: 'log', row: row(`e${i}`) });
  await until(() => rows.length === 25);
  t.same(w.stats(), { recorded: 25, queued: 0, dropped: 0 });
  for (let i = 25; i < 28; i++) w.add({ kind: 'log', row: row(`e${i}`) });
  await new Promise((r) => setImmediate(r));
  t.equal(w.stats().queued, 3, 'fewer than batch_size: not written yet');
  await w.close();
  t.equal(rows.length, 28);
  t.same(w.stats(), { recorded: 28, queued: 0, dropped: 0 });
});

t.test('a failed write is retried: nothing lost, the failure logged', async (t) => {
  const { store, rows, state } = fakeStore();
  const cap = captureLogger();
  const w = new EventWriter(store, { queueSize: 1000, batchSize: 5, flushInterval: 30 }, cap.logger);
  state.down = true;
  for (let i = 0; i < 12; i++) w.add({ kind: 'log', row: row(`e${i}`) });
  await until(() => state.inserts >= 2);
  t.equal(rows.length, 0);
  t.equal(w.stats().queued, 12, 'kept while the database is down');
  await until(() => cap.lines.some((l) => l.includes('event search could not write events; retrying')));
  t.pass('the failure is logged');
  state.down = false;
  await until(() => rows.length === 12);
  t.same(
    rows,
    Array.from({ length: 12 }, (_, i) => `e${i}`),
    'written in order once it is back',
  );
  t.same(w.stats(), { recorded: 12, queued: 0, dropped: 0 });
  await w.close();
});

t.test('close() writes the queue; events after close are counted as dropped', async (t) => {
  const { store, rows } = fakeStore();
  const cap = captureLogger();
  const w = new EventWriter(store, { queueSize: 1000, batchSize: 100, flushInterval: 60_000 }, cap.logger);
  for (let i = 0; i < 7; i++) w.add({ kind: 'log', row: row(`e${i}`) });
  await w.close();
  t.equal(rows.length, 7);
  w.add({ kind: 'log', row: row('late') });
  t.same(w.stats(), { recorded: 7, queued: 0, dropped: 1 });
  t.ok(cap.lines.some((l) => l.includes('the recorder is stopped')));
});

t.test('close() with the database down reports what it could not write', async (t) => {
  const { store, state } = fakeStore();
  const cap = captureLogger();
  const w = new EventWriter(store, { queueSize: 1000, batchSize: 100, flushInterval: 60_000 }, cap.logger);
  state.down = true;
  for (let i = 0; i < 3; i++) w.add({ kind: 'log', row: row(`e${i}`) });
  await w.close();
  t.same(w.stats(), { recorded: 0, queued: 3, dropped: 3 });
  t.ok(cap.lines.some((l) => l.includes('event search stopped with events it could not write')));
});

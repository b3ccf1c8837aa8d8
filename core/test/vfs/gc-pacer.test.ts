import t from 'tap';
import { PassThrough, Writable } from 'node:stream';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BULK_ENTRIES, GcPacer, SETTLE_TRIES, gcPacer, heapAndExternalBytes, type Gc } from '../../src/vfs/gc-pacer.js';
import { pump } from '../../src/vfs/pump.js';
import { leaseUploadBuffers } from '../../src/sdk/upload-buffers.js';
import type { WriteHandle } from '../../src/fs/fs.contract.js';

t.test('a young collection per paceBytes of short-lived buffers', async (t) => {
  const runs: string[] = [];
  const pacer = new GcPacer((o) => void runs.push(o?.type ?? 'major'), 100, 0);
  t.ok(pacer.active);
  pacer.note(60);
  t.equal(runs.length, 0, 'not yet');
  pacer.note(40);
  t.same(runs, ['minor'], 'at 100 bytes, at once');
  pacer.note(99);
  t.equal(runs.length, 1);
  pacer.note(250);
  t.equal(runs.length, 2, 'one collection for a large count, the count starts again');
  pacer.note(99);
  t.equal(runs.length, 2);
  t.equal(pacer.runs, 2);
});

t.test('at most one collection per minIntervalMs, however fast the bytes come', async (t) => {
  let clock = 1000;
  let runs = 0;
  const pacer = new GcPacer(
    () => void runs++,
    100,
    20,
    () => clock,
  );
  pacer.note(100);
  t.equal(runs, 1);
  clock += 5;
  pacer.note(300);
  t.equal(runs, 1, '5 ms later: not yet, the bytes are kept');
  clock += 15;
  pacer.note(1);
  t.equal(runs, 2, '20 ms after the last one');
  pacer.note(99);
  t.equal(runs, 2, 'the count started again');
});

t.test('without an exposed gc() nothing happens', async (t) => {
  const pacer = new GcPacer(undefined, 1);
  t.notOk(pacer.active);
  pacer.note(1e9);
  t.equal(pacer.runs, 0);
});

t.test('an upload counts every fresh chunk it stores (not a lent one)', async (t) => {
  const noted: number[] = [];
  const note = gcPacer.note;
  gcPacer.note = (n: number) => void noted.push(n);
  t.teardown(() => (gcPacer.note = note));
  const stored: number[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      stored.push(chunk.length);
      cb();
    },
  });
  const handle = { stream, done: Promise.resolve({ size: 0 }), abort: async () => undefined } as unknown as WriteHandle;
  const source = new PassThrough();
  const done = pump(source, () => null, undefined, handle, new AbortController().signal);
  // a front-end's pooled read buffer, lent to the storage (leaseUploadBuffers): read into again, not garbage
  const ub = leaseUploadBuffers();
  t.teardown(() => ub.close());
  const lent = ub.take().subarray(0, 30);
  ub.lend(lent);
  source.write(Buffer.alloc(10));
  source.write(lent);
  source.end(Buffer.alloc(20));
  await done;
  t.same(stored, [10, 30, 20]);
  t.same(noted, [10, 20], 'the lent chunk is not counted');
});

t.test('a full collection once the heap has grown growthBytes past the last one', async (t) => {
  const runs: string[] = [];
  let used = 100;
  const pacer = new GcPacer(
    (o) => {
      runs.push(o?.type ?? 'major');
      if (!o) used = 150;
    },
    1,
    0,
    () => 0,
    { used: () => used, checkEvery: 2, growthBytes: 100 },
  );
  const majors = () => runs.filter((r) => r === 'major').length;
  /** Two young collections (one heap reading) with the heap at `heap` bytes used. */
  const readAt = (heap: number) => {
    used = heap;
    pacer.note(1);
    pacer.note(1);
    return majors();
  };
  t.equal(readAt(100), 0, 'the first reading only sets the live size');
  t.equal(readAt(199), 0, '99 bytes of growth: not yet');
  used = 200;
  pacer.note(1);
  t.equal(majors(), 0, 'the heap is read every second young collection only');
  pacer.note(1);
  t.same(runs.slice(-2), ['minor', 'major'], '100 bytes of growth: after the young collection');
  t.equal(pacer.majorRuns, 1);
  t.equal(readAt(249), 1, 'growth counts from what the full collection kept (150)');
  t.equal(readAt(250), 2);
});

t.test("V8's own full collection lowers the live size; a larger heap may grow by an eighth", async (t) => {
  let majors = 0;
  let used = 5000;
  const pacer = new GcPacer(
    (o) => void (o === undefined && majors++),
    1,
    0,
    () => 0,
    { used: () => used, checkEvery: 1, growthBytes: 50 },
  );
  pacer.note(1);
  used = 800;
  pacer.note(1);
  t.equal(majors, 0, 'the heap shrank: V8 collected it, 800 is the live size');
  used = 899;
  pacer.note(1);
  t.equal(majors, 0, '99 over 800: under the eighth of 800');
  used = 900;
  pacer.note(1);
  t.equal(majors, 1, 'an eighth over 800: the eighth wins over growthBytes (50)');
});

t.test('no heap watch: young collections only', async (t) => {
  const runs: string[] = [];
  const pacer = new GcPacer((o) => void runs.push(o?.type ?? 'major'), 1, 0);
  for (let i = 0; i < 100; i++) pacer.note(1);
  t.equal(runs.length, 100);
  t.notOk(runs.includes('major'));
});

t.test("with V8's real gc, the full collection frees promoted garbage", async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as Gc;
  const used = () => getHeapStatistics().used_heap_size;
  const pacer = new GcPacer(gc, 1, 0, () => 0, { used, checkEvery: 1, growthBytes: 4 * 1024 * 1024 });
  gc();
  pacer.note(1); // the first reading: the live size
  // 20+ MB of small objects that live across young collections: promoted, as an S3 part's request objects are
  let held: { n: number; s: string }[] | undefined = Array.from({ length: 300_000 }, (_, n) => ({ n, s: `part ${n}` }));
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  const promoted = used();
  t.ok(held.length);
  held = undefined;
  pacer.note(1);
  t.equal(pacer.majorRuns, 1, 'the growth started a full collection');
  t.ok(used() < promoted - 10 * 1024 * 1024, `the garbage is gone: ${(promoted / 1048576).toFixed(1)} -> ${(used() / 1048576).toFixed(1)} MB`);
});

t.test('promoted buffers count: their external bytes start the full collection that frees them', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as Gc;
  const external = () => process.memoryUsage().arrayBuffers;
  const pacer = new GcPacer(gc, 1, 0, () => 0, { used: heapAndExternalBytes, checkEvery: 1, growthBytes: 4 * 1024 * 1024 });
  gc();
  pacer.note(1); // the first reading: the live size
  // 32 chunks of 1 MiB held across two young collections (as gathered WRITEs are): promoted, their bytes outside the heap
  let held: Buffer[] | undefined = Array.from({ length: 32 }, () => Buffer.alloc(1024 * 1024, 1));
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  const promoted = external();
  t.ok(held.length);
  held = undefined;
  gc({ type: 'minor' });
  t.ok(external() > promoted - 8 * 1024 * 1024, 'young collections leave promoted buffers alone');
  pacer.note(1);
  t.equal(pacer.majorRuns, 1, 'the external growth started a full collection');
  // the old generation's buffers are swept on a background thread after the collection
  for (let i = 0; i < 100 && external() >= promoted - 24 * 1024 * 1024; i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(
    external() < promoted - 24 * 1024 * 1024,
    `the chunks are freed: ${(promoted / 1048576).toFixed(1)} -> ${(external() / 1048576).toFixed(1)} MB in buffers`,
  );
});

/** A pacer whose settle() waits `delayMs` and reads the loop's use from `busy` (one value per wait, the last repeated). */
function settlingPacer(busy: number[], delayMs = 2) {
  const runs: string[] = [];
  let waits = 0;
  const pacer = new GcPacer(
    (o) => void runs.push(o?.type ?? 'major'),
    100,
    0,
    () => performance.now(),
    undefined,
    delayMs,
    () => {
      const share = busy[Math.min(waits++, busy.length - 1)]!;
      return () => share;
    },
  );
  return { pacer, runs, waits: () => waits };
}

async function until(cond: () => boolean, ms = 5000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return cond();
}

t.test('bulk work is followed by one full collection once the event loop is idle', async (t) => {
  const { pacer, runs, waits } = settlingPacer([0]);
  pacer.settle(BULK_ENTRIES - 1);
  await new Promise((r) => setTimeout(r, 30));
  t.same(runs, [], 'less than bulk work: nothing');
  pacer.settle(BULK_ENTRIES);
  pacer.settle(BULK_ENTRIES * 10);
  t.ok(await until(() => runs.length > 0), 'a collection follows');
  await new Promise((r) => setTimeout(r, 30));
  t.same(runs, ['major'], 'one full collection for the burst');
  t.equal(pacer.majorRuns, 1);
  t.equal(waits(), 1, 'after one idle wait');
  pacer.settle(BULK_ENTRIES);
  t.ok(await until(() => runs.length === 2), 'the next bulk work gets its own');
});

t.test('a busy event loop puts the collection off until it is idle, or for good after SETTLE_TRIES waits', async (t) => {
  const later = settlingPacer([0.9, 0.5, 0.05]);
  later.pacer.settle(BULK_ENTRIES);
  t.ok(await until(() => later.runs.length > 0), 'collected once idle');
  t.equal(later.waits(), 3, 'after two busy waits and an idle one');

  const never = settlingPacer([1]);
  never.pacer.settle(BULK_ENTRIES);
  t.ok(await until(() => never.waits() >= SETTLE_TRIES), 'it waited');
  await new Promise((r) => setTimeout(r, 50));
  t.equal(never.waits(), SETTLE_TRIES, 'and stopped waiting');
  t.same(never.runs, [], 'without collecting: V8 is left to it');
  never.pacer.settle(BULK_ENTRIES);
  t.ok(await until(() => never.waits() > SETTLE_TRIES), 'the next bulk work waits again');
});

t.test('without an exposed gc() bulk work starts no wait', async (t) => {
  let asked = 0;
  const pacer = new GcPacer(
    undefined,
    100,
    0,
    () => 0,
    undefined,
    1,
    () => {
      asked++;
      return () => 0;
    },
  );
  pacer.settle(BULK_ENTRIES * 2);
  await new Promise((r) => setTimeout(r, 20));
  t.equal(asked, 0);
});

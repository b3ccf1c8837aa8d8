import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadHeapTrim } from '@ferry/heap-trim';
import { IdleSettler, SETTLE_GROWTH_BYTES, SETTLE_MIN_GAP_MS, idleSettler } from '../../src/vfs/idle-settle.js';

// The memory a burst of work left is given back when the server is idle
// (core/src/vfs/idle-settle.ts): a full collection and glibc's malloc_trim,
// once the resident memory grew past what the last settle left, the event
// loop idle over the last check, and not more often than the least gap.

const MB = 1024 * 1024;

/** A settler over fake readings: resident memory, the event loop's busy share, the clock; gc and trim counted. */
function fake() {
  const s = { rss: 100 * MB, busy: 0, now: 0, gcs: 0, trims: 0, afterSettle: 90 * MB };
  const settler = new IdleSettler({
    gc: () => void s.gcs++,
    trim: () => {
      s.trims++;
      s.rss = s.afterSettle;
      return true;
    },
    rss: () => s.rss,
    loopBusy: () => () => s.busy,
    now: () => s.now,
  });
  return { s, settler };
}

t.test('the first idle check settles what starting left; then only after growth, idle, and the least gap', async (t) => {
  const { s, settler } = fake();
  t.equal(settler.check(), true, 'first idle check: settles');
  t.same([s.gcs, s.trims], [1, 0], 'a full collection at once');
  await settler.done;
  t.same([s.gcs, s.trims], [1, 1], 'then the trim');
  t.equal(s.rss, 90 * MB);

  s.now += SETTLE_MIN_GAP_MS + 1;
  s.rss = 90 * MB + SETTLE_GROWTH_BYTES - 1;
  t.equal(settler.check(), false, 'grown less than the threshold: nothing');

  s.rss = 90 * MB + SETTLE_GROWTH_BYTES + 1;
  s.busy = 0.5;
  t.equal(settler.check(), false, 'grown, but the event loop was busy: nothing');

  s.busy = 0.05;
  s.afterSettle = 91 * MB;
  t.equal(settler.check(), true, 'grown and idle: settles');
  await settler.done;
  t.equal(s.gcs, 2);

  s.rss = 120 * MB;
  s.now += 1000;
  t.equal(settler.check(), false, 'grown again at once: waits for the least gap');
  s.now += SETTLE_MIN_GAP_MS;
  t.equal(settler.check(), true, 'then settles');
  await settler.done;
  t.equal(settler.settles, 3);
});

t.test('memory that fell by itself becomes the new floor', async (t) => {
  const { s, settler } = fake();
  settler.check();
  await settler.done;
  s.now += SETTLE_MIN_GAP_MS + 1;
  s.rss = 70 * MB; // V8 or glibc gave memory back on their own
  t.equal(settler.check(), false);
  s.rss = 70 * MB + SETTLE_GROWTH_BYTES + 1;
  t.equal(settler.check(), true, 'growth counted from the lower reading');
});

t.test('the busy share is measured per check, from the previous one', async (t) => {
  const starts: number[] = [];
  let n = 0;
  const settler = new IdleSettler({
    trim: () => true,
    rss: () => 200 * MB,
    loopBusy: () => {
      const id = ++n;
      starts.push(id);
      return () => (id === 2 ? 0.9 : 0);
    },
    now: () => 0,
  });
  settler.start();
  t.teardown(() => settler.stop());
  t.equal(starts.length, 1, 'the first measure starts with the settler');
  t.equal(settler.check(), true, 'idle since the start: settles (no gc exposed: the trim alone)');
  t.equal(starts.length, 2, 'a new measure from this check on');
  t.equal(settler.check(), false, 'the measure since the last check was busy');
  settler.stop();
  t.equal(settler.running, false);
});

t.test('nothing to run (no gc, no trim): never starts', async (t) => {
  const settler = new IdleSettler({ trim: null, rss: () => 0 });
  settler.start();
  t.equal(settler.running, false);
});

t.test("the process's settler: real gc and trim give the pages of freed buffers back", async (t) => {
  t.equal(idleSettler.running, false, 'not started by importing core (ferry serve starts it)');
  if (!loadHeapTrim()) return void t.pass('no heap trim here (FERRY_HEAP_TRIM=off)');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const settler = new IdleSettler({ gc, trim: loadHeapTrim(), rss: () => process.memoryUsage.rss(), loopBusy: () => () => 0 });
  settler.check();
  await settler.done;
  // a burst of 32 KiB buffers (the C allocator's heap), one in 50 still in use
  let burst: Buffer[] | null = Array.from({ length: 4000 }, () => Buffer.allocUnsafeSlow(32 * 1024).fill(7));
  const kept = burst.filter((_, i) => i % 50 === 0);
  const grown = process.memoryUsage.rss();
  burst = null;
  await new Promise((r) => setTimeout(r, SETTLE_MIN_GAP_MS + 50));
  t.equal(settler.check(), true, 'settles');
  await settler.done;
  const after = process.memoryUsage.rss();
  t.ok(grown - after > 60 * MB, `resident memory fell by most of the 125 MB freed (${(grown / MB).toFixed(0)} -> ${(after / MB).toFixed(0)} MB)`);
  t.ok(
    kept.every((b) => b[0] === 7 && b[b.length - 1] === 7),
    'the buffers in use keep their bytes',
  );
});

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { SAMPLE_DUTY, liveBufferBytes, liveBufferGrowth, writeRandomHex } from '../src/memory.js';

t.test('liveBufferGrowth sees a buffer held during the work, not garbage made and dropped', async (t) => {
  const held = await liveBufferGrowth(async () => {
    const big = Buffer.alloc(32 << 20, 1);
    await sleep(1000);
    return big.length;
  });
  t.ok(held.grew >= 32 << 20, `held: grew by ${held.grew}`);
  t.ok(held.samples >= 2, `${held.samples} samples`);
  const dropped = await liveBufferGrowth(async () => {
    for (let i = 0; i < 8; i++) {
      Buffer.alloc(4 << 20, 1);
      await sleep(50);
    }
  });
  // 32 MiB made in all, at most one 4 MiB buffer alive at a sample
  t.ok(dropped.grew < 6 << 20, `dropped: grew by ${dropped.grew}`);
});

t.test('slow samples leave the work most of the main thread', async (t) => {
  // A large heap makes each sample (two full collections) slow: 30 MB of small objects.
  const ballast = Array.from({ length: 400_000 }, (_, n) => ({ n, s: `object ${n}` }));
  const start = performance.now();
  liveBufferBytes();
  const sampleMs = performance.now() - start;
  // work that needs the main thread in 5 ms slices for a second, with 1 ms samples asked for
  let slices = 0;
  const workStart = performance.now();
  const growth = await liveBufferGrowth(async () => {
    while (performance.now() - workStart < 1000) {
      const until = performance.now() + 5;
      while (performance.now() < until);
      slices++;
      await new Promise((r) => setImmediate(r));
    }
  }, 1);
  t.ok(ballast.length);
  t.ok(growth.samples >= 1, `${growth.samples} samples of about ${sampleMs.toFixed(1)} ms`);
  // each sample waits SAMPLE_DUTY times the last one's cost, so several 5 ms slices of work run between two;
  // at a fixed 1 ms interval the work would get one slice per sample
  t.ok(slices >= 3 * growth.samples, `the work ran ${slices} slices beside ${growth.samples} samples (SAMPLE_DUTY ${SAMPLE_DUTY})`);
});

t.test('liveBufferBytes does not count buffers that died just before it was called', async (t) => {
  // After one collection, the dead buffers' memory is freed by a background
  // thread a moment later: read at once, the figure counted the 64 MiB below
  // in 8-12 of 100 rounds here (more on a busy machine), after two in none.
  const base = liveBufferBytes();
  let counted = 0;
  for (let i = 0; i < 100; i++) {
    let held: Buffer[] | undefined = Array.from({ length: 1024 }, () => Buffer.alloc(64 << 10, 1));
    if (held.length !== 1024) throw new Error('not made');
    held = undefined;
    if (liveBufferBytes() - base > 32 << 20) counted++;
  }
  t.equal(counted, 0, 'dead buffers counted in none of 100 rounds');
});

t.test('writeRandomHex writes exactly the size asked, in hex digits', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'testkit-hex-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const size of [0, 1, 1000, (1 << 20) + 3]) {
    const f = path.join(dir, `${size}.txt`);
    writeRandomHex(f, size);
    t.equal(statSync(f).size, size);
    t.match(readFileSync(f, 'latin1'), /^[0-9a-f]*$/);
  }
});

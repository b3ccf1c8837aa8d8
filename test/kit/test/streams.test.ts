import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import t from 'tap';
import { failingStream, randomBytesSeeded, randomSliceSha256, randomStream, sha256Stream } from '../src/index.js';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

t.test('randomStream', async (t) => {
  const a = await sha256Stream(randomStream(300_000, 'seed'));
  const b = await sha256Stream(randomStream(300_000, 'seed'));
  t.same(a, b, 'same size and seed, same bytes');
  t.equal(a.size, 300_000, 'exact size');
  t.not((await sha256Stream(randomStream(300_000, 'other'))).sha256, a.sha256, 'another seed, other bytes');
  const whole = randomBytesSeeded(300_000, 'seed');
  t.equal(sha(whole), a.sha256, 'randomBytesSeeded yields the same bytes');
  t.ok(randomBytesSeeded(1000, 'seed').equals(whole.subarray(0, 1000)), 'a shorter stream is a prefix');
  t.same(await sha256Stream(randomStream(0, 'x')), { sha256: sha(Buffer.alloc(0)), size: 0 }, 'zero bytes');
  t.throws(() => randomStream(-1), RangeError);
});

t.test('randomSliceSha256', async (t) => {
  const whole = randomBytesSeeded(200_000, 's');
  for (const [start, end] of [
    [0, 0],
    [65_535, 65_536],
    [100, 199_999],
    [199_999, 199_999],
    [150_000, 300_000],
  ] as const) {
    const want = whole.subarray(start, end + 1);
    t.same(await randomSliceSha256(200_000, 's', start, end), { sha256: sha(want), size: want.length }, `${start}-${end}`);
  }
});

t.test('sha256Stream and failingStream', async (t) => {
  t.same(await sha256Stream(Readable.from(['ab', 'c'])), { sha256: sha(Buffer.from('abc')), size: 3 }, 'string chunks');
  const boom = new Error('boom');
  let seen = 0;
  const err = await (async () => {
    try {
      for await (const c of failingStream(200_000, boom)) seen += (c as Buffer).length;
    } catch (e) {
      return e;
    }
  })();
  t.equal(err, boom, 'fails with the given error');
  t.equal(seen, 200_000, 'after exactly the given bytes');
});

import t from 'tap';
import { Readable, Writable } from 'node:stream';
import { ReadBufferPool, writeRecycling } from '../../src/vfs/read-buffers.js';

// The download read-buffer pool: larger buffers for a long download while few run, small ones (and the bound) with many.
const KIB = 1024;
const growth = { size: 256 * KIB, perTransfer: 2, after: 128 * KIB };

/** Takes `n` buffers from a lease, giving each back at once (a consumer that keeps up); returns their lengths. */
async function takeGive(lease: ReturnType<ReadBufferPool['lease']>, n: number): Promise<number[]> {
  const sizes: number[] = [];
  for (let i = 0; i < n; i++) {
    const b = await lease.take();
    sizes.push(b.length);
    lease.give(b);
  }
  return sizes;
}

t.test('a long download moves to the grown size once it read `after` bytes', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 3, growth);
  const lease = pool.lease();
  lease.recycling = true;
  const sizes = await takeGive(lease, 6);
  t.same(sizes, [64 * KIB, 64 * KIB, 256 * KIB, 256 * KIB, 256 * KIB, 256 * KIB], 'two small reads, then grown ones');
  t.equal(pool.stats.unpooled, 0);
  t.ok(pool.snapshot().bytes <= pool.maxBytes);
  lease.close();
  const snap = pool.snapshot();
  t.equal(snap.freeBytes, snap.bytes, 'every buffer back in the pool');
});

t.test('with many downloads at once, none grows; a grown one shrinks back when others start', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 3, growth);
  const first = pool.lease();
  first.recycling = true;
  t.equal((await takeGive(first, 4)).at(-1), 256 * KIB, 'alone: grown');
  // 1 MiB holds 2 leases of 2 x 256 KiB: a third one stops the growth
  const others = [pool.lease(), pool.lease()];
  t.same(await takeGive(first, 2), [64 * KIB, 64 * KIB], 'three leases: back to the small size');
  for (const o of others) {
    o.recycling = true;
    t.ok(
      (await takeGive(o, 5)).every((n) => n === 64 * KIB),
      'the others stay small',
    );
  }
  t.ok(pool.snapshot().bytes <= pool.maxBytes, 'the bound holds');
  t.equal(pool.stats.unpooled, 0, 'nothing outside the pool');
  for (const o of others) o.close();
  t.equal((await takeGive(first, 1))[0], 256 * KIB, 'alone again: grown again');
  first.close();
});

t.test('beyond its share of grown buffers, a lease lends small unpooled ones, never grown ones', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 512 * KIB, 2, { size: 128 * KIB, perTransfer: 2, after: 0 });
  const a = pool.lease();
  const held = [await a.take(), await a.take(), await a.take()];
  t.same(
    held.map((b) => b.length),
    [128 * KIB, 128 * KIB, 64 * KIB],
  );
  t.equal(pool.stats.unpooled, 1, 'the third is outside the pool');
  t.equal(pool.snapshot().bytes, 256 * KIB);
  a.close();
  t.equal(pool.snapshot().bytes, 0, 'buffers still out when the lease closed are no longer counted');
});

t.test('at the bound, free grown buffers are lent to small leases rather than dropped (no garbage on top of the pool)', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 8, { size: 256 * KIB, perTransfer: 2, after: 0 });
  const a = pool.lease();
  const grown = [await a.take(), await a.take()];
  t.same(
    grown.map((b) => b.length),
    [256 * KIB, 256 * KIB],
    'alone: grown',
  );
  const x = pool.lease();
  for (let i = 0; i < 8; i++) t.equal((await x.take()).length, 64 * KIB);
  t.equal(pool.snapshot().bytes, 1024 * KIB, 'the pool is at its bound');
  for (const b of grown) a.give(b);
  a.close();
  const y = pool.lease();
  const b = await y.take();
  t.equal(b.length, 256 * KIB, 'a free grown buffer, read into whole');
  t.equal(pool.snapshot().bytes, 1024 * KIB, 'no new buffer');
  t.equal(pool.stats.unpooled, 0);
  y.give(b);
  y.close();
  x.close();
});

t.test('writeRecycling: at most two lease-sized chunks queued on a slow destination; every chunk given back', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 6);
  const lease = pool.lease();
  const chunks = Array.from({ length: 20 }, () => lease.take() as Buffer);
  let queued = 0;
  let maxQueued = 0;
  let received = 0;
  const dest = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _enc, cb) {
      setTimeout(() => {
        received += chunk.length;
        queued -= chunk.length;
        cb();
      }, 2);
    },
  });
  const origWrite = dest.write.bind(dest);
  dest.write = ((chunk: Buffer, cb: () => void) => {
    queued += chunk.length;
    maxQueued = Math.max(maxQueued, queued);
    return origWrite(chunk, cb);
  }) as typeof dest.write;
  writeRecycling(Readable.from(chunks), dest, lease);
  await new Promise((resolve) => dest.once('finish', resolve));
  t.equal(received, 20 * 64 * KIB, 'every byte written');
  t.ok(maxQueued <= 3 * 64 * KIB, `queued at most ${maxQueued / KIB} KiB`);
  lease.close();
  const snap = pool.snapshot();
  t.equal(snap.freeBytes, snap.bytes, 'every pooled chunk came back');
});

t.test('owns(): a chunk read into one of the lease buffers, and nothing else', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 3);
  const lease = pool.lease();
  const b = await lease.take();
  t.ok(lease.owns(b.subarray(10, 20)), 'a view of a taken buffer');
  t.notOk(lease.owns(Buffer.alloc(10)), 'another buffer');
  t.notOk(pool.lease().owns(b), "another lease's buffer");
  lease.close();
});

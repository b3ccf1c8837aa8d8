import { randomBytes } from 'node:crypto';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import t from 'tap';
import { FsErrorCode, ReadBufferPool, type ReadBufferLease } from '@ferry/core';
import { expectFsError } from '@ferry/testkit';
import { LocalFs } from '../src/index.js';

// Reads into lent buffers (ReadOptions.buffers): what an HTTP download does with the pool of sdk/read-buffers.ts.
const KIB = 1024;
const base = t.testdir({});
const root = path.join(base, 'root');
await mkdir(root);
const data = randomBytes(1024 * KIB + 123);
await writeFile(path.join(root, 'f.bin'), data);
const fs = new LocalFs({ root, tempDir: path.join(base, 'tmp') });
const openFds = async () => (await readdir('/proc/self/fd')).length;

/** Consumes a stream, copying each chunk, then giving it back to the lease when `give`. */
async function collect(stream: Readable, lease: ReadBufferLease, give: boolean): Promise<{ bytes: Buffer; chunks: Buffer[] }> {
  const copies: Buffer[] = [];
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    copies.push(Buffer.from(chunk));
    if (give) lease.give(chunk);
  }
  return { bytes: Buffer.concat(copies), chunks };
}

t.test('chunks given back are read into again; the bytes are those of the file', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 3);
  const lease = pool.lease();
  lease.recycling = true;
  const { bytes, chunks } = await collect(await fs.openRead('/f.bin', { buffers: lease }), lease, true);
  t.ok(bytes.equals(data), 'the whole file');
  t.ok(
    chunks.every((c) => c.length <= 64 * KIB),
    'reads of the lent size',
  );
  t.ok(new Set(chunks.map((c) => c.buffer)).size <= 3, 'at most perTransfer distinct buffers');
  t.ok(pool.stats.reused > 10, `buffers reused (${pool.stats.reused})`);
  t.equal(pool.stats.unpooled, 0, 'nothing allocated outside the pool');
  lease.close();
  t.equal(pool.snapshot().freeBytes, pool.snapshot().bytes, 'every buffer back in the pool once closed');
});

t.test('a consumer that keeps its chunks gets distinct buffers (no reuse without give)', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 3);
  const lease = pool.lease();
  const { bytes, chunks } = await collect(await fs.openRead('/f.bin', { buffers: lease }), lease, false);
  t.ok(bytes.equals(data));
  t.ok(Buffer.concat(chunks).equals(data), 'chunks kept by the consumer still hold their bytes');
  t.equal(new Set(chunks.map((c) => c.buffer)).size, chunks.length, 'one buffer per chunk');
  t.equal(pool.stats.reused, 0);
  t.equal(pool.stats.unpooled, chunks.length - 3, 'beyond perTransfer, buffers outside the pool');
  lease.close();
  t.equal(pool.snapshot().bytes, 0, 'buffers never given back are no longer counted');
});

t.test('ranges: exactly the requested bytes, across buffer boundaries', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 2);
  for (const [start, end] of [
    [0, 0],
    [1, 64 * KIB],
    [100_000, 400_001],
    [data.length - 5, data.length - 1],
  ] as const) {
    const lease = pool.lease();
    lease.recycling = true;
    const { bytes } = await collect(await fs.openRead('/f.bin', { start, end, buffers: lease }), lease, true);
    t.ok(bytes.equals(data.subarray(start, end + 1)), `${start}-${end}`);
    lease.close();
  }
});

t.test('the pool bound holds across leases; buffers given back after close are taken in again', async (t) => {
  const pool = new ReadBufferPool(64 * KIB, 4 * 64 * KIB, 3);
  const a = pool.lease();
  const b = pool.lease();
  const taken = [await a.take(), await a.take(), await a.take(), await b.take(), await b.take()];
  t.equal(pool.snapshot().bytes, 4 * 64 * KIB, 'never more than maxBytes');
  t.equal(pool.stats.unpooled, 1, 'the fifth buffer is outside the pool');
  a.close();
  t.equal(pool.snapshot().bytes, 64 * KIB, 'a closed lease with its buffers out: they are no longer counted');
  for (const x of taken.slice(0, 3)) a.give(x);
  t.equal(pool.snapshot().bytes, 4 * 64 * KIB, 'given back after close: pooled again');
  t.equal(pool.snapshot().freeBytes, 3 * 64 * KIB);
  b.give(taken[4]!); // not a pooled buffer: ignored
  b.give(taken[3]!);
  b.close();
  t.equal(pool.snapshot().freeBytes, 4 * 64 * KIB);
});

t.test('destroying the stream midway closes the file', async (t) => {
  const before = await openFds();
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 3);
  const lease = pool.lease();
  lease.recycling = true;
  const s = await fs.openRead('/f.bin', { buffers: lease });
  await new Promise<void>((resolve) => s.once('data', () => resolve()));
  s.destroy();
  await new Promise((resolve) => s.once('close', resolve));
  lease.close();
  t.equal(await openFds(), before, 'no descriptor left open');
});

t.test('confinement is that of every read: a link leading outside is refused', async (t) => {
  const outside = path.join(base, 'outside.bin');
  await writeFile(outside, 'secret');
  await symlink(outside, path.join(root, 'escape.bin'));
  const pool = new ReadBufferPool(64 * KIB, 1024 * KIB, 3);
  await expectFsError(t, fs.openRead('/escape.bin', { buffers: pool.lease() }), FsErrorCode.Escape, 'a link to a file outside the root');
  t.equal(pool.stats.unpooled + pool.snapshot().bytes, 0, 'nothing read');
});

import t from 'tap';
import { chunkStored, leaseUploadBuffers, setUploadBufferSource } from '../../src/sdk/upload-buffers.js';
import { readBufferPool } from '../../src/vfs/read-buffers.js';

// Upload read buffers (sdk/upload-buffers.ts): a chunk lent to the storage is read into again
// once the storage says it is written, and only that very chunk gives its buffer back.

t.test('a stored chunk gives its buffer back: the next take reads into it again', async (t) => {
  const ub = leaseUploadBuffers();
  t.teardown(() => ub.close());
  const a = ub.take();
  const chunk = a.subarray(0, 1000);
  ub.lend(chunk);
  const reused = readBufferPool.stats.reused;
  chunkStored(chunk);
  const b = ub.take();
  t.equal(b.buffer, a.buffer, 'the same memory');
  t.equal(readBufferPool.stats.reused, reused + 1);
  chunkStored(chunk);
  const c = ub.take();
  t.not(c.buffer, a.buffer, 'a second chunkStored of the same chunk gives nothing back twice');
});

t.test('a view of a lent chunk, an unlent chunk and a foreign buffer give nothing back', async (t) => {
  const ub = leaseUploadBuffers();
  t.teardown(() => ub.close());
  const a = ub.take();
  const chunk = a.subarray(0, 4096);
  ub.lend(chunk);
  // a throttle's slice, a writer that stored part of the chunk: the rest may still be queued
  chunkStored(chunk.subarray(0, 100));
  chunkStored(a);
  const foreign = Buffer.alloc(10);
  ub.lend(foreign);
  chunkStored(foreign);
  const b = ub.take();
  t.not(b.buffer, a.buffer, 'still lent: a new buffer to read into');
  chunkStored(chunk);
  t.equal(ub.take().buffer, a.buffer, 'back once the lent chunk itself is stored');
});

t.test('closed while a chunk is lent: the pool takes it when it comes back', async (t) => {
  const before = readBufferPool.snapshot();
  const ub = leaseUploadBuffers();
  const a = ub.take();
  const chunk = a.subarray(0, a.length);
  ub.lend(chunk);
  ub.close();
  t.equal(readBufferPool.snapshot().bytes, before.bytes, 'no longer counted while the storage holds it');
  chunkStored(chunk);
  t.equal(readBufferPool.snapshot().bytes, before.bytes + a.length, 'adopted back into the pool');
  t.equal(readBufferPool.snapshot().freeBytes, before.freeBytes + a.length, 'as a free buffer');
});

t.test('without a pool installed (a plugin tested without the core): plain buffers, nothing given back', async (t) => {
  // (what core's read-buffers.ts installed when it loaded)
  const installed = setUploadBufferSource(undefined);
  t.ok(installed, 'the core installed its pool');
  t.teardown(() => setUploadBufferSource(installed));
  const ub = leaseUploadBuffers();
  const a = ub.take();
  t.ok(a.length > 64 * 1024, 'a buffer larger than a socket read');
  ub.lend(a);
  chunkStored(a);
  t.not(ub.take().buffer, a.buffer, 'a new buffer each time');
  ub.close();
});

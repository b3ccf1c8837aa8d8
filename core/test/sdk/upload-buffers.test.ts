import t from 'tap';
import { chunkStored, leaseUploadBuffers, setUploadBufferSource } from '../../src/sdk/upload-buffers.js';
import { READ_BUFFER_GROWTH, READ_BUFFER_SIZE, READ_BUFFERS_PER_TRANSFER, readBufferPool } from '../../src/vfs/read-buffers.js';

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

t.test('giveBack: a buffer whose bytes were copied elsewhere is read into again, a lent one only once stored', async (t) => {
  const ub = leaseUploadBuffers();
  t.teardown(() => ub.close());
  const a = ub.take();
  ub.giveBack(a.subarray(10, 20));
  t.equal(ub.take().buffer, a.buffer, 'given back through any view of it');
  const b = ub.take();
  t.not(b.buffer, a.buffer);
  ub.giveBack(b);
  ub.giveBack(b);
  t.equal(ub.take().buffer, b.buffer);
  t.not(ub.take().buffer, b.buffer, 'given back twice: still read into once');
  const c = ub.take();
  const lent = c.subarray(0, 100);
  ub.lend(lent);
  ub.giveBack(c);
  t.not(ub.take().buffer, c.buffer, 'lent to a writer: not given back before the writer stored it');
  chunkStored(lent);
  t.equal(ub.take().buffer, c.buffer, 'back once stored');
  ub.giveBack(Buffer.alloc(10));
  t.pass('a foreign buffer is ignored');
});

t.test('grow: false keeps the pool-sized buffers of a long upload; buffers sets how many are pooled', async (t) => {
  t.ok(READ_BUFFER_GROWTH.size > READ_BUFFER_SIZE, 'uploads may otherwise grow');
  const sizes = (options?: { grow?: boolean; buffers?: number }) => {
    const ub = leaseUploadBuffers(options);
    const seen = new Set<number>();
    // every chunk stored as soon as read: a long upload of few buffers
    for (let i = 0; i < 64; i++) {
      const b = ub.take();
      seen.add(b.length);
      ub.lend(b);
      chunkStored(b);
    }
    ub.close();
    return [...seen].sort((x, y) => x - y);
  };
  t.same(sizes({ grow: false }), [READ_BUFFER_SIZE], 'always the pool size');
  t.same(sizes(), [READ_BUFFER_SIZE, READ_BUFFER_GROWTH.size], 'grown by default');

  const held = (options?: { buffers?: number }) => {
    const ub = leaseUploadBuffers({ grow: false, ...options });
    const before = readBufferPool.stats.unpooled;
    const taken = Array.from({ length: 20 }, () => ub.take());
    const unpooled = readBufferPool.stats.unpooled - before;
    for (const b of taken) ub.giveBack(b);
    ub.close();
    return unpooled;
  };
  t.equal(held(), 20 - READ_BUFFERS_PER_TRANSFER, 'those of one download by default');
  t.equal(held({ buffers: 16 }), 4, '16 pooled when asked');
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
  ub.giveBack(a);
  t.not(ub.take().buffer, a.buffer, 'giveBack gives nothing back');
  ub.close();
});

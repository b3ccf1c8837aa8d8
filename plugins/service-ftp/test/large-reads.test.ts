/**
 * large-reads.ts: a plain upload's data connection reads as much as the
 * kernel holds (up to 1 MiB) a system call, stays an ordinary stream
 * (order, end, backpressure), and keeps no large buffer for a small read.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Test } from 'tap';
import { chunkStored, leaseUploadBuffers, startReading, type UploadBuffers } from '@ferry/core';
import { readBufferPool } from '@ferry/core/testing';
import { largeReadOption, withLargeReads } from '../src/large-reads.js';

/** A server accepting with pauseOnConnect and a client connected to it. */
async function pair(t: Test): Promise<{ server: net.Socket; client: net.Socket }> {
  const srv = net.createServer({ pauseOnConnect: true });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => srv.close());
  const accepted = new Promise<net.Socket>((resolve) => srv.once('connection', resolve));
  const client = net.connect((srv.address() as net.AddressInfo).port, '127.0.0.1');
  client.on('error', () => undefined);
  const server = await accepted;
  t.teardown(() => (client.destroy(), server.destroy()));
  return { server, client };
}

/** Upload buffers (closed after the test) that note the sizes of the buffers they give. */
function buffers(t: Test): { ub: UploadBuffers; largest: () => number; smallest: () => number } {
  const ub = leaseUploadBuffers();
  t.teardown(() => ub.close());
  const sizes: number[] = [];
  return {
    ub: {
      ...ub,
      take() {
        const b = ub.take();
        sizes.push(b.length);
        return b;
      },
    },
    largest: () => Math.max(...sizes),
    smallest: () => Math.min(...sizes),
  };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('reads more than 64 KiB at once and delivers every byte in order', async (t) => {
  const { server, client } = await pair(t);
  const data = randomBytes(6 * 1024 * 1024 + 11);
  // the whole send is queued before the server reads: the kernel holds more than a 64 KiB read takes
  client.end(data);
  await sleep(100);
  const b = buffers(t);
  const s = withLargeReads(server, b.ub);
  t.notOk(s === server, 'a new socket owns the connection');
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  t.equal(sha(Buffer.concat(chunks)), sha(data), 'the same bytes in the same order, then the end');
  const largest = Math.max(...chunks.map((c) => c.length));
  t.ok(largest > 64 * 1024, `a read took ${largest} bytes (a plain socket reads 64 KiB at most)`);
  t.ok(largest <= b.largest(), 'no read is over its buffer');
});

t.test('with upload buffers: reads into pooled buffers, read into again once the storage stored them', async (t) => {
  const { server, client } = await pair(t);
  const data = randomBytes(8 * 1024 * 1024 + 5);
  client.end(data);
  await sleep(100);
  const ub = leaseUploadBuffers();
  t.teardown(() => ub.close());
  const before = { ...readBufferPool.stats };
  const s = withLargeReads(server, ub);
  const got = createHash('sha256');
  const memory = new Set<ArrayBufferLike>();
  let large = 0;
  for await (const c of s as AsyncIterable<Buffer>) {
    got.update(c);
    memory.add(c.buffer);
    if (c.length > 64 * 1024) large++;
    // what fs-local does once the chunk is in the file
    chunkStored(c);
  }
  t.equal(got.digest('hex'), sha(data), 'every byte in order, though the buffers were read into again');
  t.ok(large > 0, 'large reads');
  t.ok(readBufferPool.stats.reused > before.reused, 'pooled buffers read into again');
  t.equal(readBufferPool.stats.unpooled, before.unpooled, 'none allocated outside the pool');
  t.ok(memory.size < 8 * 4, `${memory.size} buffers for 8 MiB`);
});

t.test('a consumer that does not read stops the reads (backpressure to the client)', async (t) => {
  const { server, client } = await pair(t);
  const b = buffers(t);
  const s = withLargeReads(server, b.ub);
  let sent = 0;
  const block = randomBytes(256 * 1024);
  const hash = createHash('sha256');
  // the client writes until the connection pushes back
  while (client.write(block)) {
    hash.update(block);
    sent += block.length;
    if (sent > 64 * 1024 * 1024) break;
  }
  hash.update(block);
  sent += block.length;
  await sleep(300);
  t.ok(sent < 64 * 1024 * 1024, 'the client was made to wait');
  t.ok(s.readableLength <= 2 * b.largest(), `the socket holds ${s.readableLength} bytes unread, not everything sent`);
  client.end();
  const got = createHash('sha256');
  let n = 0;
  for await (const c of s) {
    got.update(c as Buffer);
    n += (c as Buffer).length;
  }
  t.equal(n, sent);
  t.equal(got.digest('hex'), hash.digest('hex'));
});

t.test('a small read is copied out: no chunk keeps the large buffer alive', async (t) => {
  const { server, client } = await pair(t);
  const b = buffers(t);
  const s = withLargeReads(server, b.ub);
  const chunks: Buffer[] = [];
  s.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => s.once('end', resolve));
  for (let i = 0; i < 5; i++) {
    client.write(Buffer.alloc(1000, i));
    await sleep(30);
  }
  client.end();
  await ended;
  t.equal(Buffer.concat(chunks).length, 5000);
  t.ok(chunks.length >= 2, 'separate reads');
  for (const c of chunks) t.ok(c.buffer.byteLength < b.smallest(), `a ${c.length}-byte chunk holds ${c.buffer.byteLength} bytes`);
});

t.test('destroying the new socket closes the connection; the old one no longer owns it', async (t) => {
  const { server, client } = await pair(t);
  const s = withLargeReads(server, buffers(t).ub);
  t.ok(server.destroyed, 'the old socket object is spent');
  const closed = new Promise((resolve) => client.once('close', resolve));
  client.resume();
  s.destroy();
  await closed;
  t.pass('the client saw the connection close');
});

t.test('startReading: an accepted, paused socket reads as a default one does', async (t) => {
  const { server, client } = await pair(t);
  client.end('hello');
  startReading(server);
  t.equal(server.readableFlowing, null, 'neither flowing nor paused');
  let got = '';
  for await (const c of server) got += String(c);
  t.equal(got, 'hello');
});

t.test('largeReadOption on a connecting socket (active mode)', async (t) => {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => srv.close());
  const data = randomBytes(3 * 1024 * 1024);
  srv.once('connection', (c) => c.end(data));
  const s: net.Socket = net.connect({ port: (srv.address() as net.AddressInfo).port, host: '127.0.0.1', onread: largeReadOption(() => s, buffers(t).ub) });
  await new Promise((resolve) => s.once('connect', resolve));
  await sleep(100);
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  t.equal(sha(Buffer.concat(chunks)), sha(data));
  t.ok(Math.max(...chunks.map((c) => c.length)) > 64 * 1024, 'large reads');
});

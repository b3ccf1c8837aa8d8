import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import t from 'tap';
import { opensslMissing, selfSignedCert } from '@ferry/testkit';
import { createS3Client } from '../src/s3-client.js';
import { resolveSettings } from '../src/index.js';
import { SOCKET_READ_BUFFER_SIZE, sharedSocketReads, socketReadStats } from '../src/socket-reads.js';
import { BUCKET, s3Unavailable, testOptions } from './fixtures/server.js';

// The S3 clients' sockets read into one buffer shared by the process (socket-reads.ts):
// responses must arrive intact whatever the interleaving of sockets, pauses and reuse.

const BODY = randomBytes(6 * 1024 * 1024 + 12345);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A server answering GET /<n> with the first n bytes of BODY, written in 64 KiB pieces. */
function handler(req: http.IncomingMessage, res: http.ServerResponse) {
  const n = Math.min(Number(req.url!.slice(1)) || BODY.length, BODY.length);
  res.writeHead(200, { 'content-length': n });
  let off = 0;
  const more = () => {
    while (off < n) {
      const end = Math.min(n, off + 64 * 1024);
      const ok = res.write(BODY.subarray(off, end));
      off = end;
      if (!ok) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** GETs `path`; `pauseMs` stops reading for that long after the first chunk (backpressure reaches the socket). */
function get(mod: typeof http | typeof https, port: number, path: string, agent: http.Agent, pauseMs = 0, ca?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = mod.get({ host: '127.0.0.1', port, path, agent, ...(ca ? { ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let paused = false;
      res.on('data', (c: Buffer) => {
        chunks.push(Buffer.from(c));
        if (pauseMs && !paused) {
          paused = true;
          res.pause();
          setTimeout(() => res.resume(), pauseMs);
        }
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

t.test('http: parallel, paused and reused sockets get their bytes intact', async (t) => {
  const server = http.createServer(handler);
  t.teardown(() => server.close());
  const port = await listen(server);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4, onread: sharedSocketReads() });
  t.teardown(() => agent.destroy());
  const before = socketReadStats.reads;
  const sizes = [BODY.length, 3 * 1024 * 1024 + 7, 1, 65537];
  const got = await Promise.all(sizes.map((n, i) => get(http, port, `/${n}`, agent, i === 1 ? 200 : 0)));
  got.forEach((b, i) => t.equal(sha(b), sha(BODY.subarray(0, sizes[i])), `response ${i} (${sizes[i]} bytes)`));
  t.ok(socketReadStats.reads > before, 'the sockets read through the shared buffer');
  // the sockets are kept alive: a second round reuses them
  const again = await Promise.all(sizes.map((n) => get(http, port, `/${n}`, agent)));
  again.forEach((b, i) => t.equal(sha(b), sha(BODY.subarray(0, sizes[i])), `reused socket, response ${i}`));
});

t.test('https: the TLS sockets read through the shared buffer too', { skip: opensslMissing() ?? false }, async (t) => {
  const { key, cert } = await selfSignedCert();
  const server = https.createServer({ key, cert }, handler);
  t.teardown(() => server.close());
  const port = await listen(server);
  const agent = new https.Agent({ keepAlive: true, onread: sharedSocketReads() });
  t.teardown(() => agent.destroy());
  const before = socketReadStats.reads;
  const [a, b] = await Promise.all([get(https, port, `/${BODY.length}`, agent, 0, cert), get(https, port, '/1000000', agent, 100, cert)]);
  t.equal(sha(a), sha(BODY));
  t.equal(sha(b), sha(BODY.subarray(0, 1000000)));
  t.ok(socketReadStats.reads > before);
});

t.test('one buffer of SOCKET_READ_BUFFER_SIZE for the whole process', async (t) => {
  const a = sharedSocketReads();
  const b = sharedSocketReads();
  t.equal(a.buffer, b.buffer);
  t.equal((a.buffer as Buffer).length, SOCKET_READ_BUFFER_SIZE);
});

t.test('the S3 client reads GetObject through the shared buffer', { skip: (await s3Unavailable()) ?? false }, async (t) => {
  const opts = testOptions();
  const client = createS3Client(resolveSettings(opts), 'test');
  t.teardown(() => client.destroy());
  const key = `${opts.key_prefix}socket-reads.bin`;
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: BODY, ContentLength: BODY.length }));
  const before = socketReadStats.reads;
  const out = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  const chunks: Buffer[] = [];
  for await (const c of out.Body as AsyncIterable<Buffer>) chunks.push(c);
  t.equal(sha(Buffer.concat(chunks)), sha(BODY));
  t.ok(socketReadStats.reads > before, 'reads went through the shared buffer');
});

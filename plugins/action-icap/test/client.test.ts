import t from 'tap';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { IcapAgent, IcapServiceError, type ScanRequest, type ScanResult } from '../src/icap/client.js';
import { IcapTimeoutError } from '../src/icap/connection.js';
import { parseIcapUrl } from '../src/icap/endpoint.js';
import { IcapPool } from '../src/icap/pool.js';
import { cIcap, cIcapMissing, deadPort, EICAR, EICAR_THREAT } from './helpers/c-icap.js';
import { startTinyIcapServer } from './helpers/tiny-icap-server.js';

const spoolDir = t.testdir({});
const newAgent = (max = 4) =>
  new IcapAgent(new IcapPool({ maxConnections: max, idleMs: 5000 }), { userAgent: 'ferry-test', maxPreview: 1 << 20, defaultOptionsTtlMs: 60_000, spoolDir });

/** A body of n bytes made of 64 KiB pieces (never held whole). */
function pieces(n: number, byte = 0x61): Readable {
  return Readable.from(
    (function* () {
      const b = Buffer.alloc(64 * 1024, byte);
      for (let i = 0; i < n; i += b.length) yield b.subarray(0, Math.min(b.length, n - i));
    })(),
  );
}
const req = (path: string, data: Buffer | (() => Readable), o: Partial<ScanRequest> = {}): ScanRequest => {
  const size = Buffer.isBuffer(data) ? data.length : (o.size ?? 0);
  return { method: 'RESPMOD', path, size, contentType: 'text/plain', open: async () => (Buffer.isBuffer(data) ? Readable.from([data]) : data()), ...o };
};
const text = async (r: ScanResult) => {
  if (r.outcome !== 'adapted') return undefined;
  const out: Buffer[] = [];
  for await (const p of r.content.open()) out.push(p as Buffer);
  await r.content.dispose();
  return Buffer.concat(out).toString();
};

t.test('c-icap', async (t) => {
  const missing = await cIcapMissing();
  if (missing) return t.plan(0, missing);
  const agent = newAgent();
  t.teardown(() => agent.pool.close());

  t.test('OPTIONS', async (t) => {
    const o = await agent.options(parseIcapUrl(cIcap('avscan')), 5000);
    t.same(o.methods.sort(), ['REQMOD', 'RESPMOD']);
    t.equal(o.preview, 1024);
    t.equal(o.allow204, true);
    t.match(o.istag, /^"CI0001-/);
    t.equal(o.ttl, 3600);
    t.equal(await agent.options(parseIcapUrl(cIcap('avscan')), 5000), o, 'cached');
  });

  for (const method of ['RESPMOD', 'REQMOD'] as const) {
    t.test(`${method}: EICAR is blocked, a clean file passes`, async (t) => {
      const ep = parseIcapUrl(cIcap('avscan'));
      const bad = await agent.scan(ep, req('/in/eicar.com', EICAR, { method, contentType: 'application/octet-stream' }), 5000);
      t.equal(bad.outcome, 'blocked');
      if (bad.outcome === 'blocked') {
        t.equal(bad.threat, EICAR_THREAT);
        t.equal(bad.httpStatus, 403);
      }
      const good = await agent.scan(ep, req('/in/clean.txt', Buffer.from('nothing to see here\n'), { method }), 5000);
      t.same(good, { outcome: 'clean', istag: bad.istag });
    });
  }

  t.test('EICAR after 3 MiB of clean data is found (the body is streamed past the preview)', async (t) => {
    const size = 3 * 1024 * 1024 + EICAR.length;
    const open = () =>
      Readable.from(
        (async function* () {
          yield* pieces(3 * 1024 * 1024);
          yield EICAR;
        })(),
      );
    const r = await agent.scan(parseIcapUrl(cIcap('avscan')), req('/big.bin', open, { size, contentType: 'application/octet-stream' }), 10_000);
    t.equal(r.outcome, 'blocked');
  });

  t.test('echo: 204, and a 200 echoing the message unchanged, are both clean', async (t) => {
    const ep = parseIcapUrl(cIcap('echo'));
    // c-icap's echo answers 204 and 200 (the message sent back as it came) in turn
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const small = await agent.scan(ep, req('/a.txt', Buffer.from('small')), 5000);
      const big = await agent.scan(
        ep,
        req('/b.bin', () => pieces(200_000), { size: 200_000 }),
        5000,
      );
      for (const r of [small, big]) {
        t.equal(r.outcome, 'clean');
        if (r.outcome === 'clean') seen.add(r.echoed ? 'unchanged 200' : '204');
      }
    }
    t.same([...seen].sort(), ['204', 'unchanged 200'], 'both answers met');
    // srv_clamav streams big bodies back with 200 (its "percent data" mode): unchanged, so clean
    const r = await agent.scan(
      parseIcapUrl(cIcap('srv_clamav')),
      req('/c.bin', () => pieces(3 << 20), { size: 3 << 20, contentType: 'application/octet-stream' }),
      10_000,
    );
    t.same(r.outcome, 'clean');
  });

  t.test('dlp: a modified body is an adaptation, spooled for the caller', async (t) => {
    const ep = parseIcapUrl(cIcap('dlp'));
    const r = await agent.scan(ep, req('/memo.txt', Buffer.from('card SECRET-123456 ends\n')), 5000);
    t.equal(r.outcome, 'adapted');
    t.equal(await text(r), 'card [REDACTED] ends\n');
    const clean = await agent.scan(ep, req('/memo2.txt', Buffer.from('nothing secret\n')), 5000);
    t.equal(clean.outcome, 'clean');
  });

  t.test('connections are reused', async (t) => {
    const a = newAgent(1);
    t.teardown(() => a.pool.close());
    const ep = parseIcapUrl(cIcap('avscan'));
    await Promise.all([0, 1, 2, 3].map((i) => a.scan(ep, req(`/x${i}.txt`, Buffer.from(`file ${i}`)), 5000)));
    t.equal(a.pool.openCount('127.0.0.1', 11344), 1, 'one connection served OPTIONS and four scans in turn');
  });

  t.test('a big clean file is scanned with memory flat', async (t) => {
    const n = 64 * 1024 * 1024;
    const before = process.memoryUsage().rss;
    const r = await agent.scan(
      parseIcapUrl(cIcap('avscan')),
      req('/huge.bin', () => pieces(n), { size: n, contentType: 'application/octet-stream' }),
      30_000,
    );
    t.equal(r.outcome, 'clean');
    t.ok(process.memoryUsage().rss - before < 48 * 1024 * 1024, `RSS grew by ${((process.memoryUsage().rss - before) / 1048576).toFixed(1)} MiB`);
  });

  t.test('an unknown service is a service error', async (t) => {
    await t.rejects(agent.scan(parseIcapUrl(cIcap('no-such-service')), req('/a', Buffer.from('a')), 5000), IcapServiceError);
  });
});

t.test('tiny ICAP server', async (t) => {
  const tiny = await startTinyIcapServer();
  t.teardown(() => tiny.close());
  const agent = newAgent();
  t.teardown(() => agent.pool.close());
  const ep = (s: string) => parseIcapUrl(`icap://127.0.0.1:${tiny.port}/${s}`);

  t.test('folded and repeated headers name the threats', async (t) => {
    const r = await agent.scan(ep('folded'), req('/upload.bin', Buffer.from('payload')), 5000);
    t.same(r, { outcome: 'blocked', threat: 'Tiny.Test.Virus', threats: ['Tiny.Test.Virus', 'Tiny.Second.Virus'], httpStatus: 403, istag: '"tiny-1"' });
  });

  t.test('an HTTP 403 inside a RESPMOD answer is a block', async (t) => {
    const r = await agent.scan(ep('forbidden'), req('/doc.txt', Buffer.from('x')), 5000);
    t.match(r, { outcome: 'blocked', threat: 'HTTP 403 from the ICAP service', httpStatus: 403 });
  });

  t.test('preview, 100 Continue, then the rest of the body', async (t) => {
    const body = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz');
    const r = await agent.scan(ep('continue'), req('/p.txt', body), 5000);
    t.equal(r.outcome, 'clean');
    const got = tiny.requests.at(-1)!;
    t.equal(got.headers['preview'], '8');
    t.equal(got.previewBytes, 8);
    t.equal(got.ieof, false);
    t.equal(got.body.toString(), body.toString(), 'preview plus rest is the whole body');
    t.equal(got.headers['allow'], '204');
    t.match(got.headers['encapsulated'], /^req-hdr=0, res-hdr=\d+, res-body=\d+$/);
    const small = await agent.scan(ep('continue'), req('/s.txt', Buffer.from('tiny')), 5000);
    t.equal(small.outcome, 'clean');
    t.equal(tiny.requests.at(-1)!.ieof, true, 'a body within the preview ends with ieof');
    const empty = await agent.scan(ep('continue'), req('/e.txt', Buffer.alloc(0)), 5000);
    t.equal(empty.outcome, 'clean', 'an empty file');
  });

  t.test('a modified body is an adaptation (REQMOD too)', async (t) => {
    const r = await agent.scan(ep('upper'), req('/u.txt', Buffer.from('hello')), 5000);
    t.equal(await text(r), 'HELLO');
    const q = await agent.scan(ep('upper'), req('/u.txt', Buffer.from('again'), { method: 'REQMOD' }), 5000);
    t.equal(await text(q), 'AGAIN');
    t.match(tiny.requests.at(-1)!.headers['encapsulated'], /^req-hdr=0, req-body=\d+$/);
  });

  t.test('Max-Connections and Connection: close are honoured', async (t) => {
    const fresh = newAgent(4);
    t.teardown(() => fresh.pool.close());
    const before = tiny.connections;
    const outcomes = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => fresh.scan(ep('upper'), req(`/m${i}.txt`, Buffer.from('m')), 5000)));
    t.same(
      outcomes.map((o) => o.outcome),
      Array(6).fill('adapted'),
    );
    for (const o of outcomes) if (o.outcome === 'adapted') await o.content.dispose();
    t.ok(tiny.connections - before <= 2, `at most 2 connections opened (${tiny.connections - before}): the server's Max-Connections`);
    const other = newAgent(4);
    t.teardown(() => other.pool.close());
    const c0 = tiny.connections;
    for (let i = 0; i < 3; i++) t.equal((await other.scan(ep('close'), req('/c.txt', Buffer.from('0123456789')), 5000)).outcome, 'clean');
    t.ok(tiny.connections - c0 >= 3, `a closed connection is not reused (${tiny.connections - c0} new)`);
  });

  t.test('a block answered before the body is taken: the rest is not sent, nothing hangs', async (t) => {
    const t0 = Date.now();
    const n = 32 * 1024 * 1024;
    const r = await agent.scan(
      ep('early'),
      req('/big.bin', () => pieces(n), { size: n }),
      10_000,
    );
    t.match(r, { outcome: 'blocked', threat: 'Tiny.Early' });
    t.ok(Date.now() - t0 < 3000, `answered in ${Date.now() - t0} ms`);
    t.equal((await agent.scan(ep('continue'), req('/after.txt', Buffer.from('next')), 5000)).outcome, 'clean', 'the next scan gets a sound connection');
  });

  t.test('a kept-alive connection the server closed is retried once on a new one', async (t) => {
    const a = newAgent(1);
    t.teardown(() => a.pool.close());
    t.equal((await a.scan(ep('flaky'), req('/1.txt', Buffer.from('one')), 5000)).outcome, 'clean');
    const before = tiny.connections;
    t.equal((await a.scan(ep('flaky'), req('/2.txt', Buffer.from('two')), 5000)).outcome, 'clean', 'the second scan succeeds');
    t.equal(tiny.connections - before, 1, 'on a new connection');
    t.equal(
      tiny.requests
        .filter((r) => r.service === 'flaky')
        .at(-1)!
        .body.toString(),
      'two',
      'with the whole body again',
    );
  });

  t.test('errors', async (t) => {
    await t.rejects(agent.scan(ep('error'), req('/e', Buffer.from('e')), 5000), { name: 'IcapServiceError', status: 500 });
    await t.rejects(agent.scan(ep('nomethod'), req('/e', Buffer.from('e')), 5000), /does not support RESPMOD/);
    const t0 = Date.now();
    await t.rejects(agent.scan(ep('silent'), req('/e', Buffer.from('e')), 700), IcapTimeoutError);
    t.ok(Date.now() - t0 < 3000, 'the timeout ends the wait');
    await t.rejects(
      agent.scan(parseIcapUrl(`icap://127.0.0.1:${await deadPort()}/x`), req('/e', Buffer.from('e')), 2000),
      /cannot connect to the ICAP service.*ECONNREFUSED/,
    );
    const backendFails = () =>
      new Readable({
        read() {
          this.destroy(new Error('backend read failed'));
        },
      });
    await t.rejects(agent.scan(ep('upper'), req('/e', backendFails, { size: 10 }), 2000), /backend read failed/);
  });

  t.test('a server that accepts and never answers OPTIONS times out', async (t) => {
    const mute = net.createServer((s) => s.on('error', () => {}).resume());
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => mute.close(() => r())));
    const a = newAgent();
    t.teardown(() => a.pool.close());
    const port = (mute.address() as net.AddressInfo).port;
    await t.rejects(a.scan(parseIcapUrl(`icap://127.0.0.1:${port}/x`), req('/e', Buffer.from('e')), 500), /did not answer within 0.5 s/);
  });
});

t.test('EICAR fixture matches the server script', async (t) => {
  const script = readFileSync(new URL('../../../scripts/servers/start-icap.sh', import.meta.url), 'utf8');
  t.ok(script.includes(EICAR.toString('latin1')), 'the same 68 bytes');
});

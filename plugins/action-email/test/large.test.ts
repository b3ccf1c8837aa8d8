import t from 'tap';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SMTPServer } from 'smtp-server';
import { MailParser } from 'mailparser';
import { TOKENS, type ActionTypeDef } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { randomStream, runAction, sha256Stream } from '@ferry/testkit';

// A large attachment goes from the user's storage into the SMTP DATA stream
// without being held in memory: the receiver here parses the message as a
// stream and only hashes the attachment, so the process's peak RSS shows what
// the sending side keeps.
const SIZE = 96 * 1024 * 1024;
const received: { filename?: string; sha256: string; size: number; rawSize: number }[] = [];
const server = new SMTPServer({
  secure: false,
  disabledCommands: ['STARTTLS'],
  authOptional: true,
  logger: false,
  size: 512 * 1024 * 1024,
  onData(stream, _session, cb) {
    let rawSize = 0;
    stream.on('data', (d: Buffer) => (rawSize += d.length));
    const parser = new MailParser();
    parser.on('data', (data: { type: string; filename?: string; content?: Readable; release?: () => void }) => {
      if (data.type !== 'attachment' || !data.content) return;
      const hash = createHash('sha256');
      let size = 0;
      data.content.on('data', (c: Buffer) => {
        hash.update(c);
        size += c.length;
      });
      data.content.on('end', () => {
        received.push({ filename: data.filename, sha256: hash.digest('hex'), size, rawSize });
        data.release?.();
      });
    });
    parser.on('end', () => {
      if (received.length) received.at(-1)!.rawSize = rawSize;
      cb();
    });
    parser.on('error', (err: Error) => cb(err));
    stream.pipe(parser);
  },
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
t.teardown(() => new Promise<void>((r) => server.close(() => r())));
const port = (server.server.address() as { port: number }).port;

const ta = await createTestApp({
  plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/action-email', config: { max_attachments_size: 256 * 1024 * 1024, timeout: 300 } }],
  config: { smtp: { host: '127.0.0.1', port, from: 'ferry@ferry.test' } },
});
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const def = ta.app.container.resolve<{ actionType(n: number): ActionTypeDef | undefined }>(TOKENS.Plugins).actionType(3)!;
const home = path.join(ta.dataDir, 'homes', 'big');
const r = await ta.inject('POST', '/api/v2/users', {
  token: admin,
  payload: { username: 'big', password: 'big-password-1', status: 1, home_dir: home, permissions: { '/': ['*'] }, filesystem: { provider: 0 } },
});
if (r.statusCode !== 201) throw new Error(r.payload);
mkdirSync(home, { recursive: true });
await pipeline(randomStream(SIZE, 'large-mail'), createWriteStream(path.join(home, 'large.bin')));
const expected = await sha256Stream(randomStream(SIZE, 'large-mail'));

t.test(`a ${SIZE / 1024 / 1024} MiB attachment is streamed: byte-exact, peak RSS flat`, async (t) => {
  global.gc?.();
  const live = () => {
    const m = process.memoryUsage();
    return { rss: m.rss, js: m.heapUsed + m.external };
  };
  const start = live();
  const base = start.rss;
  let peak = base;
  let jsPeak = start.js;
  const timer = setInterval(() => {
    const m = live();
    peak = Math.max(peak, m.rss);
    jsPeak = Math.max(jsPeak, m.js);
  }, 10);
  const started = Date.now();
  try {
    await runAction(def, { recipients: ['big@ferry.test'], subject: 'large', body: 'b', attachments: ['/large.bin'] }, { event: { username: 'big' } });
  } finally {
    clearInterval(timer);
  }
  const grew = (peak - base) / 1024 / 1024;
  t.comment(`sent in ${Date.now() - started} ms; RSS ${Math.round(base / 1048576)} MiB -> peak ${Math.round(peak / 1048576)} MiB (+${grew.toFixed(1)} MiB)`);
  const got = received.at(-1)!;
  t.equal(got.filename, 'large.bin');
  t.equal(got.size, SIZE, 'every byte arrived');
  t.equal(got.sha256, expected.sha256, 'byte-exact (sha256)');
  t.ok(got.rawSize > (SIZE * 4) / 3, `the message carried the base64 body (${got.rawSize} bytes)`);
  t.ok(grew < 64, `peak RSS grew by ${grew.toFixed(1)} MiB (< 64 MiB for a ${SIZE / 1048576} MiB file)`);
  const jsGrew = (jsPeak - start.js) / 1048576;
  t.ok(jsGrew < 64, `peak heap + external memory grew by ${jsGrew.toFixed(1)} MiB (< 64 MiB)`);
});

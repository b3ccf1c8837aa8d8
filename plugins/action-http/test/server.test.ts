/**
 * Through the server: POST /api/v2/eventactions with type 1, and rules that
 * really run the action on upload, with multipart parts streamed from the
 * event user's files on two backends (fs-local home, fs-crypt folder).
 */
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { TOKENS, type ActionExecution, type EventManager } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { randomStream, runAction } from '@ferry/testkit';
import { httpActionDef, type FileSource } from '../src/index.js';
import { parseMultipart, startRecorder } from './recorder.js';

const srv = await startRecorder();
t.teardown(() => srv.close());
const ta = await createTestApp({
  plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }, { name: '@ferry/action-http' }],
  config: { event_manager: { rules_cache_ttl: 0 } },
});
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const mgr = ta.app.container.resolve<EventManager>(TOKENS.EventManager);
const execs: ActionExecution[] = [];
t.teardown(mgr.onExecution((e) => execs.push(e)));
const json = (r: { payload: string }) => JSON.parse(r.payload);
const post = (url: string, payload: unknown) => ta.inject('POST', url, { token: admin, payload });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const home = path.join(ta.dataDir, 'homes', 'ann');
const vault = path.join(ta.dataDir, 'vault');
mkdirSync(home, { recursive: true });
mkdirSync(vault, { recursive: true });
const folder = await post('/api/v2/folders', {
  name: 'vault',
  mapped_path: vault,
  filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'vault-passphrase' } } },
});
if (folder.statusCode !== 201) throw new Error(`folder not created: ${folder.payload}`);
const created = await post('/api/v2/users', {
  username: 'ann',
  password: 'ann-password-1',
  status: 1,
  home_dir: home,
  permissions: { '/': ['*'] },
  virtual_folders: [{ name: 'vault', virtual_path: '/vault', quota_size: -1, quota_files: -1 }],
});
if (created.statusCode !== 201) throw new Error(`user not created: ${created.payload}`);
const token = await ta.userToken('ann', 'ann-password-1');
const upload = (p: string, body: Buffer) =>
  ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent(p)}&mkdir_parents=true`, {
    token,
    payload: body,
    headers: { 'content-type': 'application/octet-stream' },
  });

t.test('POST /api/v2/eventactions: type 1 accepted, secrets encrypted, bad options refused with the field', async (t) => {
  const ok = await post('/api/v2/eventactions', {
    name: 'hook',
    type: 1,
    options: {
      http_config: {
        endpoint: `${srv.base}/api`,
        method: 'POST',
        username: 'u',
        password: { status: 'Plain', payload: 'pw-123456' },
        body: '{{toJson .Name}}',
      },
    },
  });
  t.equal(ok.statusCode, 201, ok.payload);
  const got = json(await ta.inject('GET', '/api/v2/eventactions/hook', { token: admin }));
  t.equal(got.type, 1);
  t.same(got.options.http_config.password, { status: 'AES-256-GCM' }, 'the password is stored encrypted and never returned');
  t.notOk(JSON.stringify(got).includes('pw-123456'));
  for (const [cfg, message] of [
    [{ endpoint: 'ftp://x/y', method: 'POST' }, 'options.http_config: "endpoint" must be an http:// or https:// URL'],
    [{ endpoint: `${srv.base}/x`, method: 'POST', timeout: 0 }, 'options.http_config: "timeout" must be between 1 and 180 seconds'],
    [{ endpoint: `${srv.base}/x`, method: 'GET', body: 'x' }, 'options.http_config: "method" GET sends no body: remove "body" and "parts" or use POST or PUT'],
    [
      { endpoint: `${srv.base}/x`, method: 'POST', parts: [{ name: 'p' }] },
      'options.http_config: "parts[0]" must have a filepath (a file of the event user) or a body',
    ],
    [{ endpoint: `${srv.base}/x`, method: 'POST', body: '{{.Nope' }, /^options\.http_config\.body: invalid template: /],
  ] as const) {
    const r = await post('/api/v2/eventactions', { name: 'bad', type: 1, options: { http_config: cfg } });
    t.equal(r.statusCode, 400, JSON.stringify(cfg));
    if (typeof message === 'string') t.equal(json(r).message, message);
    else t.match(json(r).message, message);
  }
});

t.test('a rule on upload posts a multipart form with the uploaded file and a file of another backend, byte-exact', async (t) => {
  const key = Buffer.concat([Buffer.from('vault key\r\n--\r\n'), randomBytes(3000)]);
  t.equal((await upload('/vault/key.txt', key)).statusCode, 201);
  t.equal(
    (
      await post('/api/v2/eventactions', {
        name: 'post-form',
        type: 1,
        options: {
          http_config: {
            endpoint: `${srv.base}/form/{{.Name}}`,
            method: 'POST',
            timeout: 30,
            headers: [{ key: 'X-Rule', value: '{{.Rule}}' }],
            parts: [
              {
                name: 'meta',
                body: '{"name":{{toJson .Name}},"path":{{toJson .VirtualPath}},"size":{{.FileSize}},"event":"{{toJsonUnquoted .Event}}"}',
                headers: [
                  { key: 'Content-Type', value: 'application/json' },
                  { key: 'X-Part', value: 'meta-{{.Event}}' },
                ],
              },
              { name: 'file', filepath: '{{.VirtualPath}}', headers: [{ key: 'X-Part', value: 'file' }] },
              { name: 'key', filepath: '/vault/key.txt', headers: [{ key: 'Content-Type', value: 'text/plain' }] },
            ],
          },
        },
      })
    ).statusCode,
    201,
  );
  const rule = await post('/api/v2/eventrules', {
    name: 'csv-form',
    trigger: 1,
    conditions: { fs_events: ['upload'], options: { fs_paths: [{ pattern: '/in/*.csv' }] } },
    actions: [{ name: 'post-form', order: 1, relation_options: { execute_sync: true } }],
  });
  t.equal(rule.statusCode, 201, rule.payload);
  const content = Buffer.concat([Buffer.from('a,b\r\n'), randomBytes(200_000), Buffer.from('\r\n--not-a-boundary--\r\n')]);
  const up = await upload('/in/report "q".csv', content);
  t.equal(up.statusCode, 201, up.payload);
  const r = srv.last();
  t.equal(r.url, '/form/ann');
  t.equal(r.headers['x-rule'], 'csv-form');
  t.equal(r.headers['transfer-encoding'], 'chunked', 'the body is streamed (no length computed up front)');
  const parts = parseMultipart(r.body, r.headers['content-type']!);
  t.equal(parts.length, 3);
  t.same(parts[0]!.headers, { 'content-disposition': 'form-data; name="meta"', 'content-type': 'application/json', 'x-part': 'meta-upload' });
  t.same(JSON.parse(parts[0]!.data.toString()), { name: 'ann', path: '/in/report "q".csv', size: content.length, event: 'upload' });
  t.same(parts[1]!.headers, {
    'content-disposition': 'form-data; name="file"; filename="report %22q%22.csv"',
    'x-part': 'file',
    'content-type': 'application/octet-stream',
  });
  t.equal(sha(parts[1]!.data), sha(content), 'the uploaded file, byte-exact');
  t.same(parts[2]!.headers, { 'content-disposition': 'form-data; name="key"; filename="key.txt"', 'content-type': 'text/plain' });
  t.equal(sha(parts[2]!.data), sha(key), 'the file of the fs-crypt folder, decrypted, byte-exact');
});

t.test('a large file is streamed through', async (t) => {
  t.equal(
    (
      await post('/api/v2/eventactions', {
        name: 'post-big',
        type: 1,
        options: { http_config: { endpoint: `${srv.base}/big`, method: 'PUT', parts: [{ name: 'f', filepath: '{{.VirtualPath}}' }] } },
      })
    ).statusCode,
    201,
  );
  t.equal(
    (
      await post('/api/v2/eventrules', {
        name: 'big',
        trigger: 1,
        conditions: { fs_events: ['upload'], options: { fs_paths: [{ pattern: '/big/*' }] } },
        actions: [{ name: 'post-big', order: 1 }],
      })
    ).statusCode,
    201,
  );
  const big = randomBytes(24 * 1024 * 1024);
  t.equal((await upload('/big/blob.bin', big)).statusCode, 201);
  await mgr.idle();
  const r = srv.last();
  t.equal(r.url, '/big');
  const parts = parseMultipart(r.body, r.headers['content-type']!);
  t.equal(parts[0]!.data.length, big.length);
  t.equal(sha(parts[0]!.data), sha(big), '24 MiB, byte-exact');
});

t.test('failures are reported to the rule: a missing file, no event user, a non-2xx answer', async (t) => {
  t.equal(
    (
      await post('/api/v2/eventactions', {
        name: 'missing-file',
        type: 1,
        options: { http_config: { endpoint: `${srv.base}/never`, method: 'POST', parts: [{ name: 'f', filepath: '/no/such.txt' }] } },
      })
    ).statusCode,
    201,
  );
  t.equal(
    (
      await post('/api/v2/eventactions', {
        name: 'server-error',
        type: 1,
        options: { http_config: { endpoint: `${srv.base}/status/500`, method: 'POST', body: '{{.Event}}' } },
      })
    ).statusCode,
    201,
  );
  t.equal(
    (
      await post('/api/v2/eventrules', {
        name: 'on-txt',
        trigger: 1,
        conditions: { fs_events: ['upload'], options: { fs_paths: [{ pattern: '/t/*.txt' }] } },
        actions: [
          { name: 'missing-file', order: 1 },
          { name: 'server-error', order: 2 },
        ],
      })
    ).statusCode,
    201,
  );
  t.equal((await post('/api/v2/eventrules', { name: 'manual', trigger: 6, actions: [{ name: 'post-form', order: 1 }] })).statusCode, 201);
  const before = srv.requests.length;
  execs.length = 0;
  t.equal((await upload('/t/a.txt', Buffer.from('x'))).statusCode, 201);
  t.equal((await post('/api/v2/eventrules/run/manual', {})).statusCode, 202);
  await mgr.idle();
  const byAction = Object.fromEntries(execs.map((e) => [e.action, e]));
  t.match(byAction['missing-file'], {
    ok: false,
    error: /^HTTP POST http:\/\/127\.0\.0\.1:\d+\/never: cannot read the file of part "f" \(\/no\/such\.txt\): /,
  });
  t.match(byAction['server-error'], { ok: false, error: /answered 500 Internal Server Error: failure body 500$/ });
  t.match(byAction['post-form'], { ok: false, error: /file parts need the event's user and this execution has none \(trigger 6\)$/ });
  t.equal(srv.requests.length - before, 1, 'only the 500 request was sent');
});

t.test('memory stays flat: a 256 MiB file part is streamed, not buffered', async (t) => {
  const SIZE = 256 * 1024 * 1024;
  await pipeline(randomStream(SIZE, 'big-part'), createWriteStream(path.join(home, 'huge.bin')));
  const def = httpActionDef({ allowLinkLocal: false, files: () => ta.app.container.resolve<FileSource>(TOKENS.UserFiles) });
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  try {
    await runAction(
      def,
      { endpoint: `${srv.base}/hash`, method: 'POST', timeout: 120, parts: [{ name: 'f', filepath: '{{.VirtualPath}}' }] },
      { event: { username: 'ann', virtual_path: '/huge.bin', file_size: SIZE } },
    );
  } finally {
    clearInterval(sampler);
  }
  const r = srv.last();
  t.equal(r.url, '/hash');
  const boundary = /boundary=(.+)$/.exec(r.headers['content-type']!)![1]!;
  const expected = createHash('sha256');
  expected.update(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  for await (const c of randomStream(SIZE, 'big-part')) expected.update(c as Buffer);
  expected.update(`\r\n--${boundary}--\r\n`);
  t.equal(r.sha256, expected.digest('hex'), 'the server received the exact multipart body');
  const grew = (peak - before) / 1024 / 1024;
  t.ok(grew < 96, `peak RSS grew by ${grew.toFixed(1)} MiB while sending 256 MiB`);
});

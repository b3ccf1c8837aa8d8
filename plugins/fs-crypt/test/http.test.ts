import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createTestApp } from '@ferry/core/testing';
import { listAll, readFile as readFsFile, rejectionOf } from '@ferry/testkit';
import { CryptFs, format } from '../src/index.js';
import { processTag } from '@ferry/core';

// A real user on provider 4 through the HTTP file API, with both local-root
// plugins loaded by the core's plugin loader: what the client sees is
// plaintext (sizes, ranges, content), what lies on disk is ciphertext, and
// the passphrase is stored as an encrypted Secret that the core decrypts
// for the backend.

const ta = await createTestApp({
  plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }],
  // resumable (TUS) uploads on, in chunks of at most 1 MiB
  config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] } },
});
t.teardown(() => ta.close());

const PASS = `crypt-pass-${randomUUID()}`;
const PASSWORD = 'crypt-user-password-1';
const home = path.join(ta.dataDir, 'homes', 'cara');
mkdirSync(home, { recursive: true });
const admin = await ta.adminToken();
const q = encodeURIComponent;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sql = (query: string, params: unknown[] = []) => ta.app.orm.em.fork().getConnection().execute(query, params) as Promise<Record<string, unknown>[]>;

const created = await ta.inject('POST', '/api/v2/users', {
  token: admin,
  payload: {
    username: 'cara',
    password: PASSWORD,
    home_dir: home,
    permissions: { '/': ['*'] },
    filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: PASS } } },
  },
});
if (created.statusCode !== 201) throw new Error(`user not created: ${created.payload}`);
const token = await ta.userToken('cara', PASSWORD);

// A recognisable plaintext longer than three 64 KiB records, so ranges cross record boundaries.
const MARKER = 'TOP-SECRET-PLAINTEXT-';
const big = Buffer.concat([Buffer.from(MARKER.repeat(5000)), randomBytes(100_000)]);
const small = Buffer.from(`${MARKER}small`);

const upload = (p: string, body: Buffer) =>
  ta.inject('POST', `/api/v2/user/files/upload?path=${q(p)}`, { token, payload: body, headers: { 'content-type': 'application/octet-stream' } });
const download = (p: string, headers: Record<string, string> = {}) => ta.inject('GET', `/api/v2/user/files?path=${q(p)}`, { token, headers });
const usage = async () => {
  const r = await ta.inject('GET', '/api/v2/users/cara', { token: admin });
  return JSON.parse(r.payload) as { used_quota_size: number; used_quota_files: number };
};

t.test('upload through /user/files/upload stores ciphertext only', async (t) => {
  const r = await upload('/big.bin', big);
  t.equal(r.statusCode, 201, r.payload);
  t.equal((await upload('/small.txt', small)).statusCode, 201);
  const stored = readFileSync(path.join(home, 'big.bin'));
  t.equal(stored.length, format.cipherSize(big.length), 'stored size is the ciphertext size');
  t.not(stored.length, big.length);
  t.equal(stored.subarray(0, 8).toString('ascii'), 'FERRYCRY', 'the encrypted format');
  t.notOk(stored.includes(MARKER), 'the plaintext appears nowhere on disk');
  t.notOk(stored.includes(big.subarray(big.length - 4096)), 'not even the random tail');
  t.notOk(readFileSync(path.join(home, 'small.txt')).includes(MARKER));
  t.same(readdirSync(path.join(ta.dataDir, 'uploads-tmp', processTag())), [], 'nothing left in the temp area');
});

t.test('a resumable (TUS) upload is encrypted too: the completed plain file is streamed through the encryption, never moved into place', async (t) => {
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const tus = { 'tus-resumable': '1.0.0' };
  const created = await ta.inject('POST', '/api/v2/user/chunked-uploads', {
    token,
    headers: { ...tus, 'upload-length': String(big.length), 'upload-metadata': `path ${b64('/tus.bin')}` },
  });
  t.equal(created.statusCode, 201, created.payload);
  const r = await ta.inject('PATCH', String(created.headers.location), {
    token,
    payload: big,
    headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
  });
  t.equal(r.statusCode, 204, r.payload);
  const stored = readFileSync(path.join(home, 'tus.bin'));
  t.equal(stored.subarray(0, 8).toString('ascii'), 'FERRYCRY', 'the encrypted format');
  t.notOk(stored.includes(MARKER), 'no plaintext on disk');
  t.same(sha((await download('/tus.bin')).rawPayload), sha(big), 'reads back as uploaded');
  t.same(readdirSync(path.join(ta.config.common.temp_dir, 'chunked-uploads')), [], 'the chunk store is empty');
  // (the next tests count the files)
  t.equal((await ta.inject('DELETE', `/api/v2/user/files?path=${q('/tus.bin')}`, { token })).statusCode, 200);
});

t.test('listing reports plaintext sizes', async (t) => {
  const r = await ta.inject('GET', '/api/v2/user/dirs?path=/', { token });
  t.equal(r.statusCode, 200, r.payload);
  const entries = (JSON.parse(r.payload) as { name: string; size: number }[]).map((e) => [e.name, e.size]).sort();
  t.same(entries, [
    ['big.bin', big.length],
    ['small.txt', small.length],
  ]);
  const u = await usage();
  t.equal(u.used_quota_size, big.length + small.length, 'quota counts plaintext bytes');
  t.equal(u.used_quota_files, 2);
});

t.test('whole and ranged downloads decrypt', async (t) => {
  const whole = await download('/big.bin');
  t.equal(whole.statusCode, 200);
  t.equal(whole.headers['content-length'], String(big.length));
  t.equal(sha(whole.rawPayload), sha(big), 'whole file');
  const ranges: [string, number, number][] = [
    ['bytes=65530-131080', 65530, 131080],
    ['bytes=0-0', 0, 0],
    [`bytes=${big.length - 100}-`, big.length - 100, big.length - 1],
    ['bytes=-70000', big.length - 70000, big.length - 1],
    ['bytes=131072-196607', 131072, 196607],
  ];
  for (const [range, start, end] of ranges) {
    const r = await download('/big.bin', { range });
    t.equal(r.statusCode, 206, range);
    t.equal(r.headers['content-range'], `bytes ${start}-${end}/${big.length}`, `${range}: Content-Range`);
    t.equal(r.headers['content-length'], String(end - start + 1), `${range}: Content-Length`);
    t.ok(r.rawPayload.equals(big.subarray(start, end + 1)), `${range}: the right plaintext bytes`);
  }
  const bad = await download('/big.bin', { range: `bytes=${big.length}-` });
  t.equal(bad.statusCode, 416, 'a range past the plaintext end');
  t.equal(bad.headers['content-range'], `bytes */${big.length}`);
});

t.test('multipart upload and copy keep files encrypted', async (t) => {
  const boundary = '----ferrycrypt';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="filenames"; filename="m.txt"\r\nContent-Type: text/plain\r\n\r\n`),
    small,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const r = await ta.inject('POST', '/api/v2/user/files?path=/', {
    token,
    payload: body,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  });
  t.equal(r.statusCode, 201, r.payload);
  t.notOk(readFileSync(path.join(home, 'm.txt')).includes(MARKER), 'multipart upload stored encrypted');
  const c = await ta.inject('POST', `/api/v2/user/file-actions/copy?path=${q('/big.bin')}&target=${q('/copy.bin')}`, { token });
  t.equal(c.statusCode, 200, c.payload);
  t.equal(sha((await download('/copy.bin')).rawPayload), sha(big), 'the copy decrypts');
  t.notOk(readFileSync(path.join(home, 'copy.bin')).includes(MARKER));
});

t.test('the passphrase is stored as an encrypted Secret and is what encrypts the files', async (t) => {
  const api = JSON.parse((await ta.inject('GET', '/api/v2/users/cara', { token: admin })).payload) as {
    filesystem: { provider: number; cryptconfig: { passphrase: Record<string, unknown> } };
  };
  t.equal(api.filesystem.provider, 4);
  t.same(api.filesystem.cryptconfig.passphrase, { status: 'AES-256-GCM' }, 'the API shows the status only');
  const row = (await sql('select filesystem from users where username = ?', ['cara']))[0]!;
  const fsCol = typeof row.filesystem === 'string' ? row.filesystem : JSON.stringify(row.filesystem);
  t.notOk(fsCol.includes(PASS), 'no plaintext passphrase in the database');
  const stored = (JSON.parse(fsCol) as { cryptconfig: { passphrase: { status: string; payload?: string } } }).cryptconfig.passphrase;
  t.equal(stored.status, 'AES-256-GCM', 'stored encrypted');
  t.ok(stored.payload && stored.payload.length > 0 && stored.payload !== PASS, 'with an encrypted payload');

  const tmp = path.join(ta.dataDir, 'check-tmp');
  const right = new CryptFs({ root: home, tempDir: tmp, passphrase: PASS });
  t.equal(sha(await readFsFile(right, '/big.bin')), sha(big), 'the files open with the passphrase given at creation');
  const wrong = new CryptFs({ root: home, tempDir: tmp, passphrase: `${PASS}-not` });
  t.ok(await rejectionOf(readFsFile(wrong, '/small.txt')), 'and not with another one');
});

t.test('crash leftovers beside the files stay hidden through HTTP', async (t) => {
  // as left by a process killed while copying an upload across devices
  const leftover = `.ferry-tmp-${randomUUID()}`;
  writeFileSync(path.join(home, leftover), randomBytes(70_000));
  const list = await ta.inject('GET', '/api/v2/user/dirs?path=/', { token });
  t.notOk(
    (JSON.parse(list.payload) as { name: string }[]).some((e) => e.name.startsWith('.ferry-tmp-')),
    'not listed',
  );
  const r = await download(`/${leftover}`);
  t.equal(r.statusCode, 403, 'not downloadable');
  t.match(JSON.parse(r.payload), { message: /reserved/, error: 'Forbidden' });
  const w = await upload('/.ferry-tmp-mine', small);
  t.equal(w.statusCode, 403, 'the prefix cannot be uploaded to');
  t.notOk(existsSync(path.join(home, '.ferry-tmp-mine')));
  await ta.inject('PUT', '/api/v2/quotas/users/cara/usage', { token: admin, payload: { used_quota_size: 1, used_quota_files: 1 } });
  t.equal((await ta.inject('POST', '/api/v2/quotas/users/cara/scan', { token: admin })).statusCode, 202);
  let u = await usage();
  for (let i = 0; i < 250 && u.used_quota_files === 1; i++) {
    await sleep(20);
    u = await usage();
  }
  const files = await listAll(new CryptFs({ root: home, tempDir: path.join(ta.dataDir, 'check-tmp'), passphrase: PASS }), '/');
  const plainTotal = files.entries.reduce((s, e) => s + e.size, 0);
  t.equal(files.entries.length, 4, 'big.bin, small.txt, m.txt, copy.bin');
  t.equal(u.used_quota_files, 4, 'a quota scan does not count the leftover');
  t.equal(u.used_quota_size, plainTotal, 'and sums the plaintext sizes of the real files');
});

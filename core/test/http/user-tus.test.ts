import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';

// Resumable uploads of signed-in users (an addition to the API): /api/v2/user/chunked-uploads,
// the same TUS implementation as /api/v2/shares-chunked-uploads (shares-tus.test.ts).
const ta = await fileApp({ config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] } } });
t.teardown(() => ta.close());
const home = await addUser(ta, { username: 'utus', filters: { max_upload_file_size: 3 * 1024 * 1024 } });
const roHome = await addUser(ta, { username: 'utus-ro', permissions: { '/': ['list', 'download', 'upload'] } });
await addUser(ta, { username: 'utus-other' });
mkdirSync(path.join(home, 'in'));
writeFileSync(path.join(roHome, 'exists.txt'), 'old');
const token = await ta.userToken('utus', PASSWORD);
const roToken = await ta.userToken('utus-ro', PASSWORD);
const otherToken = await ta.userToken('utus-other', PASSWORD);
const MB = 1024 * 1024;
const URL_ = '/api/v2/user/chunked-uploads';

const json = (r: { payload: string }) => JSON.parse(r.payload);
const meta = (m: Record<string, string | undefined>) =>
  Object.entries(m)
    .map(([k, v]) => (v === undefined ? k : `${k} ${Buffer.from(v).toString('base64')}`))
    .join(',');
const TUS = { 'tus-resumable': '1.0.0' };
const OCTETS = { 'content-type': 'application/offset+octet-stream' };
const create = (
  length: number | undefined,
  m: Record<string, string | undefined>,
  o: { headers?: Record<string, string>; payload?: Buffer; token?: string } = {},
) =>
  ta.inject('POST', URL_, {
    token: o.token ?? token,
    payload: o.payload,
    headers: { ...TUS, ...(length === undefined ? {} : { 'upload-length': String(length) }), 'upload-metadata': meta(m), ...(o.headers ?? {}) },
  });
const patch = (loc: string, offset: number, body: Buffer, headers: Record<string, string> = {}, tok = token) =>
  ta.inject('PATCH', loc, { token: tok, payload: body, headers: { ...TUS, 'upload-offset': String(offset), ...OCTETS, ...headers } });
const head = (loc: string, tok = token) => ta.inject('HEAD', loc, { token: tok, headers: TUS });
const upload = (p: string, body: Buffer) =>
  ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent(p)}`, {
    token,
    payload: body,
    headers: { 'content-type': 'application/octet-stream' },
  });
const tmpFiles = () => readdirSync(path.join(ta.config.common.temp_dir, 'chunked-uploads'));
const pattern = (n: number) => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 13) % 256;
  return b;
};

t.test('discovery without credentials: termination is offered', async (t) => {
  const r = await ta.inject('OPTIONS', URL_);
  t.equal(r.statusCode, 200, r.payload);
  t.match(r.headers, { 'tus-version': '1.0.0', 'tus-extension': 'creation,creation-with-upload,termination', 'tus-max-chunk-size': String(MB) });
});

t.test('create, PATCH in chunks with a bearer token: nothing visible before the last byte, then the file with its mtime', async (t) => {
  const data = pattern(MB + 500);
  let r = await create(data.length, { path: '/in/big.bin', mtime: '1700000000000' });
  t.equal(r.statusCode, 201, r.payload);
  const loc = String(r.headers.location);
  t.match(loc, /^\/api\/v2\/user\/chunked-uploads\/[A-Za-z0-9_-]{22}$/);
  t.equal(r.headers['upload-offset'], '0');
  r = await patch(loc, 0, data.subarray(0, MB));
  t.equal(r.statusCode, 204, r.payload);
  t.equal(r.headers['upload-offset'], String(MB));
  t.notOk(existsSync(path.join(home, 'in', 'big.bin')), 'no half-written file');
  r = await patch(loc, 0, data.subarray(MB));
  t.equal(r.statusCode, 409, 'offset mismatch');
  t.match(json(r), { message: /the upload is at 1048576/, error: 'Conflict' });
  r = await patch(loc, MB, data.subarray(MB), { 'content-type': 'application/octet-stream' });
  t.equal(r.statusCode, 415);
  t.match(json(r), { message: /offset\+octet-stream/, error: String });
  t.equal((await head(loc)).headers['upload-offset'], String(MB), 'unchanged by refused chunks');
  r = await patch(loc, MB, data.subarray(MB));
  t.equal(r.statusCode, 204, r.payload);
  t.same(readFileSync(path.join(home, 'in', 'big.bin')), data);
  t.equal(statSync(path.join(home, 'in', 'big.bin')).mtimeMs, 1700000000000);
  t.equal((await head(loc)).statusCode, 404, 'a finished upload is gone');
  t.same(tmpFiles(), []);
  // on local storage the completed file is moved into place, not copied: it gets the mode of any upload
  t.equal((await upload('/in/plain.bin', Buffer.from('x'))).statusCode, 201);
  t.equal(statSync(path.join(home, 'in', 'big.bin')).mode & 0o777, statSync(path.join(home, 'in', 'plain.bin')).mode & 0o777, "not the store's 0600");
});

t.test('the web session cookie with its CSRF token; creation-with-upload and mkdir_parents', async (t) => {
  const login = await ta.server.inject({ method: 'POST', url: '/api/v2/user/web-session', payload: { username: 'utus', password: PASSWORD } });
  t.equal(login.statusCode, 200, login.payload);
  const setCookie = login.headers['set-cookie'];
  const cookie = String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0]!;
  const csrf = String(json(login).csrf_token);
  const headers = { ...TUS, cookie, 'upload-length': '5', 'upload-metadata': meta({ path: '/web/deep/hello.txt', mkdir_parents: 'true' }), ...OCTETS };
  let r = await ta.server.inject({ method: 'POST', url: URL_, headers, payload: Buffer.from('hello') });
  t.equal(r.statusCode, 403, 'no CSRF token');
  t.match(json(r).message, /X-CSRF-Token/);
  r = await ta.server.inject({ method: 'POST', url: URL_, headers: { ...headers, 'x-csrf-token': csrf }, payload: Buffer.from('hello') });
  t.equal(r.statusCode, 201, r.payload);
  t.equal(r.headers['upload-offset'], '5');
  t.equal(readFileSync(path.join(home, 'web', 'deep', 'hello.txt'), 'utf8'), 'hello');
  // HEAD needs no CSRF token; a PATCH does
  r = await ta.server.inject({
    method: 'POST',
    url: URL_,
    headers: { ...TUS, cookie, 'x-csrf-token': csrf, 'upload-length': '4', 'upload-metadata': meta({ path: 'c.txt' }) },
  });
  const loc = String(r.headers.location);
  t.equal((await ta.server.inject({ method: 'HEAD', url: loc, headers: { ...TUS, cookie } })).headers['upload-offset'], '0');
  const body = { ...TUS, cookie, 'upload-offset': '0', ...OCTETS };
  t.equal((await ta.server.inject({ method: 'PATCH', url: loc, headers: body, payload: Buffer.from('abcd') })).statusCode, 403);
  t.equal((await ta.server.inject({ method: 'PATCH', url: loc, headers: { ...body, 'x-csrf-token': csrf }, payload: Buffer.from('abcd') })).statusCode, 204);
  t.equal(readFileSync(path.join(home, 'c.txt'), 'utf8'), 'abcd');
});

t.test('refusals: credentials, metadata, permissions, sizes, unknown uploads, another user', async (t) => {
  const cases: [Awaited<ReturnType<typeof create>>, number, RegExp][] = [
    [await ta.inject('POST', URL_, { headers: { ...TUS, 'upload-length': '1', 'upload-metadata': meta({ path: 'a' }) } }), 401, /./],
    [await create(undefined, { path: 'a' }), 400, /Upload-Length/],
    [await create(1, {}), 400, /"path" is required/],
    [await create(1, { path: 'a', mtime: 'noon' }), 400, /mtime/],
    [await create(1, { path: 'a', mkdir_parents: 'maybe' }), 400, /mkdir_parents/],
    [await create(1, { path: 'a' }, { headers: { 'upload-metadata': 'path a b c' } }), 400, /Upload-Metadata/],
    [await create(1, { path: 'a' }, { payload: Buffer.from('a'), headers: { 'content-type': 'text/plain' } }), 415, /offset\+octet-stream/],
    [await create(1, { path: '/in' }), 400, /is a directory/],
    [await create(1, { path: '/nodir/x' }), 404, /mkdir_parents/],
    [await create(4 * MB, { path: 'huge' }), 413, /maximum upload size/],
    [await create(1, { path: 'exists.txt' }, { token: roToken }), 403, /overwrit/],
    [await create(1, { path: 'new/x.txt', mkdir_parents: 'true' }, { token: roToken }), 403, /./],
    [await patch(`${URL_}/unknownunknownunknown1`, 0, Buffer.alloc(1)), 404, /unknown or expired/],
  ];
  for (const [r, status, re] of cases) {
    t.equal(r.statusCode, status, r.payload);
    t.match(json(r), { message: re, error: String });
  }
  t.equal((await head(`${URL_}/unknownunknownunknown1`)).statusCode, 404, 'HEAD of an unknown upload');
  t.notOk(existsSync(path.join(roHome, 'new')), 'no directory made without create_dirs');
  // a new file where only upload is allowed is fine
  t.equal((await create(2, { path: 'fresh.txt' }, { token: roToken, payload: Buffer.from('ok'), headers: OCTETS })).statusCode, 201);
  t.equal(readFileSync(path.join(roHome, 'fresh.txt'), 'utf8'), 'ok');

  // quota
  await updateUser(ta, 'utus', { quota_size: 100 });
  const q = await create(200, { path: 'q.bin' });
  t.equal(q.statusCode, 413);
  t.match(json(q).message, /quota/);
  await updateUser(ta, 'utus', { quota_size: 0 });

  // an upload is its user's alone: unknown to anyone else, share routes included
  const r = await create(10, { path: 'mine.bin' });
  const loc = String(r.headers.location);
  const id = loc.split('/').pop()!;
  t.equal((await head(loc, otherToken)).statusCode, 404);
  t.equal((await patch(loc, 0, Buffer.alloc(10), {}, otherToken)).statusCode, 404);
  t.equal((await ta.inject('DELETE', loc, { token: otherToken, headers: TUS })).statusCode, 404);
  t.equal((await ta.inject('HEAD', `/api/v2/shares-chunked-uploads/${id}`, { headers: TUS })).statusCode, 404);
  t.equal((await head(loc)).statusCode, 200, 'still there for its user');
});

t.test('the last chunk when the quota shrank meanwhile: refused, nothing visible, nothing kept', async (t) => {
  const before = tmpFiles();
  const r = await create(1000, { path: '/in/late-quota.bin' });
  const loc = String(r.headers.location);
  t.equal((await patch(loc, 0, pattern(500))).statusCode, 204);
  await updateUser(ta, 'utus', { quota_size: 600 });
  t.teardown(() => updateUser(ta, 'utus', { quota_size: 0 }));
  const last = await patch(loc, 500, pattern(1000).subarray(500));
  t.equal(last.statusCode, 413, last.payload);
  t.match(json(last), { message: /quota/, error: String });
  t.notOk(existsSync(path.join(home, 'in', 'late-quota.bin')), 'no file');
  t.same(tmpFiles(), before, 'the upload and its bytes are gone');
  t.equal((await head(loc)).statusCode, 404);
});

t.test('a user with an upload bandwidth limit: the completed file is streamed through the throttle, byte-identical', async (t) => {
  const slowHome = await addUser(ta, { username: 'utus-slow', upload_bandwidth: 100_000 });
  const slow = await ta.userToken('utus-slow', PASSWORD);
  const data = pattern(300_000);
  const r = await create(data.length, { path: '/slow.bin' }, { token: slow, payload: data, headers: OCTETS });
  t.equal(r.statusCode, 201, r.payload);
  t.same(readFileSync(path.join(slowHome, 'slow.bin')), data);
});

t.test('termination: DELETE forgets the upload and its bytes', async (t) => {
  const before = tmpFiles();
  const r = await create(10, { path: 'cancelled.bin' });
  const loc = String(r.headers.location);
  t.equal((await patch(loc, 0, Buffer.alloc(4))).statusCode, 204);
  const d = await ta.inject('DELETE', loc, { token, headers: TUS });
  t.equal(d.statusCode, 204, d.payload);
  t.equal(d.headers['tus-resumable'], '1.0.0');
  t.equal((await head(loc)).statusCode, 404);
  t.equal((await patch(loc, 4, Buffer.alloc(6))).statusCode, 404);
  t.equal((await ta.inject('DELETE', loc, { token, headers: TUS })).statusCode, 404);
  t.notOk(existsSync(path.join(home, 'cancelled.bin')));
  t.same(tmpFiles(), before, 'no temporary data left');
});

t.test('a PATCH cut mid-body keeps what arrived; the upload resumes from the server offset, byte-identical', async (t) => {
  const data = pattern(2 * MB);
  let r = await create(data.length, { path: '/in/resumed.bin' });
  const loc = String(r.headers.location);
  await ta.server.start();
  const req = http.request(`http://127.0.0.1:${ta.server.info.port}${loc}`, {
    method: 'PATCH',
    headers: { ...TUS, authorization: `Bearer ${token}`, 'upload-offset': '0', ...OCTETS, 'content-length': String(MB) },
  });
  req.on('error', () => undefined);
  req.write(data.subarray(0, 300_000));
  const until = Date.now() + 30_000;
  while (Number((await head(loc)).headers['upload-offset']) < 300_000 && Date.now() < until) await sleep(10);
  req.destroy();
  // the cut chunk's bytes are kept, the lock freed
  let offset = 0;
  while (Date.now() < until) {
    r = await head(loc);
    offset = Number(r.headers['upload-offset']);
    const again = await patch(loc, offset, Buffer.alloc(0));
    if (again.statusCode === 204) break;
    await sleep(10);
  }
  t.equal(offset, 300_000, 'the server kept what arrived');
  t.notOk(existsSync(path.join(home, 'in', 'resumed.bin')));
  while (offset < data.length) {
    r = await patch(loc, offset, data.subarray(offset, Math.min(offset + MB, data.length)));
    t.equal(r.statusCode, 204, r.payload);
    offset = Number(r.headers['upload-offset']);
  }
  t.ok(readFileSync(path.join(home, 'in', 'resumed.bin')).equals(data), 'byte-identical');
});

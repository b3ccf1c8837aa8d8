import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { addUser, fileApp, PASSWORD, updateUser } from '../helpers/user-files.js';
import { Share } from '../../src/data/entities/index.js';
import { ChunkedUploads } from '../../src/vfs/chunked-uploads.service.js';

const ta = await fileApp({ config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] } } });
t.teardown(() => ta.close());
const home = await addUser(ta, { username: 'tus', filters: { max_upload_file_size: 3 * 1024 * 1024 } });
mkdirSync(path.join(home, 'in'));
mkdirSync(path.join(home, 'ro'));
const token = await ta.userToken('tus', PASSWORD);
const MB = 1024 * 1024;

const json = (r: { payload: string }) => JSON.parse(r.payload);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const meta = (m: Record<string, string | undefined>) =>
  Object.entries(m)
    .map(([k, v]) => (v === undefined ? k : `${k} ${b64(v)}`))
    .join(',');
const mkShare = async (payload: Record<string, unknown>) => {
  const r = await ta.inject('POST', '/api/v2/user/shares', { token, payload });
  if (r.statusCode !== 201) throw new Error(`add share: ${r.statusCode} ${r.payload}`);
  return String(r.headers['x-object-id']);
};
const writeId = await mkShare({ name: 'in', scope: 2, paths: ['/in'] });
const pwId = await mkShare({ name: 'pw', scope: 2, paths: ['/in'], password: 'tus-pw' });
const readId = await mkShare({ name: 'ro', scope: 1, paths: ['/ro'] });
const pw = { username: 'x', password: 'tus-pw' };
const TUS = { 'tus-resumable': '1.0.0' };
const create = (
  length: number | string | undefined,
  m: Record<string, string | undefined>,
  o: { headers?: Record<string, string>; payload?: Buffer; basic?: typeof pw } = {},
) =>
  ta.inject('POST', '/api/v2/shares-chunked-uploads', {
    basic: o.basic,
    payload: o.payload,
    headers: { ...TUS, ...(length === undefined ? {} : { 'upload-length': String(length) }), 'upload-metadata': meta(m), ...(o.headers ?? {}) },
  });
const patch = (loc: string, offset: number | string, body: Buffer, headers: Record<string, string> = {}, basic?: typeof pw) =>
  ta.inject('PATCH', loc, {
    basic,
    payload: body,
    headers: { ...TUS, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', ...headers },
  });
const head = (loc: string, basic?: typeof pw) => ta.inject('HEAD', loc, { basic, headers: TUS });
const used = async (id: string) => (await ta.app.orm.em.fork().findOneOrFail(Share, { share_id: id })).used_tokens;
const tmpFiles = () => readdirSync(path.join(ta.config.common.temp_dir, 'chunked-uploads'));

t.test('discovery: OPTIONS without credentials', async (t) => {
  const r = await ta.inject('OPTIONS', '/api/v2/shares-chunked-uploads');
  t.equal(r.statusCode, 200, r.payload);
  t.match(r.headers, {
    'tus-version': '1.0.0',
    'tus-resumable': '1.0.0',
    'tus-extension': 'creation,creation-with-upload,termination',
    'tus-max-chunk-size': String(MB),
  });
});

t.test('create, HEAD, PATCH in chunks: the file appears complete, once, with its mtime', async (t) => {
  const data = Buffer.alloc(MB + 1000);
  for (let i = 0; i < data.length; i++) data[i] = i % 251;
  let r = await create(data.length, { share_id: writeId, path: 'big.bin', mtime: '1700000000000' });
  t.equal(r.statusCode, 201, r.payload);
  const loc = String(r.headers.location);
  t.match(loc, /^\/api\/v2\/shares-chunked-uploads\/[A-Za-z0-9_-]{22}$/);
  t.equal(r.headers['tus-resumable'], '1.0.0');
  t.equal(r.headers['upload-offset'], '0');
  t.equal(await used(writeId), 1, 'one use per upload');
  r = await head(loc);
  t.equal(r.statusCode, 200);
  t.match(r.headers, { 'upload-offset': '0', 'upload-length': String(data.length), 'tus-resumable': '1.0.0', 'cache-control': 'no-store' });

  r = await patch(loc, 0, data.subarray(0, MB));
  t.equal(r.statusCode, 204, r.payload);
  t.equal(r.headers['upload-offset'], String(MB));
  t.notOk(existsSync(path.join(home, 'in', 'big.bin')), 'nothing visible before the last byte');
  r = await patch(loc, 0, data.subarray(MB));
  t.equal(r.statusCode, 409, 'offset mismatch');
  t.match(json(r).message, /the upload is at 1048576/);
  r = await patch(loc, MB, data.subarray(MB), { 'content-type': 'application/octet-stream' });
  t.equal(r.statusCode, 415);
  t.equal((await head(loc)).headers['upload-offset'], String(MB), 'unchanged by refused chunks');
  r = await patch(loc, MB, data.subarray(MB));
  t.equal(r.statusCode, 204, r.payload);
  t.equal(r.headers['upload-offset'], String(data.length));
  t.same(readFileSync(path.join(home, 'in', 'big.bin')), data);
  t.equal(statSync(path.join(home, 'in', 'big.bin')).mtimeMs, 1700000000000);
  t.equal((await head(loc)).statusCode, 404, 'a finished upload is gone');
  t.equal((await patch(loc, data.length, Buffer.alloc(1))).statusCode, 404);
  t.same(tmpFiles(), [], 'no temporary file left');
  t.equal(await used(writeId), 1);
});

t.test("termination (an addition): DELETE with the share's credentials forgets the upload and its bytes", async (t) => {
  const before = tmpFiles();
  let r = await create(10, { share_id: pwId, path: 'cancelled.bin' }, { basic: pw });
  t.equal(r.statusCode, 201, r.payload);
  const loc = String(r.headers.location);
  t.equal((await patch(loc, 0, Buffer.alloc(4), {}, pw)).statusCode, 204);
  r = await ta.inject('DELETE', loc, { headers: TUS });
  t.equal(r.statusCode, 401, "the share's password is needed");
  t.equal((await head(loc, pw)).headers['upload-offset'], '4', 'still there');
  const other = await create(10, { share_id: writeId, path: 'other.bin' });
  const otherLoc = String(other.headers.location);
  r = await ta.inject('DELETE', otherLoc.replace(/[^/]+$/, 'unknownunknownunknown1'), { headers: TUS });
  t.equal(r.statusCode, 404, 'an unknown upload');
  t.match(json(r), { message: /unknown or expired/, error: String });
  r = await ta.inject('DELETE', `/api/v2/user/chunked-uploads/${otherLoc.split('/').pop()}`, { token, headers: TUS });
  t.equal(r.statusCode, 404, "a share upload is not the user's to cancel through the user endpoint");
  r = await ta.inject('DELETE', loc, { basic: pw, headers: TUS });
  t.equal(r.statusCode, 204, r.payload);
  t.equal(r.headers['tus-resumable'], '1.0.0');
  t.equal((await head(loc, pw)).statusCode, 404, 'gone');
  t.equal((await ta.inject('DELETE', otherLoc, { headers: TUS })).statusCode, 204);
  t.notOk(existsSync(path.join(home, 'in', 'cancelled.bin')));
  t.same(tmpFiles(), before, 'no temporary data left');
});

t.test('creation-with-upload, mkdir_parents, zero-length files, password-protected shares', async (t) => {
  let r = await create(
    5,
    { share_id: writeId, path: '/new/dir/hello.txt', mkdir_parents: 'true' },
    { payload: Buffer.from('hello'), headers: { 'content-type': 'application/offset+octet-stream' } },
  );
  t.equal(r.statusCode, 201, r.payload);
  t.equal(r.headers['upload-offset'], '5');
  t.equal(readFileSync(path.join(home, 'in', 'new', 'dir', 'hello.txt'), 'utf8'), 'hello');
  r = await create(0, { share_id: writeId, path: 'empty.txt' });
  t.equal(r.statusCode, 201);
  t.equal(statSync(path.join(home, 'in', 'empty.txt')).size, 0);
  r = await create(
    3,
    { share_id: writeId, path: 'nodir/x.txt' },
    { payload: Buffer.from('abc'), headers: { 'content-type': 'application/offset+octet-stream' } },
  );
  t.equal(r.statusCode, 404, 'a missing directory without mkdir_parents');

  r = await create(2, { share_id: pwId, path: 'pw.txt' });
  t.equal(r.statusCode, 401);
  t.match(r.headers['www-authenticate'], /^Basic/);
  r = await create(2, { share_id: pwId, path: 'pw.txt' }, { basic: pw });
  t.equal(r.statusCode, 201, r.payload);
  const loc = String(r.headers.location);
  t.equal((await head(loc)).statusCode, 401, 'every request of the upload needs the password');
  t.equal((await head(loc, pw)).statusCode, 200);
  t.equal((await patch(loc, 0, Buffer.from('ok'), {}, { username: 'x', password: 'bad' })).statusCode, 401);
  t.equal((await patch(loc, 0, Buffer.from('ok'), {}, pw)).statusCode, 204);
  t.equal(readFileSync(path.join(home, 'in', 'pw.txt'), 'utf8'), 'ok');
});

t.test('create refusals', async (t) => {
  const cases: [Awaited<ReturnType<typeof create>>, number, RegExp][] = [
    [await create(1, { share_id: writeId, path: 'a' }, { headers: { 'tus-resumable': '0.2.2' } }), 400, /Tus-Resumable/],
    [await create(undefined, { share_id: writeId, path: 'a' }), 400, /Upload-Length/],
    [await create('-1', { share_id: writeId, path: 'a' }), 400, /Upload-Length/],
    [await create(1, { share_id: writeId }), 400, /"path" is required/],
    [await create(1, { path: 'a' }), 400, /"share_id" is required/],
    [await create(1, { share_id: writeId, path: 'a', mtime: 'noon' }), 400, /mtime/],
    [await create(1, { share_id: writeId, path: 'a' }, { headers: { 'upload-metadata': 'path a b c' } }), 400, /Upload-Metadata/],
    [
      await create(
        1,
        { share_id: writeId, path: 'a' },
        { headers: { 'upload-metadata': `share_id ${Buffer.from(writeId).toString('base64')},path ${Buffer.from([0x61, 0xff]).toString('base64')}` } },
      ),
      400,
      /"path" is not UTF-8/,
    ],
    [await create(1, { share_id: writeId, path: 'a\u0000b' }), 400, /"Upload-Metadata": "path" contains a NUL character/],
    [await create(1, { share_id: writeId, path: 'a' }, { payload: Buffer.from('a'), headers: { 'content-type': 'text/plain' } }), 415, /offset\+octet-stream/],
    [await create(1, { share_id: 'nosuchshare', path: 'a' }), 404, /not found/],
    [await create(1, { share_id: readId, path: 'a' }), 403, /scope/],
    [await create(1, { share_id: writeId, path: '../escape' }), 403, /'\.\.'/],
    [await create(1, { share_id: writeId, path: '/' }), 400, /is a directory/],
    [await create(1, { share_id: writeId, path: 'new' }), 400, /is a directory/],
    [await create(4 * MB, { share_id: writeId, path: 'huge' }), 413, /maximum upload size/],
  ];
  for (const [r, status, re] of cases) {
    t.equal(r.statusCode, status, r.payload);
    t.match(json(r), { message: re, error: String });
  }
  await updateUser(ta, 'tus', { quota_size: 100 });
  const q = await create(200, { share_id: writeId, path: 'q.bin' });
  t.equal(q.statusCode, 413);
  t.match(json(q).message, /quota/);
  await updateUser(ta, 'tus', { quota_size: 0 });
  t.same(tmpFiles(), [], 'refused creations leave no temporary file');
});

t.test('chunk refusals: past the end, larger than the chunk size; the final upload is checked again', async (t) => {
  let r = await create(10, { share_id: writeId, path: 'ten.bin' });
  const loc = String(r.headers.location);
  r = await patch(loc, 0, Buffer.alloc(11));
  t.equal(r.statusCode, 413, r.payload);
  t.equal((await head(loc)).headers['upload-offset'], '0', 'nothing kept');
  r = await patch(loc, 0, Buffer.alloc(4));
  t.equal(r.statusCode, 204);
  t.equal(r.headers['upload-offset'], '4');

  r = await create(2 * MB, { share_id: writeId, path: 'two.bin' });
  const big = String(r.headers.location);
  r = await patch(big, 0, Buffer.alloc(MB + 1));
  t.equal(r.statusCode, 413);
  t.match(json(r).message, /at most 1048576 bytes/);

  // the owner's quota shrank after the creation: the last chunk is refused, nothing is stored, the upload is gone
  r = await create(100, { share_id: writeId, path: 'late.bin' });
  const late = String(r.headers.location);
  await updateUser(ta, 'tus', { quota_size: 50 });
  r = await patch(late, 0, Buffer.alloc(100));
  t.equal(r.statusCode, 413, r.payload);
  t.notOk(existsSync(path.join(home, 'in', 'late.bin')));
  t.equal((await head(late)).statusCode, 404);
  await updateUser(ta, 'tus', { quota_size: 0 });

  t.equal((await head('/api/v2/shares-chunked-uploads/unknown')).statusCode, 404);
  t.equal((await patch('/api/v2/shares-chunked-uploads/unknown', 0, Buffer.alloc(1))).statusCode, 404);
  t.equal((await ta.inject('GET', loc)).statusCode, 405, 'GET is not part of the protocol');
  // a share deleted while uploading
  await ta.inject('DELETE', `/api/v2/user/shares/${writeId}`, { token });
  t.equal((await patch(loc, 4, Buffer.alloc(6))).statusCode, 404);
});

t.test('off unless the binding sets upload_chunk_size', async (t) => {
  const plain = await fileApp();
  t.teardown(() => plain.close());
  t.equal((await plain.inject('OPTIONS', '/api/v2/shares-chunked-uploads')).statusCode, 404);
  t.equal((await plain.inject('POST', '/api/v2/shares-chunked-uploads', { headers: TUS })).statusCode, 404);
});

t.test('TUS 1.0.0 header rules: Tus-Resumable on every answer but OPTIONS, errors included; versions', async (t) => {
  const id = await mkShare({ name: 'rules', scope: 2, paths: ['/in'] });
  const r = await create(10, { share_id: id, path: 'rules.bin' });
  const loc = String(r.headers.location);
  const answers: [string, Awaited<ReturnType<typeof create>>, number][] = [
    ['create', r, 201],
    ['HEAD', await head(loc), 200],
    ['PATCH', await patch(loc, 0, Buffer.alloc(4)), 204],
    ['create 400', await create(undefined, { share_id: id, path: 'x' }), 400],
    ['create 401', await create(1, { share_id: pwId, path: 'x' }), 401],
    ['create 404', await create(1, { share_id: 'nosuchshare', path: 'x' }), 404],
    ['create 413', await create(4 * MB, { share_id: id, path: 'x' }), 413],
    ['create 415', await create(1, { share_id: id, path: 'x' }, { payload: Buffer.from('a'), headers: { 'content-type': 'text/plain' } }), 415],
    ['PATCH 409', await patch(loc, 0, Buffer.alloc(1)), 409],
    ['PATCH 413', await patch(loc, 4, Buffer.alloc(7)), 413],
    ['PATCH 415', await patch(loc, 4, Buffer.alloc(1), { 'content-type': 'text/plain' }), 415],
    ['PATCH 404', await patch('/api/v2/shares-chunked-uploads/unknown', 0, Buffer.alloc(1)), 404],
    ['HEAD 404', await head('/api/v2/shares-chunked-uploads/unknown'), 404],
    ['GET 405', await ta.inject('GET', loc), 405],
  ];
  for (const [what, res, status] of answers) {
    t.equal(res.statusCode, status, `${what}: ${res.payload}`);
    t.equal(res.headers['tus-resumable'], '1.0.0', `${what}: Tus-Resumable`);
  }
  // an unsupported (or missing) Tus-Resumable: 412 with Tus-Version on HEAD and PATCH, 400 with Tus-Version on creation
  for (const version of ['0.2.2', undefined]) {
    const headers: Record<string, string> = version === undefined ? {} : { 'tus-resumable': version };
    const h = await ta.inject('HEAD', loc, { headers });
    t.equal(h.statusCode, 412, `HEAD with Tus-Resumable ${version}`);
    t.equal(h.headers['tus-version'], '1.0.0');
    t.equal(h.headers['tus-resumable'], '1.0.0');
    const p = await ta.inject('PATCH', loc, {
      payload: Buffer.alloc(1),
      headers: { ...headers, 'upload-offset': '4', 'content-type': 'application/offset+octet-stream' },
    });
    t.equal(p.statusCode, 412, `PATCH with Tus-Resumable ${version}: ${p.payload}`);
    t.equal(p.headers['tus-version'], '1.0.0');
    t.match(json(p), { message: /Tus-Resumable/, error: 'Precondition Failed' });
    const c = await ta.inject('POST', '/api/v2/shares-chunked-uploads', {
      headers: { ...headers, 'upload-length': '1', 'upload-metadata': meta({ share_id: id, path: 'v.bin' }) },
    });
    t.equal(c.statusCode, 400, `create with Tus-Resumable ${version}`);
    t.equal(c.headers['tus-version'], '1.0.0');
    t.equal(c.headers['tus-resumable'], '1.0.0');
  }
  t.equal((await head(loc)).headers['upload-offset'], '4', 'refused requests changed nothing');
});

t.test('tus-js-client uploads, aborts mid-chunk and resumes against Ferry', async (t) => {
  const tus = await import('tus-js-client');
  const pending = tmpFiles(); // incomplete uploads of the tests above
  const id = await mkShare({ name: 'client', scope: 2, paths: ['/in'], password: 'client-pw' });
  // a real listening socket: the client speaks HTTP
  await ta.server.start();
  const endpoint = `http://127.0.0.1:${ta.server.info.port}/api/v2/shares-chunked-uploads`;
  const data = Buffer.alloc(2 * MB + 12345); // under the user's 3 MiB upload limit
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 256;
  const auth = { Authorization: 'Basic ' + Buffer.from('x:client-pw').toString('base64') };
  const metadata = { share_id: id, path: 'client.bin', mtime: '1700000000000' };

  // first run: stopped during the second chunk (the request is cut mid-body)
  let uploadUrl = '';
  await new Promise<void>((resolve, reject) => {
    let chunks = 0;
    const upload = new tus.Upload(data, {
      endpoint,
      chunkSize: MB,
      headers: auth,
      metadata,
      retryDelays: [],
      onProgress: (sent) => {
        if (chunks >= 1 && sent > MB + MB / 4) {
          void upload.abort(false).then(() => resolve());
        }
      },
      onChunkComplete: () => {
        chunks++;
        uploadUrl = upload.url ?? '';
      },
      onError: reject,
      onSuccess: () => reject(new Error('the upload should have been stopped')),
    });
    upload.start();
  });
  t.match(uploadUrl, /\/api\/v2\/shares-chunked-uploads\/[A-Za-z0-9_-]{22}$/);
  t.notOk(existsSync(path.join(home, 'in', 'client.bin')), 'nothing visible before the last byte');
  // the server kept what it received of whole chunks (the cut chunk is kept up to where it was cut, or dropped)
  const offset = Number((await head(new URL(uploadUrl).pathname, { username: 'x', password: 'client-pw' })).headers['upload-offset']);
  t.ok(offset >= MB && offset < 2 * MB + 1, `resumable offset ${offset}`);

  // second run: resumes from the server's offset on the same URL
  await new Promise<void>((resolve, reject) => {
    const upload = new tus.Upload(data, {
      endpoint,
      uploadUrl,
      chunkSize: MB,
      headers: auth,
      metadata,
      retryDelays: [],
      onError: reject,
      onSuccess: () => resolve(),
    });
    upload.start();
  });
  const stored = readFileSync(path.join(home, 'in', 'client.bin'));
  t.equal(stored.length, data.length);
  t.ok(stored.equals(data), 'byte-exact after the resume');
  t.equal(statSync(path.join(home, 'in', 'client.bin')).mtimeMs, 1700000000000, 'mtime from the metadata');
  t.equal(await used(id), 1, 'one use for the whole upload');
  t.same(tmpFiles(), pending, 'no temporary data left by this upload');
});

t.test('upload ids name files: the description or lock of an upload is no upload', async (t) => {
  const id = await mkShare({ name: 'ids', scope: 2, paths: ['/in'] });
  const r = await create(10, { share_id: id, path: 'ids.bin' });
  t.equal(r.statusCode, 201, r.payload);
  const loc = String(r.headers.location);
  for (const other of [`${loc}.json`, `${loc}.lock`, `${loc.slice(0, -1)}%2E`]) t.equal((await head(other)).statusCode, 404, other);
  t.equal((await patch(loc, 0, Buffer.alloc(10, 1))).statusCode, 204);
  t.same(readFileSync(path.join(home, 'in', 'ids.bin')), Buffer.alloc(10, 1));
});

t.test('one chunk at a time: a chunk sent while another is received is 409 and changes nothing', async (t) => {
  const id = await mkShare({ name: 'one-at-a-time', scope: 2, paths: ['/in'] });
  const r = await create(10, { share_id: id, path: 'one-at-a-time.bin' });
  t.equal(r.statusCode, 201, r.payload);
  const loc = String(r.headers.location);
  const lock = path.join(ta.config.common.temp_dir, 'chunked-uploads', `${loc.split('/').pop()}.lock`);
  // a real socket (the server listens since the tus-js-client test): the first chunk's request stays open
  await ta.server.start();
  const req = http.request(`http://127.0.0.1:${ta.server.info.port}${loc}`, {
    method: 'PATCH',
    headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream', 'content-length': '10' },
  });
  const first = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  req.write(Buffer.alloc(4, 2));
  // the first chunk's bytes are on disk, its request still open
  const until = Date.now() + 30_000;
  while ((await head(loc)).headers['upload-offset'] !== '4' && Date.now() < until) await sleep(10);
  t.ok(existsSync(lock), 'the upload is locked');
  const second = await patch(loc, 4, Buffer.alloc(1, 3));
  t.equal(second.statusCode, 409, second.payload);
  t.match(json(second).message, /another chunk of this upload is being received/);
  req.end(Buffer.alloc(6, 2));
  t.equal(await first, 204);
  t.same(readFileSync(path.join(home, 'in', 'one-at-a-time.bin')), Buffer.alloc(10, 2), 'only the first chunk was kept');
  t.notOk(existsSync(lock), 'the lock is gone with the upload');
});

t.test('a chunk cut before it is read (its close sent while the lock was taken) ends at once, keeps nothing and frees the lock', async (t) => {
  const uploads = ta.app.container.resolve(ChunkedUploads);
  const id = await mkShare({ name: 'cut-early', scope: 2, paths: ['/in'] });
  const r = await create(10, { share_id: id, path: 'cut-early.bin' });
  t.equal(r.statusCode, 201, r.payload);
  const uploadId = String(r.headers.location).split('/').pop() ?? '';
  const u = await uploads.get(uploadId);
  const body = new PassThrough();
  body.write(Buffer.alloc(4, 7));
  body.destroy();
  // its close has been emitted: nobody listened yet
  await new Promise((resolve) => setImmediate(resolve));
  const hung = sleep(15_000, 'hung', { ref: false });
  t.equal(await Promise.race([uploads.append(u, body, 0).then(() => 'ended'), hung]), 'ended');
  t.equal(u.offset, 0, 'nothing was kept');
  t.equal((await uploads.get(uploadId)).offset, 0);
  t.notOk(existsSync(path.join(ta.config.common.temp_dir, 'chunked-uploads', `${uploadId}.lock`)), 'the lock is gone');
  t.equal((await patch(String(r.headers.location), 0, Buffer.alloc(10, 8))).statusCode, 204, 'the upload goes on');
  t.same(readFileSync(path.join(home, 'in', 'cut-early.bin')), Buffer.alloc(10, 8));
});

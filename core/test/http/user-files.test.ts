import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { addUser, fileApp, multipart, PASSWORD, updateUser } from '../helpers/user-files.js';
import { processTag } from '../../src/sdk/process-tag.js';

const ta = await fileApp();
t.teardown(() => ta.close());
const home = await addUser(ta, { username: 'alice' });
const token = await ta.userToken('alice', PASSWORD);
const q = (p: string) => encodeURIComponent(p);
const up = (p: string, body: string | Buffer | Readable, headers: Record<string, string> = {}) =>
  ta.inject('POST', `/api/v2/user/files/upload?path=${q(p)}`, {
    token,
    payload: body,
    headers: { 'content-type': 'application/octet-stream', ...headers },
  });
const get = (p: string, headers: Record<string, string> = {}, extra = '') => ta.inject('GET', `/api/v2/user/files?path=${q(p)}${extra}`, { token, headers });
const uploadsTmp = () => readdirSync(path.join(ta.dataDir, 'uploads-tmp', processTag()));

t.test('raw upload: stored, mtime from X-SERVICE-MTIME, overwrite, 201 ApiResponse', async (t) => {
  const r = await up('/hello.txt', 'hello world', { 'x-service-mtime': '1700000000000' });
  t.equal(r.statusCode, 201, r.payload);
  t.match(JSON.parse(r.payload), { message: String });
  t.equal(readFileSync(path.join(home, 'hello.txt'), 'utf8'), 'hello world');
  t.equal(statSync(path.join(home, 'hello.txt')).mtimeMs, 1700000000000);
  const again = await up('hello.txt', 'HELLO');
  t.equal(again.statusCode, 201, 'relative paths are rooted');
  t.equal(readFileSync(path.join(home, 'hello.txt'), 'utf8'), 'HELLO');
  t.same(uploadsTmp(), [], 'no temporary upload left');
});

t.test('raw upload refusals', async (t) => {
  mkdirSync(path.join(home, 'adir'), { recursive: true });
  const cases: [string, Record<string, string>, number, RegExp][] = [
    ['/adir', {}, 400, /is a directory/],
    ['/', {}, 400, /is a directory/],
    ['/missing/parent/file.txt', {}, 404, /parent directory does not exist/],
    ['/bad-mtime.txt', { 'x-service-mtime': 'yesterday' }, 400, /X-SERVICE-MTIME/],
    ['/hello.txt/sub', {}, 400, /not a directory/],
  ];
  for (const [p, headers, status, msg] of cases) {
    const r = await up(p, 'data', headers);
    t.equal(r.statusCode, status, `${p}: ${r.payload}`);
    const body = JSON.parse(r.payload);
    t.match(body, { message: msg, error: String }, p);
  }
  const noPath = await ta.inject('POST', '/api/v2/user/files/upload', { token, payload: 'x' });
  t.equal(noPath.statusCode, 400);
  t.match(JSON.parse(noPath.payload).message, /path/);
  t.notOk(existsSync(path.join(home, 'missing')));
  const unauth = await ta.inject('POST', '/api/v2/user/files/upload?path=/x', { payload: 'x' });
  t.equal(unauth.statusCode, 401);
});

t.test('mkdir_parents creates the missing directories', async (t) => {
  const r = await ta.inject('POST', `/api/v2/user/files/upload?path=${q('/deep/er/file.bin')}&mkdir_parents=true`, {
    token,
    payload: Buffer.alloc(1000, 7),
  });
  t.equal(r.statusCode, 201, r.payload);
  t.equal(statSync(path.join(home, 'deep/er/file.bin')).size, 1000);
});

t.test('a streamed upload without Content-Length', async (t) => {
  const chunks = Array.from({ length: 50 }, (_, i) => Buffer.alloc(10_000, i));
  const r = await up('/streamed.bin', Readable.from(chunks));
  t.equal(r.statusCode, 201, r.payload);
  t.same(readFileSync(path.join(home, 'streamed.bin')), Buffer.concat(chunks));
});

t.test('max_upload_file_size: declared or streamed, 413 and nothing left', async (t) => {
  await updateUser(ta, 'alice', { filters: { max_upload_file_size: 1000 } });
  const declared = await up('/big1.bin', Buffer.alloc(1001));
  t.equal(declared.statusCode, 413, declared.payload);
  t.match(JSON.parse(declared.payload), { message: /maximum upload size of 1000/, error: 'Request Entity Too Large' });
  const streamed = await up('/big2.bin', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]));
  t.equal(streamed.statusCode, 413, streamed.payload);
  const mp = multipart([{ name: 'big3.bin', data: Buffer.alloc(5000) }]);
  const m = await ta.inject('POST', '/api/v2/user/files?path=/', { token, ...mp });
  t.equal(m.statusCode, 413, m.payload);
  for (const f of ['big1.bin', 'big2.bin', 'big3.bin']) t.notOk(existsSync(path.join(home, f)), `${f} not stored`);
  t.same(uploadsTmp(), []);
  const ok = await up('/small.bin', Buffer.alloc(1000));
  t.equal(ok.statusCode, 201, 'exactly the maximum is allowed');
  await updateUser(ta, 'alice', { filters: {} });
});

t.test('multipart upload of several files into a directory', async (t) => {
  mkdirSync(path.join(home, 'inbox'), { recursive: true });
  const mp = multipart([
    { name: 'a.txt', data: 'AAA' },
    { name: 'b.bin', data: Buffer.alloc(200_000, 3) },
    { name: '../escape.txt', data: 'inside' },
    { name: 'résumé 日本.txt', data: 'utf8' },
  ]);
  const r = await ta.inject('POST', `/api/v2/user/files?path=${q('/inbox')}`, { token, ...mp });
  t.equal(r.statusCode, 201, r.payload);
  t.match(JSON.parse(r.payload).message, /4 file/);
  t.equal(readFileSync(path.join(home, 'inbox/a.txt'), 'utf8'), 'AAA');
  t.equal(statSync(path.join(home, 'inbox/b.bin')).size, 200_000);
  t.equal(readFileSync(path.join(home, 'inbox/escape.txt'), 'utf8'), 'inside', 'a path in a part name is reduced to its base name');
  t.equal(readFileSync(path.join(home, 'inbox/résumé 日本.txt'), 'utf8'), 'utf8', 'UTF-8 part names');
  t.notOk(existsSync(path.join(home, 'escape.txt')));

  const toNew = await ta.inject('POST', `/api/v2/user/files?path=${q('/new/dir')}&mkdir_parents=1`, {
    token,
    ...multipart([{ name: 'c.txt', data: 'C' }]),
  });
  t.equal(toNew.statusCode, 201, toNew.payload);
  t.ok(existsSync(path.join(home, 'new/dir/c.txt')));

  const bad: [string, { payload: Buffer | string; headers: Record<string, string> }, RegExp][] = [
    [
      'duplicate names',
      multipart([
        { name: 'd.txt', data: '1' },
        { name: 'd.txt', data: '2' },
      ]),
      /more than once/,
    ],
    ['no files', multipart([], { note: 'x' }), /at least one file/],
    ['wrong field', multipart([{ name: 'e.txt', data: '1', field: 'file' }]), /"filenames"/],
    ['not multipart', { payload: 'x', headers: { 'content-type': 'text/plain' } }, /multipart\/form-data/],
    ['truncated body', { payload: multipart([{ name: 'f.txt', data: 'x' }]).payload.subarray(0, 60), headers: multipart([]).headers }, /multipart|no files/],
  ];
  for (const [name, mp2, msg] of bad) {
    const res = await ta.inject('POST', `/api/v2/user/files?path=${q('/inbox')}`, { token, ...mp2 });
    t.equal(res.statusCode, 400, `${name}: ${res.payload}`);
    t.match(JSON.parse(res.payload).message, msg, name);
  }
  const missingDir = await ta.inject('POST', `/api/v2/user/files?path=${q('/nowhere')}`, { token, ...multipart([{ name: 'g.txt', data: '1' }]) });
  t.equal(missingDir.statusCode, 404, missingDir.payload);
});

t.test('download headers, inline, safe Content-Disposition, HEAD', async (t) => {
  writeFileSync(path.join(home, 'we"ird ü.txt'), 'odd name');
  const d = await get('/we"ird ü.txt');
  t.equal(d.statusCode, 200, d.payload);
  t.equal(d.payload, 'odd name');
  t.equal(d.headers['content-disposition'], `attachment; filename="we_ird _.txt"; filename*=UTF-8''we%22ird%20%C3%BC.txt`);
  t.equal(d.headers['accept-ranges'], 'bytes');
  t.match(d.headers.etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
  t.equal(d.headers['last-modified'], statSync(path.join(home, 'we"ird ü.txt')).mtime.toUTCString());
  t.match(d.headers['content-type'], /^text\/plain/);
  const inline = await get('/hello.txt', {}, '&inline=true');
  t.match(inline.headers['content-disposition'], /^inline; filename="hello.txt"/);
  t.equal(inline.headers['x-frame-options'], 'DENY', 'an inline answer may not be framed');
  t.equal(inline.headers['content-security-policy'], 'sandbox', 'nor run a script on the origin');
  writeFileSync(path.join(home, 'page.html'), '<script>alert(1)</script>');
  const html = await get('/page.html', {}, '&inline=true');
  t.match(
    html.headers,
    { 'content-type': /^text\/html/, 'content-security-policy': 'sandbox', 'x-content-type-options': 'nosniff' },
    'an HTML file sent inline is sandboxed',
  );
  // a PDF sent inline may be framed by pages of the server's origin (the web client's preview), and no other
  writeFileSync(path.join(home, 'doc.pdf'), '%PDF-1.4\n');
  const pdf = await get('/doc.pdf', {}, '&inline=true');
  t.match(pdf.headers, { 'content-type': 'application/pdf', 'content-disposition': /^inline; filename="doc.pdf"/, 'x-frame-options': 'SAMEORIGIN' });
  t.equal(pdf.headers['content-security-policy'], "frame-ancestors 'self'");
  const pdfHead = await ta.inject('HEAD', `/api/v2/user/files?path=${q('/doc.pdf')}&inline=true`, { token });
  t.equal(pdfHead.headers['x-frame-options'], 'SAMEORIGIN', 'HEAD tells the same');
  const pdfPart = await get('/doc.pdf', { range: 'bytes=0-3' }, '&inline=true');
  t.match(pdfPart.headers, { 'x-frame-options': 'SAMEORIGIN', 'content-security-policy': "frame-ancestors 'self'" }, 'a range of it too');
  const attached = await get('/doc.pdf');
  t.equal(attached.headers['x-frame-options'], 'DENY', 'a PDF sent as an attachment may not be framed');
  t.equal(attached.headers['content-security-policy'], undefined);
  const head = await ta.inject('HEAD', `/api/v2/user/files?path=${q('/hello.txt')}`, { token });
  t.equal(head.statusCode, 200);
  t.equal(head.payload, '');
  t.equal(head.headers['content-length'], '5');
  t.equal((await get('/nope.txt')).statusCode, 404);
  const dir = await get('/adir');
  t.equal(dir.statusCode, 400);
  t.match(JSON.parse(dir.payload).message, /is a directory/);
});

t.test('conditional requests: If-None-Match and If-Modified-Since give 304', async (t) => {
  const d = await get('/hello.txt');
  const etag = d.headers.etag as string;
  const lm = d.headers['last-modified'] as string;
  t.equal((await get('/hello.txt', { 'if-none-match': etag })).statusCode, 304);
  t.equal((await get('/hello.txt', { 'if-none-match': `"other", W/${etag}` })).statusCode, 304, 'weak comparison');
  t.equal((await get('/hello.txt', { 'if-none-match': '"other"' })).statusCode, 200);
  t.equal((await get('/hello.txt', { 'if-modified-since': lm })).statusCode, 304);
  t.equal((await get('/hello.txt', { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).statusCode, 200);
  t.equal((await get('/hello.txt', { 'if-modified-since': 'garbage' })).statusCode, 200);
});

t.test('Range edge cases', async (t) => {
  writeFileSync(path.join(home, 'digits.txt'), '0123456789');
  writeFileSync(path.join(home, 'empty.txt'), '');
  const cases: [string, number, string | null, string | null][] = [
    ['bytes=0-0', 206, '0', 'bytes 0-0/10'],
    ['bytes=2-4', 206, '234', 'bytes 2-4/10'],
    ['bytes=7-', 206, '789', 'bytes 7-9/10'],
    ['bytes=-3', 206, '789', 'bytes 7-9/10'],
    ['bytes=-100', 206, '0123456789', 'bytes 0-9/10'],
    ['bytes=5-1000', 206, '56789', 'bytes 5-9/10'],
    ['bytes=9-9', 206, '9', 'bytes 9-9/10'],
    ['bytes = 1 - 2', 206, '12', 'bytes 1-2/10'],
    ['bytes=10-', 416, null, 'bytes */10'],
    ['bytes=10-20', 416, null, 'bytes */10'],
    ['bytes=-0', 416, null, 'bytes */10'],
    ['bytes=5-2', 200, '0123456789', null],
    ['bytes=0-1,4-5', 200, '0123456789', null],
    ['items=0-1', 200, '0123456789', null],
    ['bytes=abc', 200, '0123456789', null],
    ['bytes=-', 200, '0123456789', null],
  ];
  for (const [range, status, body, cr] of cases) {
    const r = await get('/digits.txt', { range });
    t.equal(r.statusCode, status, range);
    if (body !== null) {
      t.equal(r.payload, body, range);
      t.equal(r.headers['content-length'], String(body.length), `${range} content-length`);
    } else t.match(JSON.parse(r.payload), { error: 'Range Not Satisfiable' });
    t.equal(r.headers['content-range'], cr ?? undefined, `${range} content-range`);
  }
  const empty = await get('/empty.txt', { range: 'bytes=0-' });
  t.equal(empty.statusCode, 416);
  t.equal(empty.headers['content-range'], 'bytes */0');
  const emptyFull = await get('/empty.txt');
  t.equal(emptyFull.statusCode, 200);
  t.equal(emptyFull.payload, '');
  const etag = (await get('/digits.txt')).headers.etag as string;
  const lm = (await get('/digits.txt')).headers['last-modified'] as string;
  t.equal((await get('/digits.txt', { range: 'bytes=1-2', 'if-range': etag })).statusCode, 206, 'If-Range with the current ETag');
  t.equal((await get('/digits.txt', { range: 'bytes=1-2', 'if-range': lm })).statusCode, 206, 'If-Range with the date');
  const stale = await get('/digits.txt', { range: 'bytes=1-2', 'if-range': '"stale"' });
  t.equal(stale.statusCode, 200, 'stale If-Range sends the whole file');
  t.equal(stale.payload, '0123456789');
  t.equal((await get('/digits.txt', { range: 'bytes=1-2', 'if-range': `W/${etag}` })).statusCode, 200, 'weak validators never match If-Range');
});

t.test('a large ranged read returns exactly the requested bytes', async (t) => {
  const big = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
  writeFileSync(path.join(home, 'big.bin'), big);
  const r = await get('/big.bin', { range: 'bytes=1000000-2999999' });
  t.equal(r.statusCode, 206);
  t.equal(r.rawPayload.length, 2_000_000);
  t.ok(r.rawPayload.equals(big.subarray(1_000_000, 3_000_000)));
  const full = await get('/big.bin');
  t.ok(full.rawPayload.equals(big));
});

t.test('delete a file', async (t) => {
  writeFileSync(path.join(home, 'gone.txt'), 'x');
  const r = await ta.inject('DELETE', `/api/v2/user/files?path=${q('/gone.txt')}`, { token });
  t.equal(r.statusCode, 200, r.payload);
  t.match(JSON.parse(r.payload), { message: String });
  t.notOk(existsSync(path.join(home, 'gone.txt')));
  t.equal((await ta.inject('DELETE', `/api/v2/user/files?path=${q('/gone.txt')}`, { token })).statusCode, 404);
  const dir = await ta.inject('DELETE', `/api/v2/user/files?path=${q('/adir')}`, { token });
  t.equal(dir.statusCode, 400);
  t.match(JSON.parse(dir.payload).message, /is a directory/);
  t.ok(existsSync(path.join(home, 'adir')));
  t.equal((await ta.inject('DELETE', '/api/v2/user/files?path=/', { token })).statusCode, 403);
});

t.test('PATCH /user/files/metadata sets the modification time', async (t) => {
  const r = await ta.inject('PATCH', `/api/v2/user/files/metadata?path=${q('/hello.txt')}`, {
    token,
    payload: { modification_time: 1600000000000 },
  });
  t.equal(r.statusCode, 200, r.payload);
  t.equal(statSync(path.join(home, 'hello.txt')).mtimeMs, 1600000000000);
  const listed = JSON.parse((await ta.inject('GET', '/api/v2/user/dirs?path=/', { token })).payload) as { name: string; last_modified: string }[];
  t.equal(listed.find((e) => e.name === 'hello.txt')?.last_modified, '2020-09-13T12:26:40.000Z');
  const missing = await ta.inject('PATCH', `/api/v2/user/files/metadata?path=${q('/nope')}`, { token, payload: { modification_time: 1 } });
  t.equal(missing.statusCode, 404);
  for (const payload of [{}, { modification_time: 'soon' }, { modification_time: -1 }, { modification_time: null }]) {
    const bad = await ta.inject('PATCH', `/api/v2/user/files/metadata?path=${q('/hello.txt')}`, { token, payload });
    t.equal(bad.statusCode, 400, JSON.stringify(payload));
  }
  const extra = await ta.inject('PATCH', `/api/v2/user/files/metadata?path=${q('/hello.txt')}`, { token, payload: { modification_time: 1, extra: 1 } });
  t.equal(extra.statusCode, 200, 'an unknown member is dropped, not refused');
});

t.test('deprecated PATCH /user/files renames a file', async (t) => {
  writeFileSync(path.join(home, 'old-name.txt'), 'r');
  const r = await ta.inject('PATCH', `/api/v2/user/files?path=${q('/old-name.txt')}&target=${q('/new-name.txt')}`, { token });
  t.equal(r.statusCode, 200, r.payload);
  t.ok(existsSync(path.join(home, 'new-name.txt')));
  t.notOk(existsSync(path.join(home, 'old-name.txt')));
});

t.test('downloads are sent as stored, never gzipped', async (t) => {
  writeFileSync(path.join(home, 'text.txt'), 'a'.repeat(100_000));
  const r = await get('/text.txt', { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(r.statusCode, 200);
  t.equal(r.headers['content-encoding'], undefined);
  t.equal(r.headers['content-length'], '100000');
  t.equal(r.payload.length, 100_000);
  const z = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['/text.txt'], headers: { 'accept-encoding': 'gzip' } });
  t.equal(z.headers['content-encoding'], undefined);
  const l = await ta.inject('GET', '/api/v2/user/dirs?path=/', { token, headers: { 'accept-encoding': 'gzip' } });
  t.equal(l.statusCode, 200, 'listings may be compressed');
});

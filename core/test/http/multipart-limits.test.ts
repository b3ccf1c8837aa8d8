import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { addUser, fileApp, listen, multipart, PASSWORD, updateUser, userRow } from '../helpers/user-files.js';
import { processTag } from '../../src/sdk/process-tag.js';

// Multipart uploads (POST /api/v2/user/files): at most httpd.max_multipart_files
// file parts per request; a request past the limit is refused with 413 and,
// like any multipart request that fails before its end, leaves nothing: no
// file published (not even the parts before the limit), nothing in the temp
// area, the storage quota counters as they were.

const LIMIT = 5;
const ta = await fileApp({ config: { httpd: { max_multipart_files: LIMIT } } });
t.teardown(() => ta.close());
const home = await addUser(ta, { username: 'mona' });
const token = await ta.userToken('mona', PASSWORD);
const tmpArea = path.join(ta.dataDir, 'uploads-tmp', processTag());
const q = encodeURIComponent;

const files = (n: number, prefix = 'f') =>
  Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}.txt`, data: `content of ${prefix}${i} `.repeat(i + 1) }));
const post = (dir: string, body: ReturnType<typeof multipart>, tok = token) =>
  ta.inject('POST', `/api/v2/user/files?path=${q(dir)}&mkdir_parents=true`, { token: tok, payload: body.payload, headers: body.headers });
const counters = async (username = 'mona') => {
  const u = await userRow(ta, username);
  return { size: Number(u.used_quota_size), files: Number(u.used_quota_files) };
};

t.test('the limit is a documented setting, overridable from the environment', async (t) => {
  t.equal(loadConfig({ env: {} }).config.httpd.max_multipart_files, 1000, 'default 1000');
  t.equal(loadConfig({ env: { SERVICE_HTTPD__MAX_MULTIPART_FILES: '25' } }).config.httpd.max_multipart_files, 25);
  t.throws(() => loadConfig({ env: { SERVICE_HTTPD__MAX_MULTIPART_FILES: '0' } }), /max_multipart_files/, 'at least 1');
});

t.test('exactly the limit: every file stored', async (t) => {
  const sent = files(LIMIT);
  const r = await post('/at-limit', multipart(sent));
  t.equal(r.statusCode, 201, r.payload);
  t.same(JSON.parse(r.payload), { message: `${LIMIT} file(s) uploaded` });
  t.same(readdirSync(path.join(home, 'at-limit')).sort(), sent.map((f) => f.name).sort());
  for (const f of sent) t.equal(readFileSync(path.join(home, 'at-limit', f.name), 'utf8'), f.data, `${f.name} holds what was sent`);
  t.same(readdirSync(tmpArea), []);
});

t.test('one file past the limit: 413 naming the limit, and nothing of the request is kept', async (t) => {
  const before = await counters();
  const r = await post('/past-limit', multipart(files(LIMIT + 1)));
  t.equal(r.statusCode, 413, r.payload);
  const body = JSON.parse(r.payload) as { message: string; error: string };
  t.same(Object.keys(body).sort(), ['error', 'message']);
  t.equal(body.error, 'Request Entity Too Large');
  t.match(body.message, new RegExp(`at most ${LIMIT} files`));
  t.match(body.message, /httpd\.max_multipart_files/);
  t.same(readdirSync(path.join(home, 'past-limit')), [], `none of the ${LIMIT} files before the limit was published`);
  t.same(readdirSync(tmpArea), [], 'nothing in the temp area');
  t.same(await counters(), before, 'quota counters unchanged');
});

t.test('far past the limit, with form fields and large parts: the same', async (t) => {
  const before = await counters();
  const big = files(LIMIT * 3).map((f, i) => ({ ...f, data: i % 2 ? Buffer.alloc(200_000, i) : f.data }));
  const r = await post('/far-past', multipart(big, { note: 'a field' }));
  t.equal(r.statusCode, 413, r.payload);
  t.same(readdirSync(path.join(home, 'far-past')), []);
  t.same(readdirSync(tmpArea), []);
  t.same(await counters(), before);
});

t.test('a refused request does not replace existing files either', async (t) => {
  const ok = await post('/keep', multipart([{ name: 'f0.txt', data: 'the original' }]));
  t.equal(ok.statusCode, 201, ok.payload);
  const before = await counters();
  // f0.txt is the first part: stored, then discarded when the limit is passed
  const r = await post('/keep', multipart(files(LIMIT + 1)));
  t.equal(r.statusCode, 413, r.payload);
  t.equal(readFileSync(path.join(home, 'keep', 'f0.txt'), 'utf8'), 'the original', 'the existing file is untouched');
  t.same(readdirSync(path.join(home, 'keep')), ['f0.txt']);
  t.same(await counters(), before);
});

t.test('any failure before the end of the body discards the files before it', async (t) => {
  const before = await counters();
  // a duplicate name in the third part
  const dup = [...files(2), { name: 'f0.txt', data: 'again' }];
  const r1 = await post('/dup', multipart(dup));
  t.equal(r1.statusCode, 400, r1.payload);
  t.same(readdirSync(path.join(home, 'dup')), []);
  // a body that ends before its closing boundary
  const cut = multipart(files(3));
  const r2 = await ta.inject('POST', `/api/v2/user/files?path=/cut&mkdir_parents=true`, {
    token,
    payload: cut.payload.subarray(0, cut.payload.length - 30),
    headers: cut.headers,
  });
  t.equal(r2.statusCode, 400, r2.payload);
  t.same(readdirSync(path.join(home, 'cut')), []);
  t.same(readdirSync(tmpArea), []);
  t.same(await counters(), before);
});

t.test('a file quota reached mid-request: 413, nothing kept, counters unchanged', async (t) => {
  await addUser(ta, { username: 'quinn', quota_files: 3 });
  const qt = await ta.userToken('quinn', PASSWORD);
  const qhome = path.join(ta.root, 'quinn');
  writeFileSync(path.join(qhome, 'existing.txt'), 'x');
  await updateUser(ta, 'quinn', { used_quota_files: 1, used_quota_size: 1 });
  const r = await post('/', multipart(files(3)), qt);
  t.equal(r.statusCode, 413, r.payload);
  t.match(JSON.parse(r.payload), { message: /file quota exceeded/, error: 'Request Entity Too Large' });
  t.same(readdirSync(qhome), ['existing.txt'], 'the two files that fitted were not kept');
  t.same(readdirSync(tmpArea), []);
  t.same(await counters('quinn'), { size: 1, files: 1 });
  const fits = await post('/', multipart(files(2)), qt);
  t.equal(fits.statusCode, 201, `the reservations were freed: ${fits.payload}`);
  t.same(await counters('quinn'), { size: 1 + files(2).reduce((n, f) => n + Buffer.byteLength(f.data), 0), files: 3 });
});

t.test('the default limit: 1,000 parts accepted with every file correct, 1,001 refused', async (t) => {
  const big = await fileApp();
  t.teardown(() => big.close());
  const bigHome = await addUser(big, { username: 'mass' });
  const bt = await big.userToken('mass', PASSWORD);
  const send = (dir: string, n: number) => {
    const body = multipart(files(n, 'm').map((f) => ({ ...f, data: `${f.name}:${'y'.repeat(f.name.length)}` })));
    return big.inject('POST', `/api/v2/user/files?path=${dir}&mkdir_parents=true`, { token: bt, payload: body.payload, headers: body.headers });
  };
  const ok = await send('/many', 1000);
  t.equal(ok.statusCode, 201, ok.payload);
  const names = readdirSync(path.join(bigHome, 'many'));
  t.equal(names.length, 1000, '1,000 files');
  let wrong = 0;
  for (let i = 0; i < 1000; i++) {
    const name = `m${i}.txt`;
    if (readFileSync(path.join(bigHome, 'many', name), 'utf8') !== `${name}:${'y'.repeat(name.length)}`) wrong++;
  }
  t.equal(wrong, 0, 'every file holds what was sent');
  const u = await userRow(big, 'mass');
  t.equal(Number(u.used_quota_files), 1000, 'the quota counts 1,000 files');
  const refused = await send('/too-many', 1001);
  t.equal(refused.statusCode, 413, refused.payload);
  t.same(readdirSync(path.join(bigHome, 'too-many')), []);
  t.same(readdirSync(path.join(big.dataDir, 'uploads-tmp', processTag())), []);
  t.equal(Number((await userRow(big, 'mass')).used_quota_files), 1000);
  t.notOk(existsSync(path.join(bigHome, 'too-many', 'm0.txt')));
  // over a real socket the body arrives in pieces: the limit is passed while the first file is
  // still being opened (its part was ended with the error before the upload read from it)
  const base = await listen(big);
  const body = multipart(files(1001, 'w'));
  const r = await fetch(`${base}/api/v2/user/files?path=/socket&mkdir_parents=true`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bt}`, ...body.headers },
    body: body.payload,
  });
  t.equal(r.status, 413, 'the answer comes');
  await r.arrayBuffer();
  t.same(readdirSync(path.join(bigHome, 'socket')), []);
  t.same(readdirSync(path.join(big.dataDir, 'uploads-tmp', processTag())), []);
});

t.test('over a real socket, a client that sends its whole body before reading gets the 413', async (t) => {
  const base = await listen(ta);
  // the extra parts are large: the server refuses at the first one and must still read the rest
  const body = multipart([...files(LIMIT), ...Array.from({ length: 3 }, (_, i) => ({ name: `big${i}.bin`, data: Buffer.alloc(2 * 1024 * 1024, i) }))]);
  const r = await fetch(`${base}/api/v2/user/files?path=/socket&mkdir_parents=true`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...body.headers },
    body: body.payload,
  });
  t.equal(r.status, 413);
  t.match(await r.json(), { message: /httpd\.max_multipart_files/, error: 'Request Entity Too Large' });
  t.same(readdirSync(path.join(home, 'socket')), []);
  t.same(readdirSync(tmpArea), []);
});

import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addFolder, addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { openDescriptorsUnder, unzip } from '@ferry/testkit';

const ta = await fileApp();
t.teardown(() => ta.close());
const shared = await addFolder(ta, 'shared');
const deep = await addFolder(ta, 'deep');
const home = await addUser(ta, {
  username: 'bob',
  folders: [
    { name: 'shared', virtual_path: '/shared' },
    { name: 'deep', virtual_path: '/a/b/deep' },
  ],
});
const token = await ta.userToken('bob', PASSWORD);
const q = (p: string) => encodeURIComponent(p);
const list = async (p: string) => {
  const r = await ta.inject('GET', `/api/v2/user/dirs?path=${q(p)}`, { token });
  return {
    status: r.statusCode,
    headers: r.headers,
    body: r.statusCode === 200 ? (JSON.parse(r.payload) as { name: string; size: number; mode: number; last_modified: string }[]) : JSON.parse(r.payload),
  };
};
const names = (entries: { name: string }[]) => entries.map((e) => e.name).sort();
const post = (url: string) => ta.inject('POST', url, { token });

t.test('listing: entries, virtual folders as directories, RFC 3339 dates', async (t) => {
  writeFileSync(path.join(home, 'f.txt'), '12345');
  mkdirSync(path.join(home, 'sub'), { recursive: true });
  mkdirSync(shared, { recursive: true });
  writeFileSync(path.join(shared, 's.txt'), 'shared!');
  const root = await list('/');
  t.equal(root.status, 200);
  t.same(names(root.body), ['a', 'f.txt', 'shared', 'sub']);
  const f = root.body.find((e: { name: string }) => e.name === 'f.txt');
  t.match(f, { size: 5, mode: Number });
  t.ok(!Number.isNaN(Date.parse(f.last_modified)) && /T.*Z$/.test(f.last_modified), 'RFC 3339');
  const sh = root.body.find((e: { name: string }) => e.name === 'shared');
  t.equal(sh.mode & 0o170000, 0o040000, 'mount point is a directory');
  t.equal(Number(root.headers['content-length']), Buffer.byteLength(JSON.stringify(root.body)), 'a small listing is answered in one body, of its length');
  t.same(names((await list('/shared')).body), ['s.txt']);
  t.same(names((await list('/a')).body), ['b'], 'directories leading to a deeper mount are listed');
  t.same(names((await list('/a/b')).body), ['deep']);
  t.same((await list('/a/b/deep')).body, []);
  t.equal((await list('')).status, 200, 'empty path is the root');
  t.equal((await ta.inject('GET', '/api/v2/user/dirs', { token })).statusCode, 200, 'no path is the root');
  t.equal((await list('/nope')).status, 404);
  t.equal((await list('/f.txt')).status, 400);
  // the refusals name what the stat of the path names (the listing is asked without a stat first)
  t.same((await list('/nope')).body, { message: '/nope: no such file or directory', error: 'Not Found' });
  t.same((await list('/sub/nope/x')).body, { message: '/sub/nope/x: no such file or directory', error: 'Not Found' });
  t.same((await list('/f.txt')).body, { message: '/f.txt: not a directory', error: 'Bad Request' });
  t.same((await list('/f.txt/x')).body, { message: '/f.txt/x: f.txt is not a directory', error: 'Bad Request' }, 'the component that is not a directory');
});

t.test('a large directory is listed completely (paged)', async (t) => {
  const dir = path.join(home, 'many');
  mkdirSync(dir);
  for (let i = 0; i < 2500; i++) writeFileSync(path.join(dir, `file-${i}`), '');
  const r = await list('/many');
  t.equal(r.body.length, 2500);
  t.equal(new Set(names(r.body)).size, 2500);
  t.equal(r.headers['content-length'], undefined, 'streamed, not held whole');
  t.match(r.body[2499], { name: /^file-\d+$/, size: 0, mode: Number, last_modified: String }, 'entries after the first pages as the first');
});

t.test('mkdir: 201, parents, conflicts', async (t) => {
  const r = await post(`/api/v2/user/dirs?path=${q('/newdir')}`);
  t.equal(r.statusCode, 201, r.payload);
  t.ok(statSync(path.join(home, 'newdir')).isDirectory());
  const again = await post(`/api/v2/user/dirs?path=${q('/newdir')}`);
  t.equal(again.statusCode, 409);
  t.match(JSON.parse(again.payload), { message: /already exists/, error: 'Conflict' });
  t.equal((await post(`/api/v2/user/dirs?path=${q('/x/y/z')}`)).statusCode, 404, 'missing parent without mkdir_parents');
  const parents = await post(`/api/v2/user/dirs?path=${q('/x/y/z')}&mkdir_parents=true`);
  t.equal(parents.statusCode, 201, parents.payload);
  t.ok(statSync(path.join(home, 'x/y/z')).isDirectory());
  t.equal((await post(`/api/v2/user/dirs?path=${q('/x/y/z')}&mkdir_parents=true`)).statusCode, 201, 'idempotent with parents');
  t.equal((await post(`/api/v2/user/dirs?path=${q('/shared')}`)).statusCode, 409, 'a virtual folder exists');
  t.equal((await post(`/api/v2/user/dirs?path=${q('/f.txt/sub')}&mkdir_parents=true`)).statusCode, 400, 'a file on the way');
  t.equal((await post('/api/v2/user/dirs')).statusCode, 400, 'path is required');
  const inFolder = await post(`/api/v2/user/dirs?path=${q('/shared/inner')}`);
  t.equal(inFolder.statusCode, 201);
  t.ok(statSync(path.join(shared, 'inner')).isDirectory(), 'created in the folder');
});

t.test('rmdir: recursive, refusals', async (t) => {
  mkdirSync(path.join(home, 'tree/a/b'), { recursive: true });
  writeFileSync(path.join(home, 'tree/a/b/f'), 'x');
  writeFileSync(path.join(home, 'tree/g'), 'y');
  const r = await ta.inject('DELETE', `/api/v2/user/dirs?path=${q('/tree')}`, { token });
  t.equal(r.statusCode, 200, r.payload);
  t.notOk(existsSync(path.join(home, 'tree')));
  t.equal((await ta.inject('DELETE', `/api/v2/user/dirs?path=${q('/tree')}`, { token })).statusCode, 404);
  const file = await ta.inject('DELETE', `/api/v2/user/dirs?path=${q('/f.txt')}`, { token });
  t.equal(file.statusCode, 400);
  t.match(JSON.parse(file.payload).message, /not a directory/);
  for (const p of ['/', '/shared', '/a', '/a/b']) {
    const v = await ta.inject('DELETE', `/api/v2/user/dirs?path=${q(p)}`, { token });
    t.equal(v.statusCode, 403, `${p}: ${v.payload}`);
  }
  t.ok(existsSync(path.join(shared, 's.txt')), 'folder content untouched');
});

t.test('rename and move within a mount', async (t) => {
  writeFileSync(path.join(home, 'm1.txt'), 'move me');
  const r = await post(`/api/v2/user/file-actions/move?path=${q('/m1.txt')}&target=${q('/sub/m2.txt')}`);
  t.equal(r.statusCode, 200, r.payload);
  t.equal(readFileSync(path.join(home, 'sub/m2.txt'), 'utf8'), 'move me');
  t.notOk(existsSync(path.join(home, 'm1.txt')));
  const dirRename = await ta.inject('PATCH', `/api/v2/user/dirs?path=${q('/sub')}&target=${q('/sub2')}`, { token });
  t.equal(dirRename.statusCode, 200, dirRename.payload);
  t.ok(existsSync(path.join(home, 'sub2/m2.txt')));
  writeFileSync(path.join(home, 'over.txt'), 'old');
  writeFileSync(path.join(home, 'src.txt'), 'new');
  t.equal((await post(`/api/v2/user/file-actions/move?path=${q('/src.txt')}&target=${q('/over.txt')}`)).statusCode, 200, 'replaces a file');
  t.equal(readFileSync(path.join(home, 'over.txt'), 'utf8'), 'new');
  const refusals: [string, string, number, RegExp][] = [
    ['/nope', '/x2', 404, /no such file/],
    ['/sub2', '/sub2/inside', 400, /into itself/],
    ['/over.txt', '/over.txt', 400, /same path/],
    ['/over.txt', '/newdir', 409, /already exists/],
    ['/over.txt', '/missing/dir/f', 404, /no such file/],
    ['/shared', '/elsewhere', 403, /virtual folder/],
    ['/over.txt', '/shared', 403, /virtual folder/],
    ['/a', '/a2', 403, /virtual folder/],
    ['/', '/root2', 403, /root directory/],
  ];
  for (const [from, to, status, msg] of refusals) {
    const res = await post(`/api/v2/user/file-actions/move?path=${q(from)}&target=${q(to)}`);
    t.equal(res.statusCode, status, `${from} -> ${to}: ${res.payload}`);
    t.match(JSON.parse(res.payload).message, msg);
  }
  t.equal((await post(`/api/v2/user/file-actions/move?path=${q('/over.txt')}`)).statusCode, 400, 'target is required');
});

t.test('move across virtual folders copies then removes', async (t) => {
  writeFileSync(path.join(home, 'cross.txt'), 'crossing');
  const r = await post(`/api/v2/user/file-actions/move?path=${q('/cross.txt')}&target=${q('/shared/cross.txt')}`);
  t.equal(r.statusCode, 200, r.payload);
  t.equal(readFileSync(path.join(shared, 'cross.txt'), 'utf8'), 'crossing');
  t.notOk(existsSync(path.join(home, 'cross.txt')));
  mkdirSync(path.join(home, 'ctree/in'), { recursive: true });
  writeFileSync(path.join(home, 'ctree/in/x'), 'x');
  writeFileSync(path.join(home, 'ctree/y'), 'yy');
  const d = await post(`/api/v2/user/file-actions/move?path=${q('/ctree')}&target=${q('/a/b/deep/ctree')}`);
  t.equal(d.statusCode, 200, d.payload);
  t.equal(readFileSync(path.join(deep, 'ctree/in/x'), 'utf8'), 'x');
  t.equal(readFileSync(path.join(deep, 'ctree/y'), 'utf8'), 'yy');
  t.notOk(existsSync(path.join(home, 'ctree')));
});

t.test('copy: files and directory trees, within and across mounts', async (t) => {
  writeFileSync(path.join(home, 'c.txt'), 'copy');
  const r = await post(`/api/v2/user/file-actions/copy?path=${q('/c.txt')}&target=${q('/c2.txt')}`);
  t.equal(r.statusCode, 200, r.payload);
  t.equal(readFileSync(path.join(home, 'c2.txt'), 'utf8'), 'copy');
  t.ok(existsSync(path.join(home, 'c.txt')), 'source kept');
  const x = await post(`/api/v2/user/file-actions/copy?path=${q('/c.txt')}&target=${q('/shared/c.txt')}`);
  t.equal(x.statusCode, 200, x.payload);
  t.equal(readFileSync(path.join(shared, 'c.txt'), 'utf8'), 'copy');
  mkdirSync(path.join(home, 'ct/d'), { recursive: true });
  writeFileSync(path.join(home, 'ct/d/e'), 'E');
  const tree = await post(`/api/v2/user/file-actions/copy?path=${q('/ct')}&target=${q('/shared/ct')}`);
  t.equal(tree.statusCode, 200, tree.payload);
  t.equal(readFileSync(path.join(shared, 'ct/d/e'), 'utf8'), 'E');
  t.equal((await post(`/api/v2/user/file-actions/copy?path=${q('/ct')}&target=${q('/ct/inner')}`)).statusCode, 400);
  t.equal((await post(`/api/v2/user/file-actions/copy?path=${q('/ct')}&target=${q('/shared/ct')}`)).statusCode, 409);
  t.equal((await post(`/api/v2/user/file-actions/copy?path=${q('/nope')}&target=${q('/n2')}`)).statusCode, 404);
  t.equal((await post(`/api/v2/user/file-actions/copy?path=${q('/c.txt')}&target=${q('/shared')}`)).statusCode, 403);
});

t.test('streamzip: files and directories, recursively', async (t) => {
  const r = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['/c.txt', '/ct', '/shared/s.txt'] });
  t.equal(r.statusCode, 200, r.statusCode === 200 ? 'a zip' : r.payload);
  t.equal(r.headers['content-type'], 'application/zip');
  t.match(r.headers['content-disposition'], /attachment/);
  const entries = unzip(r.rawPayload);
  t.equal(entries.get('c.txt')?.toString(), 'copy');
  t.equal(entries.get('s.txt')?.toString(), 'shared!');
  t.equal(entries.get('ct/d/e')?.toString(), 'E');
  t.ok(entries.has('ct/') && entries.has('ct/d/'), 'directory entries');
  const big = Buffer.alloc(2 * 1024 * 1024, 1);
  writeFileSync(path.join(home, 'big.bin'), big);
  const z2 = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['big.bin'] });
  t.ok(unzip(z2.rawPayload).get('big.bin')?.equals(big));
  const bad: [unknown, number][] = [
    [[], 400],
    ['/c.txt', 400],
    [[1], 400],
    [['/nope'], 404],
    [['/../etc'], 403],
  ];
  for (const [payload, status] of bad) {
    const res = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: payload as never });
    t.equal(res.statusCode, status, `${JSON.stringify(payload)}: ${res.payload}`);
  }
});

t.test('streamzip: many files of every size, read ahead and streamed, each whole and in listing order', async (t) => {
  // empty, small (read whole, ahead), around the 64 KiB limit, and large (streamed), interleaved
  const sizes = [0, 1, 300, 65_535, 65_536, 65_537, 200_000, 5, 0, 1_500_000, 40, 70_000, 3];
  const want = new Map<string, Buffer>();
  mkdirSync(path.join(home, 'zmany/sub'), { recursive: true });
  for (let i = 0; i < 40; i++) {
    const size = sizes[i % sizes.length]!;
    const body = randomBytes(size);
    if (i % 3 === 0) body.fill(i, 0, size >> 1); // some compress, some do not
    const rel = `${i % 2 ? 'sub/' : ''}f${i}.bin`;
    writeFileSync(path.join(home, 'zmany', rel), body);
    want.set(`zmany/${rel}`, body);
  }
  const r = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['/zmany'] });
  t.equal(r.statusCode, 200, r.statusCode === 200 ? 'a zip' : r.payload);
  const got = unzip(r.rawPayload);
  for (const [name, body] of want) t.ok(got.get(name)?.equals(body), `${name} (${body.length} bytes)`);
  t.equal(got.size, want.size + 2, 'the files and the two directories, nothing more');
  const listed = async (dir: string) => {
    const l = await ta.inject('GET', `/api/v2/user/dirs?path=${encodeURIComponent(dir)}`, { token });
    return (JSON.parse(l.payload) as { name: string }[]).map((e) => e.name);
  };
  // entries follow the listing, depth first: a directory's entry, then its files and subdirectories as listed
  const sub = (await listed('/zmany/sub')).map((n) => `zmany/sub/${n}`);
  const expected = ['zmany/', ...(await listed('/zmany')).flatMap((n) => (n === 'sub' ? ['zmany/sub/', ...sub] : [`zmany/${n}`]))];
  t.same([...got.keys()], expected);
});

t.test('streamzip of many directories holds a descriptor per directory only while its files are being opened', async (t) => {
  // the descriptors into the user's tree (the process's own sockets, e.g. a database pool growing, are not the zip's)
  const fds = () => openDescriptorsUnder(home);
  for (let d = 0; d < 300; d++) {
    mkdirSync(path.join(home, `ztree/d${d}`), { recursive: true });
    for (let f = 0; f < 3; f++) writeFileSync(path.join(home, `ztree/d${d}/f${f}.txt`), `${d}/${f}`);
  }
  const before = fds();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, fds())), 1);
  const r = await ta.inject('POST', '/api/v2/user/streamzip', { token, payload: ['/ztree'] });
  clearInterval(sampler);
  t.equal(r.statusCode, 200, r.statusCode === 200 ? 'a zip' : r.payload);
  const got = unzip(r.rawPayload);
  t.equal(got.size, 1 + 300 + 900, 'every directory and file');
  t.equal(got.get('ztree/d299/f2.txt')?.toString(), '299/2');
  t.ok(peak - before < 100, `far fewer descriptors at once than directories (${peak - before} more at most)`);
  t.ok(fds() <= before, `every descriptor closed afterwards (${fds()} open, ${before} before)`);
});

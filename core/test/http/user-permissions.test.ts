import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp, multipart, PASSWORD, updateUser } from '../helpers/user-files.js';
import { unzip } from '@ferry/testkit';
import { processTag } from '../../src/sdk/process-tag.js';

const ta = await fileApp();
t.teardown(() => ta.close());
const q = (p: string) => encodeURIComponent(p);

const DIRS = ['up/ow', 'del', 'deld', 'ren', 'rend', 'mk', 'cp', 'all', 'nolist', 'times', 'ro'];
const home = await addUser(ta, {
  username: 'carol',
  permissions: {
    '/': ['list', 'download'],
    '/up': ['list', 'upload'],
    '/up/ow': ['list', 'upload', 'overwrite'],
    '/del': ['list', 'delete_files'],
    '/deld': ['list', 'delete_dirs'],
    '/ren': ['list', 'rename_files'],
    '/rend': ['list', 'rename_dirs'],
    '/mk': ['list', 'create_dirs'],
    '/cp': ['list', 'download', 'copy'],
    '/all/': ['*'],
    '/nolist': ['download'],
    '/times': ['list', 'chtimes'],
  },
});
for (const d of DIRS) mkdirSync(path.join(home, d), { recursive: true });
const token = await ta.userToken('carol', PASSWORD);

const call = (method: string, url: string, payload?: unknown, headers?: Record<string, string>) => ta.inject(method, url, { token, payload, headers });
const upload = (p: string, body = 'data') => call('POST', `/api/v2/user/files/upload?path=${q(p)}`, body, { 'content-type': 'application/octet-stream' });
const expect403 = (t: Test, r: { statusCode: number; payload: string }, what: string, perm?: RegExp) => {
  t.equal(r.statusCode, 403, `${what}: ${r.payload}`);
  const body = JSON.parse(r.payload);
  t.match(body, { message: perm ?? /permission|not allowed|disabled/, error: 'Forbidden' }, what);
};

t.test('upload needs "upload"; replacing needs "overwrite"; the deepest configured path wins', async (t) => {
  expect403(t, await upload('/root.txt'), 'upload to /', /"upload"/);
  t.notOk(existsSync(path.join(home, 'root.txt')));
  t.equal((await upload('/up/a.txt')).statusCode, 201);
  expect403(t, await upload('/up/a.txt', 'again'), 'overwrite in /up', /"overwrite"/);
  t.equal(readFileSync(path.join(home, 'up/a.txt'), 'utf8'), 'data', 'not replaced');
  t.equal((await upload('/up/ow/b.txt')).statusCode, 201);
  t.equal((await upload('/up/ow/b.txt', 'v2')).statusCode, 201, 'overwrite allowed deeper');
  t.equal(readFileSync(path.join(home, 'up/ow/b.txt'), 'utf8'), 'v2');
  const mp = await ta.inject('POST', `/api/v2/user/files?path=${q('/')}`, { token, ...multipart([{ name: 'm.txt', data: 'x' }]) });
  expect403(t, mp, 'multipart upload to /');
  t.equal((await upload('/all/x.txt')).statusCode, 201, '"*" grants everything (key with a trailing slash)');
});

t.test('list and download', async (t) => {
  writeFileSync(path.join(home, 'nolist/f.txt'), 'F');
  expect403(t, await call('GET', `/api/v2/user/dirs?path=${q('/nolist')}`), 'list /nolist', /"list"/);
  t.equal((await call('GET', `/api/v2/user/files?path=${q('/nolist/f.txt')}`)).statusCode, 200, 'download without list');
  expect403(t, await call('GET', `/api/v2/user/files?path=${q('/up/a.txt')}`), 'download from /up', /"download"/);
  expect403(t, await call('POST', '/api/v2/user/streamzip', ['/up/a.txt']), 'zip from /up');
  expect403(t, await call('POST', '/api/v2/user/streamzip', ['/nolist']), 'zip of an unlistable dir');
  t.equal((await call('GET', '/api/v2/user/dirs?path=/')).statusCode, 200);
});

t.test('delete: delete_files for files, delete_dirs for directories', async (t) => {
  writeFileSync(path.join(home, 'del/f.txt'), 'x');
  mkdirSync(path.join(home, 'del/d'), { recursive: true });
  writeFileSync(path.join(home, 'deld/f.txt'), 'x');
  mkdirSync(path.join(home, 'deld/d'), { recursive: true });
  t.equal((await call('DELETE', `/api/v2/user/files?path=${q('/del/f.txt')}`)).statusCode, 200);
  expect403(t, await call('DELETE', `/api/v2/user/dirs?path=${q('/del/d')}`), 'rmdir in /del', /"delete" or "delete_dirs"/);
  expect403(t, await call('DELETE', `/api/v2/user/files?path=${q('/deld/f.txt')}`), 'rm in /deld', /"delete" or "delete_files"/);
  t.equal((await call('DELETE', `/api/v2/user/dirs?path=${q('/deld/d')}`)).statusCode, 200);
  expect403(t, await call('DELETE', `/api/v2/user/dirs?path=${q('/up')}`), 'rmdir /up (no delete on /)');
  t.ok(existsSync(path.join(home, 'del/d')) && existsSync(path.join(home, 'deld/f.txt')) && existsSync(path.join(home, 'up')));
  // a recursive delete also needs "delete" where permissions are configured inside the tree
  mkdirSync(path.join(home, 'all/inner'), { recursive: true });
  await updateUser(ta, 'carol', {
    permissions: { '/': ['list', 'download'], '/all': ['*'], '/all/inner/locked': ['list'], '/ren': ['list', 'rename_files'] },
  });
  mkdirSync(path.join(home, 'all/inner/locked'), { recursive: true });
  expect403(t, await call('DELETE', `/api/v2/user/dirs?path=${q('/all/inner')}`), 'rmdir over a restricted subtree');
  t.ok(existsSync(path.join(home, 'all/inner/locked')));
});

t.test('rename: rename_files / rename_dirs on both source and target; overwrite to replace', async (t) => {
  await updateUser(ta, 'carol', {
    permissions: {
      '/': ['list', 'download'],
      '/ren': ['list', 'rename_files'],
      '/rend': ['list', 'rename_dirs'],
      '/all': ['*'],
      '/ro': ['list'],
    },
  });
  writeFileSync(path.join(home, 'ren/f.txt'), 'f');
  mkdirSync(path.join(home, 'ren/d'), { recursive: true });
  mkdirSync(path.join(home, 'rend/d'), { recursive: true });
  writeFileSync(path.join(home, 'rend/f.txt'), 'f');
  const move = (a: string, b: string) => call('POST', `/api/v2/user/file-actions/move?path=${q(a)}&target=${q(b)}`);
  t.equal((await move('/ren/f.txt', '/ren/g.txt')).statusCode, 200);
  expect403(t, await move('/ren/d', '/ren/e'), 'dir rename with rename_files', /"rename" or "rename_dirs"/);
  t.equal((await move('/rend/d', '/rend/e')).statusCode, 200);
  expect403(t, await move('/rend/f.txt', '/rend/g.txt'), 'file rename with rename_dirs', /"rename" or "rename_files"/);
  expect403(t, await move('/ren/g.txt', '/ro/g.txt'), 'target without rename');
  expect403(t, await move('/ro/../ren/g.txt', '/all/g.txt'), 'dot-dot path', /'\.\.'/);
  writeFileSync(path.join(home, 'ro/r.txt'), 'r');
  expect403(t, await move('/ro/r.txt', '/all/r.txt'), 'source without rename');
  t.equal((await move('/ren/g.txt', '/all/g.txt')).statusCode, 200, 'rename_files on the source, "*" on the target');
  t.ok(existsSync(path.join(home, 'all/g.txt')));
});

t.test('copy needs "copy" on both sides, "overwrite" to replace', async (t) => {
  await updateUser(ta, 'carol', {
    permissions: { '/': ['list', 'download'], '/cp': ['list', 'copy', 'download'], '/cp2': ['list', 'copy', 'overwrite'], '/ro': ['list'] },
  });
  mkdirSync(path.join(home, 'cp2'), { recursive: true });
  writeFileSync(path.join(home, 'cp/c.txt'), 'c');
  const copy = (a: string, b: string) => call('POST', `/api/v2/user/file-actions/copy?path=${q(a)}&target=${q(b)}`);
  t.equal((await copy('/cp/c.txt', '/cp/d.txt')).statusCode, 200);
  expect403(t, await copy('/cp/c.txt', '/cp/d.txt'), 'replace without overwrite', /"overwrite"/);
  t.equal((await copy('/cp/c.txt', '/cp2/c.txt')).statusCode, 200);
  t.equal((await copy('/cp/c.txt', '/cp2/c.txt')).statusCode, 200, 'replace with overwrite');
  expect403(t, await copy('/cp/c.txt', '/ro/c.txt'), 'copy to /ro', /"copy"/);
  expect403(t, await copy('/ro/r.txt', '/cp/r.txt'), 'copy from /ro', /"copy"/);
});

t.test('create_dirs and chtimes', async (t) => {
  await updateUser(ta, 'carol', { permissions: { '/': ['list'], '/mk': ['list', 'create_dirs'], '/times': ['list', 'chtimes'] } });
  t.equal((await call('POST', `/api/v2/user/dirs?path=${q('/mk/new')}`)).statusCode, 201);
  expect403(t, await call('POST', `/api/v2/user/dirs?path=${q('/ro/new')}`), 'mkdir in /ro', /"create_dirs"/);
  expect403(t, await call('POST', `/api/v2/user/dirs?path=${q('/top/a/b')}&mkdir_parents=1`), 'mkdir parents in /');
  t.notOk(existsSync(path.join(home, 'top')));
  writeFileSync(path.join(home, 'times/t.txt'), 't');
  t.equal((await call('PATCH', `/api/v2/user/files/metadata?path=${q('/times/t.txt')}`, { modification_time: 1_000_000_000_000 })).statusCode, 200);
  t.equal(statSync(path.join(home, 'times/t.txt')).mtimeMs, 1_000_000_000_000);
  expect403(t, await call('PATCH', `/api/v2/user/files/metadata?path=${q('/ro/r.txt')}`, { modification_time: 1 }), 'chtimes in /ro', /"chtimes"/);
  await updateUser(ta, 'carol', { permissions: { '/': ['chtimes'] } });
  expect403(t, await call('GET', '/api/v2/user/dirs?path=/'), 'no list permission', /"list"/);
});

t.test('plain "delete" and plain "rename", granted by themselves', async (t) => {
  const hh = await addUser(ta, {
    username: 'hank',
    permissions: { '/': ['list'], '/pdel': ['list', 'delete'], '/pren': ['list', 'rename'] },
  });
  for (const d of ['pdel/d', 'pren/d']) mkdirSync(path.join(hh, d), { recursive: true });
  for (const f of ['pdel/f.txt', 'pren/f.txt', 'keep.txt']) writeFileSync(path.join(hh, f), 'x');
  mkdirSync(path.join(hh, 'topdir'));
  const ht = await ta.userToken('hank', PASSWORD);
  const hc = (method: string, url: string) => ta.inject(method, url, { token: ht });
  const move = (a: string, b: string) => hc('POST', `/api/v2/user/file-actions/move?path=${q(a)}&target=${q(b)}`);

  t.equal((await hc('DELETE', `/api/v2/user/files?path=${q('/pdel/f.txt')}`)).statusCode, 200, '"delete" removes a file');
  t.equal((await hc('DELETE', `/api/v2/user/dirs?path=${q('/pdel/d')}`)).statusCode, 200, '"delete" removes a directory');
  t.notOk(existsSync(path.join(hh, 'pdel/f.txt')) || existsSync(path.join(hh, 'pdel/d')));
  expect403(t, await hc('DELETE', `/api/v2/user/files?path=${q('/keep.txt')}`), 'rm where only "list" is granted', /"delete" or "delete_files"/);
  expect403(t, await hc('DELETE', `/api/v2/user/dirs?path=${q('/topdir')}`), 'rmdir where only "list" is granted', /"delete" or "delete_dirs"/);
  t.ok(existsSync(path.join(hh, 'keep.txt')) && existsSync(path.join(hh, 'topdir')));
  writeFileSync(path.join(hh, 'pdel/g.txt'), 'g');
  expect403(t, await move('/pdel/g.txt', '/pdel/h.txt'), '"delete" does not grant rename', /"rename"/);
  const upDel = await ta.inject('POST', `/api/v2/user/files/upload?path=${q('/pdel/new.txt')}`, { token: ht, payload: 'n' });
  expect403(t, upDel, '"delete" does not grant upload', /"upload"/);

  t.equal((await move('/pren/f.txt', '/pren/g.txt')).statusCode, 200, '"rename" renames a file');
  t.equal((await move('/pren/d', '/pren/e')).statusCode, 200, '"rename" renames a directory');
  t.ok(existsSync(path.join(hh, 'pren/g.txt')) && existsSync(path.join(hh, 'pren/e')) && !existsSync(path.join(hh, 'pren/d')));
  expect403(t, await move('/keep.txt', '/kept.txt'), 'rename where only "list" is granted', /"rename" or "rename_files"/);
  expect403(t, await move('/pren/g.txt', '/g.txt'), 'the target needs "rename" too', /"rename"/);
  expect403(t, await hc('DELETE', `/api/v2/user/files?path=${q('/pren/g.txt')}`), '"rename" does not grant delete', /"delete"/);
  t.ok(existsSync(path.join(hh, 'pren/g.txt')) && existsSync(path.join(hh, 'keep.txt')));
});

t.test('file patterns: denied, allowed-only and hidden names', async (t) => {
  const dh = await addUser(ta, {
    username: 'dan',
    filters: {
      file_patterns: [
        { path: '/', denied_patterns: ['*.exe', 'temp?'] },
        { path: '/photos', allowed_patterns: ['*.jpg', '*.png'] },
        { path: '/secret', denied_patterns: ['*.key'], deny_policy: 1 },
      ],
    },
  });
  mkdirSync(path.join(dh, 'photos'));
  mkdirSync(path.join(dh, 'secret/sub'), { recursive: true });
  writeFileSync(path.join(dh, 'secret/a.key'), 'k');
  writeFileSync(path.join(dh, 'secret/sub/b.KEY'), 'k');
  writeFileSync(path.join(dh, 'secret/ok.txt'), 'ok');
  writeFileSync(path.join(dh, 'tool.exe'), 'mz');
  const dt = await ta.userToken('dan', PASSWORD);
  const up = (p: string) => ta.inject('POST', `/api/v2/user/files/upload?path=${q(p)}`, { token: dt, payload: 'x' });
  expect403(t, await up('/virus.exe'), 'denied pattern', /file patterns/);
  expect403(t, await up('/sub/VIRUS.EXE'), 'case-insensitive, inherited by subdirectories', /file patterns/);
  expect403(t, await up('/temp1'), '? pattern', /file patterns/);
  t.equal((await up('/temp12')).statusCode, 201);
  t.equal((await up('/photos/a.jpg')).statusCode, 201);
  t.equal((await up('/photos/B.PNG')).statusCode, 201);
  expect403(t, await up('/photos/notes.txt'), 'not in the allowed list', /file patterns/);
  expect403(t, await up('/secret/new.key'), 'hidden names cannot be written', /file patterns/);
  const list = JSON.parse((await ta.inject('GET', '/api/v2/user/dirs?path=/secret', { token: dt })).payload) as { name: string }[];
  t.same(list.map((e) => e.name).sort(), ['ok.txt', 'sub'], 'hidden names left out');
  const root = JSON.parse((await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: dt })).payload) as { name: string }[];
  t.ok(
    root.some((e) => e.name === 'tool.exe'),
    'denied (not hidden) names stay visible',
  );
  t.equal((await ta.inject('GET', `/api/v2/user/files?path=${q('/secret/a.key')}`, { token: dt })).statusCode, 404, 'hidden = missing');
  t.equal((await ta.inject('GET', `/api/v2/user/files?path=${q('/secret/sub/b.KEY')}`, { token: dt })).statusCode, 404);
  expect403(t, await ta.inject('GET', `/api/v2/user/files?path=${q('/tool.exe')}`, { token: dt }), 'download of a denied name');
  expect403(
    t,
    await ta.inject('POST', `/api/v2/user/file-actions/move?path=${q('/temp12')}&target=${q('/temp12.exe')}`, { token: dt }),
    'rename to a denied name',
  );
  t.equal((await ta.inject('DELETE', `/api/v2/user/files?path=${q('/secret/a.key')}`, { token: dt })).statusCode, 404);
  t.ok(existsSync(path.join(dh, 'secret/a.key')));
  const zip = await ta.inject('POST', '/api/v2/user/streamzip', { token: dt, payload: ['/secret'] });
  t.equal(zip.statusCode, 200);
  t.same([...unzip(zip.rawPayload).keys()].sort(), ['secret/', 'secret/ok.txt', 'secret/sub/']);
});

t.test('web client "write-disabled" refuses every change', async (t) => {
  const eh = await addUser(ta, { username: 'erin', filters: { web_client: ['write-disabled'] } });
  writeFileSync(path.join(eh, 'f.txt'), 'f');
  mkdirSync(path.join(eh, 'd'));
  const et = await ta.userToken('erin', PASSWORD);
  const tries: [string, string, unknown?][] = [
    ['POST', `/api/v2/user/files/upload?path=${q('/n.txt')}`, 'x'],
    ['POST', `/api/v2/user/dirs?path=${q('/nd')}`],
    ['DELETE', `/api/v2/user/files?path=${q('/f.txt')}`],
    ['DELETE', `/api/v2/user/dirs?path=${q('/d')}`],
    ['POST', `/api/v2/user/file-actions/move?path=${q('/f.txt')}&target=${q('/g.txt')}`],
    ['POST', `/api/v2/user/file-actions/copy?path=${q('/f.txt')}&target=${q('/g.txt')}`],
    ['PATCH', `/api/v2/user/files?path=${q('/f.txt')}&target=${q('/g.txt')}`],
    ['PATCH', `/api/v2/user/files/metadata?path=${q('/f.txt')}`, { modification_time: 1 }],
  ];
  for (const [m, url, payload] of tries) {
    expect403(t, await ta.inject(m, url, { token: et, payload: payload as never }), `${m} ${url}`, /write operations are disabled/);
  }
  const mp = await ta.inject('POST', `/api/v2/user/files?path=${q('/')}`, {
    token: et,
    ...multipart([
      { name: 'm1.txt', data: 'one' },
      { name: 'm2.txt', data: 'two' },
    ]),
  });
  expect403(t, mp, 'multipart POST /user/files', /write operations are disabled/);
  t.notOk(existsSync(path.join(eh, 'm1.txt')) || existsSync(path.join(eh, 'm2.txt')), 'no multipart file stored');
  t.same(readdirSync(path.join(ta.dataDir, 'uploads-tmp', processTag())), [], 'nothing left in the temp area');
  t.ok(existsSync(path.join(eh, 'f.txt')) && existsSync(path.join(eh, 'd')) && !existsSync(path.join(eh, 'g.txt')) && !existsSync(path.join(eh, 'n.txt')));
  t.equal((await ta.inject('GET', `/api/v2/user/files?path=${q('/f.txt')}`, { token: et })).statusCode, 200, 'reads still work');
});

t.test('denied protocol HTTP and IP filters shut the REST API for the user', async (t) => {
  await addUser(ta, { username: 'frank', filters: { allow_api_key_auth: true } });
  const ft = await ta.userToken('frank', PASSWORD);
  const admin = await ta.adminToken();
  const k = await ta.inject('POST', '/api/v2/apikeys', { token: admin, payload: { name: 'frank-key', scope: 2, user: 'frank' } });
  t.equal(k.statusCode, 201, k.payload);
  const key = (k.result as { key: string }).key;
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: ft })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { apiKey: key })).statusCode, 200, 'user API key');
  t.equal((await ta.inject('POST', `/api/v2/user/files/upload?path=${q('/k.txt')}`, { apiKey: key, payload: 'k' })).statusCode, 201);
  await updateUser(ta, 'frank', { filters: { allow_api_key_auth: true, denied_protocols: ['HTTP'] } });
  for (const cred of [{ token: ft }, { apiKey: key }]) {
    const r = await ta.inject('GET', '/api/v2/user/dirs?path=/', cred);
    t.ok(r.statusCode === 401 || r.statusCode === 403, `REST API disabled: ${r.statusCode}`);
  }
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'frank', password: PASSWORD } })).statusCode, 403);
  await updateUser(ta, 'frank', { filters: { allow_api_key_auth: true, allowed_ip: ['10.0.0.0/8'] } });
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: ft })).statusCode, 401, 'token refused from a disallowed address');
  await updateUser(ta, 'frank', { filters: { allow_api_key_auth: true, denied_ip: ['127.0.0.1/32'] } });
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { apiKey: key })).statusCode, 401);
  await updateUser(ta, 'frank', { filters: { allow_api_key_auth: true } });
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: ft })).statusCode, 200, 'back once lifted');
  const adminOnUser = await ta.inject('GET', '/api/v2/user/dirs?path=/', { token: admin });
  t.equal(adminOnUser.statusCode, 401, 'admin tokens are not user credentials');
});

t.test('restrictions a group adds apply to its members (effective user)', async (t) => {
  const admin = await ta.adminToken();
  const g = await ta.inject('POST', '/api/v2/groups', {
    token: admin,
    payload: { name: 'readers', user_settings: { filters: { web_client: ['write-disabled'], max_upload_file_size: 10 } } },
  });
  t.equal(g.statusCode, 201, g.payload);
  const gh = await addUser(ta, { username: 'gina', groups: [{ name: 'readers', type: 1 }] });
  writeFileSync(path.join(gh, 'f.txt'), 'f');
  const gt = await ta.userToken('gina', PASSWORD);
  const p = await ta.inject('POST', `/api/v2/user/files/upload?path=${q('/p.txt')}`, { token: gt, payload: 'x' });
  expect403(t, p, 'write-disabled from the primary group', /write operations are disabled/);
  t.notOk(existsSync(path.join(gh, 'p.txt')));
  t.equal((await ta.inject('GET', `/api/v2/user/files?path=${q('/f.txt')}`, { token: gt })).statusCode, 200);
});

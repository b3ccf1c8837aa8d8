/**
 * The reference server on its own (examples/httpfs-server), spoken to with
 * raw node:http so that paths reach it exactly as crafted.
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { GO_MODE_DIR, startHttpFsServer } from '../../../examples/httpfs-server/src/server.js';
import { API_KEY, PASSWORD, startServer, USER } from './fixtures/server.js';
import { basicHeader, raw } from './fixtures/raw.js';

const AUTH = basicHeader(USER, PASSWORD);
const SECRET = 'TOP SECRET outside the root';

/** base/root is served; base/outside must stay unreachable. */
async function layout(t: Test) {
  const base = await mkdtemp(path.join(os.tmpdir(), 'ferry-httpfs-escape-'));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'dir'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), SECRET);
  await writeFile(path.join(root, 'ok.txt'), 'inside');
  await symlink(outside, path.join(root, 'escape'));
  await symlink(path.join(outside, 'created-through-link.txt'), path.join(root, 'dangling'));
  await symlink(path.join(root, 'dir'), path.join(root, 'inner-link'));
  return { base, root, outside };
}

t.test('authentication', async (t) => {
  const srv = await startServer(t);
  const stat = (headers: Record<string, string> = {}, p = '/api/v1/stat/%2F') => raw(srv.port, { path: p, headers });
  await t.test('no credentials', async (t) => {
    const r = await stat();
    t.equal(r.status, 401);
    t.match(r.headers['www-authenticate'], /^Basic realm="httpfs"/);
    t.equal(r.json().error, 'EAUTH');
  });
  await t.test('Basic', async (t) => {
    t.equal((await stat(AUTH)).status, 200, 'right user and password');
    t.equal((await stat(basicHeader(USER, 'wrong'))).status, 401, 'wrong password');
    t.equal((await stat(basicHeader('intruder', PASSWORD))).status, 401, 'wrong user');
    t.equal((await stat(basicHeader(USER, PASSWORD + 'x'))).status, 401, 'password with a suffix');
    t.equal((await stat({ authorization: 'Basic !!!' })).status, 401, 'malformed header');
    t.equal((await stat({ authorization: `Bearer ${API_KEY}` })).status, 401, 'other scheme');
  });
  await t.test('X-API-KEY', async (t) => {
    t.equal((await stat({ 'x-api-key': API_KEY })).status, 200, 'right key');
    t.equal((await stat({ 'x-api-key': 'nope' })).status, 401, 'wrong key');
    t.equal((await stat({ 'x-api-key': API_KEY.slice(0, -1) })).status, 401, 'key prefix');
  });
  await t.test('unknown routes need credentials too', async (t) => {
    t.equal((await stat({}, '/api/v1/nosuchop/x')).status, 401);
    t.equal((await stat(AUTH, '/api/v1/nosuchop/x')).status, 404);
    t.equal((await stat(AUTH, '/other/stat/x')).status, 404, 'outside the prefix');
  });
  await t.test('API key only', async (t) => {
    const keyOnly = await startServer(t, { username: undefined, password: undefined });
    t.equal((await raw(keyOnly.port, { path: '/api/v1/stat/%2F', headers: AUTH })).status, 401, 'Basic is not configured');
    t.equal((await raw(keyOnly.port, { path: '/api/v1/stat/%2F', headers: { 'x-api-key': API_KEY } })).status, 200);
    t.notOk((await raw(keyOnly.port, { path: '/api/v1/stat/%2F' })).headers['www-authenticate'], 'no Basic challenge');
  });
  await t.test('refuses to start without any scheme', async (t) => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-httpfs-noauth-'));
    t.teardown(() => rm(root, { recursive: true, force: true }));
    await t.rejects(startHttpFsServer({ root }), /--username\/--password and\/or --api-key/);
    const open = await startHttpFsServer({ root, allowAnonymous: true });
    t.teardown(() => open.close());
    t.equal((await raw(open.port, { path: '/api/v1/stat/%2F' })).status, 200, 'explicit anonymous mode');
  });
});

t.test('path confinement', async (t) => {
  const { root, outside } = await layout(t);
  const srv = await startServer(t, { root });
  const crafted = [
    '..%2F..%2Foutside%2Fsecret.txt',
    '../../outside/secret.txt',
    '..',
    '%2E%2E',
    '%2e%2e%2foutside%2fsecret.txt',
    '.%2E/outside/secret.txt',
    'dir%2F..%2F..%2Foutside%2Fsecret.txt',
    'dir/../../outside/secret.txt',
    '%252E%252E%252Foutside%252Fsecret.txt',
    '%252e%252e/outside',
    '..%5C..%5Coutside%5Csecret.txt',
    '..\\..\\outside\\secret.txt',
    'dir%5Cok.txt',
    '...%2F...%2Foutside',
    '%20..%2Foutside%2Fsecret.txt',
    'ok.txt%00.png',
    '%00',
    'dir%0A..%2F',
    '%C0%AE%C0%AE%2Foutside',
    '%E0%80%AE%E0%80%AE/outside',
    '%',
    '%2',
    'escape%2Fsecret.txt',
    'escape/secret.txt',
    'escape',
    'inner-link%2F..%2F..%2Foutside',
    'dangling',
  ];
  t.ok(crafted.length >= 20, `${crafted.length} crafted names`);
  for (const name of crafted) {
    for (const op of ['stat', 'open', 'readdir', 'mimetype', 'dirsize']) {
      const r = await raw(srv.port, { path: `/api/v1/${op}/${name}`, headers: AUTH });
      t.ok([400, 403, 404].includes(r.status), `${op} ${JSON.stringify(name)} refused (${r.status})`);
      t.notOk(r.body.includes(SECRET), `${op} ${JSON.stringify(name)} leaks nothing`);
    }
  }
  await t.test('absolute spellings stay under the root', async (t) => {
    const r = await raw(srv.port, { path: '/api/v1/open/%2Fetc%2Fpasswd', headers: AUTH });
    t.equal(r.status, 404, '/etc/passwd means <root>/etc/passwd');
  });
  await t.test('writes cannot escape', async (t) => {
    for (const name of ['..%2Fowned.txt', 'escape%2Fowned.txt', 'dangling', '%2E%2E%2Fowned.txt']) {
      const r = await raw(srv.port, { method: 'POST', path: `/api/v1/create/${name}`, headers: AUTH, body: 'x' });
      t.ok([400, 403].includes(r.status), `create ${name} refused (${r.status})`);
    }
    const mk = await raw(srv.port, { method: 'POST', path: '/api/v1/mkdir/escape%2Fnewdir', headers: AUTH });
    t.equal(mk.status, 403, 'mkdir through a symlink refused');
    for (const target of ['..%2Fowned.txt', 'escape%2Fowned.txt', '%252E%252E%252Fowned']) {
      const r = await raw(srv.port, { method: 'PATCH', path: `/api/v1/rename/ok.txt?target=${target}`, headers: AUTH });
      t.equal(r.status, 403, `rename to ${target} refused`);
    }
    const rm1 = await raw(srv.port, { method: 'DELETE', path: '/api/v1/remove/escape%2Fsecret.txt', headers: AUTH });
    t.equal(rm1.status, 403, 'remove through a symlink refused');
    const ch = await raw(srv.port, { method: 'PATCH', path: '/api/v1/truncate/escape%2Fsecret.txt?size=0', headers: AUTH });
    t.equal(ch.status, 403, 'truncate through a symlink refused');
    t.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), SECRET, 'the outside file is untouched');
    t.notOk(existsSync(path.join(outside, 'created-through-link.txt')), 'nothing created through the dangling link');
    t.notOk(existsSync(path.join(path.dirname(root), 'owned.txt')), 'nothing created beside the root');
    t.notOk(existsSync(path.join(outside, 'newdir')), 'no directory created outside');
    t.equal(await readFile(path.join(root, 'ok.txt'), 'utf8'), 'inside', 'the source of the refused renames is intact');
  });
  await t.test('symlinks inside the root keep working', async (t) => {
    const r = await raw(srv.port, { path: '/api/v1/stat/inner-link', headers: AUTH });
    t.equal(r.status, 200);
    t.ok(((r.json().mode as number) & GO_MODE_DIR) !== 0, 'followed to the directory');
  });
  await t.test('the root itself cannot be removed or renamed', async (t) => {
    t.equal((await raw(srv.port, { method: 'DELETE', path: '/api/v1/remove/%2F', headers: AUTH })).status, 403);
    t.equal((await raw(srv.port, { method: 'PATCH', path: '/api/v1/rename/%2F?target=x', headers: AUTH })).status, 403);
  });
});

t.test('routes and status codes', async (t) => {
  const srv = await startServer(t);
  const call = (method: string, p: string, body?: string, headers: Record<string, string> = {}) =>
    raw(srv.port, { method, path: `/api/v1/${p}`, headers: { ...AUTH, ...headers }, body });
  await writeFile(path.join(srv.root, 'f.txt'), '0123456789');
  await mkdir(path.join(srv.root, 'd'));

  await t.test('methods', async (t) => {
    const r = await call('GET', 'create/x');
    t.equal(r.status, 405);
    t.equal(r.headers.allow, 'POST');
    t.equal((await call('POST', 'stat/f.txt')).status, 405);
  });
  await t.test('stat and FileInfo', async (t) => {
    const f = (await call('GET', 'stat/f.txt')).json();
    t.match(f, { name: 'f.txt', size: 10 });
    t.equal(typeof f.last_modified, 'string');
    t.equal((f.mode as number) & GO_MODE_DIR, 0, 'file: no ModeDir');
    const d = (await call('GET', 'stat/d')).json();
    t.ok(((d.mode as number) >>> 0) & GO_MODE_DIR, 'directory: ModeDir (1<<31)');
    t.equal((await call('GET', 'stat/none')).status, 404);
    t.equal((await call('GET', 'stat/f.txt%2Fchild')).status, 409, 'under a file: ENOTDIR');
  });
  await t.test('open with offset', async (t) => {
    t.equal((await call('GET', 'open/f.txt')).body.toString(), '0123456789');
    const r = await call('GET', 'open/f.txt?offset=7');
    t.equal(r.body.toString(), '789');
    t.equal(r.headers['content-length'], '3');
    t.equal((await call('GET', 'open/f.txt?offset=10')).body.length, 0, 'offset at the end: empty');
    t.equal((await call('GET', 'open/f.txt?offset=99')).body.length, 0, 'offset past the end: empty');
    t.equal((await call('GET', 'open/f.txt?offset=-1')).status, 400);
    t.equal((await call('GET', 'open/f.txt?offset=abc')).status, 400);
    t.equal((await call('GET', 'open/d')).json().error, 'EISDIR');
  });
  await t.test('create flags', async (t) => {
    t.equal((await call('POST', 'create/n.txt', 'abc')).status, 201);
    t.equal((await call('POST', 'create/n.txt?flags=193', 'zzz')).json().error, 'EEXIST', 'O_CREAT|O_EXCL on an existing file');
    t.equal((await call('POST', 'create/n.txt?flags=1089', 'def')).status, 201, 'O_APPEND');
    t.equal(await readFile(path.join(srv.root, 'n.txt'), 'utf8'), 'abcdef');
    t.equal((await call('POST', 'create/n.txt', 'x')).status, 201, 'default truncates');
    t.equal(await readFile(path.join(srv.root, 'n.txt'), 'utf8'), 'x');
    t.equal((await call('POST', 'create/missing%2Fn.txt', 'x')).status, 404, 'missing parent');
    t.equal((await call('POST', 'create/d', 'x')).json().error, 'EISDIR', 'onto a directory');
    t.equal((await call('POST', 'create/n.txt?flags=x', 'x')).status, 400);
  });
  await t.test('mkdir, remove, rename', async (t) => {
    t.equal((await call('POST', 'mkdir/m')).status, 200);
    t.equal((await call('POST', 'mkdir/m')).json().error, 'EEXIST');
    t.equal((await call('POST', 'mkdir/a%2Fb')).status, 404, 'one level only');
    await writeFile(path.join(srv.root, 'm', 'inner'), 'i');
    t.equal((await call('DELETE', 'remove/m')).json().error, 'ENOTEMPTY');
    t.equal((await call('PATCH', 'rename/m%2Finner')).status, 400, 'target is required');
    t.equal((await call('PATCH', 'rename/m%2Finner?target=%2Fmoved')).status, 200);
    t.equal((await call('PATCH', 'rename/m?target=%2Fm%2Fsub')).status, 400, 'into itself');
    t.equal((await call('DELETE', 'remove/m')).status, 200);
    t.equal((await call('DELETE', 'remove/m')).status, 404);
    t.equal(await readFile(path.join(srv.root, 'moved'), 'utf8'), 'i');
  });
  await t.test('chmod, chtimes, truncate', async (t) => {
    t.equal((await call('PATCH', 'chmod/f.txt?mode=384')).status, 200);
    t.equal(((await call('GET', 'stat/f.txt')).json().mode as number) & 0o777, 0o600);
    t.equal((await call('PATCH', 'chmod/f.txt')).status, 400, 'mode is required');
    const when = '2021-03-04T05:06:07Z';
    t.equal((await call('PATCH', `chtimes/f.txt?access_time=${when}&modification_time=${when}`)).status, 200);
    t.equal((await call('GET', 'stat/f.txt')).json().last_modified, '2021-03-04T05:06:07.000Z');
    t.equal((await call('PATCH', `chtimes/f.txt?access_time=${when}&modification_time=yesterday`)).status, 400);
    t.equal((await call('PATCH', 'truncate/f.txt?size=4')).status, 200);
    t.equal(await readFile(path.join(srv.root, 'f.txt'), 'utf8'), '0123');
    t.equal((await call('PATCH', 'truncate/d?size=0')).json().error, 'EISDIR');
  });
  await t.test('readdir, dirsize, mimetype, statvfs', async (t) => {
    const list = (await call('GET', 'readdir/%2F')).json() as unknown as { name: string }[];
    t.ok(Array.isArray(list) && list.some((e) => e.name === 'f.txt'));
    t.equal((await call('GET', 'readdir/f.txt')).json().error, 'ENOTDIR');
    t.same((await call('GET', 'dirsize/%2F')).json(), { files: 3, size: 4 + 1 + 1 }, 'f.txt, n.txt, moved');
    t.same((await call('GET', 'mimetype/f.txt')).json(), { mime: 'text/plain' });
    t.same((await call('GET', 'mimetype/d')).json(), { mime: 'inode/directory' });
    const v = (await call('GET', 'statvfs/%2F')).json();
    for (const k of ['bsize', 'frsize', 'blocks', 'bfree', 'bavail', 'files', 'ffree', 'favail', 'fsid', 'flag', 'namemax']) {
      t.type(v[k], 'number', `statvfs.${k}`);
    }
  });
});

t.test('uploads that do not complete leave nothing', async (t) => {
  const srv = await startServer(t, { maxFileSize: 1000 });
  await t.test('declared too large: 413 before any byte is stored', async (t) => {
    const r = await raw(srv.port, { method: 'POST', path: '/api/v1/create/big', headers: AUTH, body: Buffer.alloc(2000) });
    t.equal(r.status, 413);
    t.notOk(existsSync(path.join(srv.root, 'big')));
  });
  await t.test('chunked past the limit', async (t) => {
    const r = await raw(srv.port, {
      method: 'POST',
      path: '/api/v1/create/chunked',
      headers: { ...AUTH, 'transfer-encoding': 'chunked' },
      body: Buffer.alloc(1500),
    }).catch((err: unknown) => ({ status: 0, err }));
    t.ok([0, 413].includes(r.status), `refused (${r.status})`);
    t.notOk(existsSync(path.join(srv.root, 'chunked')), 'no partial file');
  });
  await t.test('client disconnect mid-body', async (t) => {
    const sock = net.connect(srv.port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write(`POST /api/v1/create/cut HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Length: 900\r\n\r\n`);
    sock.write(Buffer.alloc(300));
    await new Promise((r) => setTimeout(r, 100));
    sock.destroy();
    for (let i = 0; i < 50 && existsSync(path.join(srv.root, 'cut')); i++) await new Promise((r) => setTimeout(r, 20));
    t.notOk(existsSync(path.join(srv.root, 'cut')), 'the partial file was removed');
  });
});

t.test('GET /open sends the length it declares when the file grows while it streams (keep-alive stays in step)', async (t) => {
  const srv = await startServer(t);
  const size = 8 * 1024 * 1024;
  await writeFile(path.join(srv.root, 'growing.bin'), Buffer.alloc(size, 1));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const get = (p: string, onHead?: () => Promise<void>) =>
    new Promise<{ status: number; length: number; declared: number }>((resolve, reject) => {
      const r = http.get({ host: '127.0.0.1', port: srv.port, path: p, headers: AUTH, agent }, (res) => {
        let length = 0;
        res.pause();
        void (onHead ?? (async () => undefined))().then(() => {
          res.on('data', (c: Buffer) => (length += c.length));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, length, declared: Number(res.headers['content-length']) }));
          res.resume();
        }, reject);
      });
      r.on('error', reject);
    });
  // the body is held back until the file has grown (the server's stream is still far from its end)
  const first = await get('/api/v1/open/growing.bin', () => appendFile(path.join(srv.root, 'growing.bin'), Buffer.alloc(4096, 2)));
  t.same(first, { status: 200, length: size, declared: size }, 'the bytes of the declared length, none of the appended ones');
  const second = await get('/api/v1/stat/growing.bin');
  t.equal(second.status, 200, 'the next response on the same connection parses');
});

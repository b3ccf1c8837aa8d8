import t from 'tap';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addUser, fileApp, multipart, PASSWORD } from '../helpers/user-files.js';

const SECRET = 'TOP SECRET 0123456789';
const ta = await fileApp();
t.teardown(() => ta.close());

// the world outside eve's home: a sibling directory, another user's home, the data dir
const outside = path.join(ta.dataDir, 'outside');
mkdirSync(path.join(outside, 'deep'), { recursive: true });
writeFileSync(path.join(outside, 'secret.txt'), SECRET);
writeFileSync(path.join(outside, 'deep', 'secret2.txt'), SECRET);
const otherHome = await addUser(ta, { username: 'other' });
writeFileSync(path.join(otherHome, 'x'), SECRET);
const home = await addUser(ta, { username: 'eve' });
mkdirSync(path.join(home, 'sub'));
mkdirSync(path.join(home, 'inner'));
writeFileSync(path.join(home, 'sub', 'f.txt'), 'mine');
symlinkSync(outside, path.join(home, 'link-out'));
symlinkSync(path.join(outside, 'secret.txt'), path.join(home, 'file-link'));
symlinkSync(path.join(outside, 'not-yet'), path.join(home, 'dangling'));
symlinkSync('../..', path.join(home, 'inner', 'parent-link'));
symlinkSync('/', path.join(home, 'root-link'));
symlinkSync(path.join(home, 'sub'), path.join(home, 'ok-link'));
const token = await ta.userToken('eve', PASSWORD);

/** Every file and directory under a root with size and mtime, following nothing. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      const st = lstatSync(p);
      out[path.relative(root, p)] = `${st.mode}:${st.size}:${st.mtimeMs}:${st.isFile() ? readFileSync(p, 'utf8') : ''}`;
      if (st.isDirectory()) walk(p);
    }
  };
  walk(root);
  return out;
}
const watched = [outside, otherHome, path.join(ta.dataDir, 'folders')].filter(existsSync);
const before = watched.map(snapshot);

/** Crafted paths, sent as `encodeURIComponent(p)` unless raw (then put in the URL as they are). */
const CRAFTED: { p: string; raw?: boolean }[] = [
  { p: '..' },
  { p: '../' },
  { p: '/..' },
  { p: '../outside/secret.txt' },
  { p: '/../outside/secret.txt' },
  { p: '../../outside/secret.txt' },
  { p: 'sub/../../outside/secret.txt' },
  { p: '/sub/./../../outside' },
  { p: './../outside' },
  { p: '..\\outside\\secret.txt' },
  { p: '\\..\\outside' },
  { p: 'sub\\..\\..\\outside\\secret.txt' },
  { p: '..\\/outside' },
  { p: ' ../outside' },
  { p: '.. /outside' },
  { p: '...' },
  { p: '..../outside' },
  { p: '%2e%2e/outside/secret.txt' },
  { p: '%2E%2E%2Foutside' },
  { p: '..%2foutside%2fsecret.txt' },
  { p: '..%5coutside' },
  { p: '.%2e/outside' },
  { p: '%2e./outside' },
  { p: '%252e%252e/outside' },
  { p: '%25252e%25252e' },
  { p: '%2e%2e', raw: true },
  { p: '..%2F..%2Foutside', raw: true },
  { p: '%2e%2e%2f%2e%2e%2foutside', raw: true },
  { p: '%252e%252e%252foutside', raw: true },
  { p: '%2e%2e%5c%2e%2e%5coutside', raw: true },
  { p: '%c0%ae%c0%ae/outside', raw: true },
  { p: '%uff0e%uff0e/outside', raw: true },
  { p: 'sub/f.txt%00.jpg', raw: true },
  { p: '%00', raw: true },
  { p: 'a\u0000b' },
  { p: '\u0000' },
  { p: 'sub/\u0001' },
  { p: '/etc/passwd' },
  { p: '//outside/secret.txt' },
  { p: '\\\\server\\share\\x' },
  { p: 'C:\\Windows\\win.ini' },
  { p: 'C:/outside' },
  { p: '~/../outside' },
  { p: '..\u2215outside' },
  { p: '\u002e\u002e/outside' },
  { p: 'link-out' },
  { p: 'link-out/secret.txt' },
  { p: 'link-out/deep/secret2.txt' },
  { p: 'link-out/new.txt' },
  { p: 'file-link' },
  { p: 'dangling' },
  { p: 'dangling/x' },
  { p: 'inner/parent-link' },
  { p: 'inner/parent-link/other/x' },
  { p: 'inner/parent-link/new.txt' },
  { p: 'root-link/etc/passwd' },
  { p: 'root-link' },
];

const url = (route: string, c: { p: string; raw?: boolean }, extra = '') => `${route}?path=${c.raw ? c.p : encodeURIComponent(c.p)}${extra}`;

t.test(`${CRAFTED.length} crafted paths through every route never reach outside the root`, async (t) => {
  t.ok(CRAFTED.length >= 50);
  const statuses = new Map<string, number[]>();
  for (const c of CRAFTED) {
    const tries: [string, string, unknown?, Record<string, string>?][] = [
      ['GET', url('/api/v2/user/files', c)],
      ['GET', url('/api/v2/user/files', c), undefined, { range: 'bytes=0-5' }],
      ['GET', url('/api/v2/user/dirs', c)],
      ['POST', url('/api/v2/user/files/upload', c), 'PWNED', { 'content-type': 'application/octet-stream' }],
      ['POST', url('/api/v2/user/files/upload', c, '&mkdir_parents=true'), 'PWNED', { 'content-type': 'application/octet-stream' }],
      ['POST', url('/api/v2/user/dirs', c, '&mkdir_parents=true')],
      ['DELETE', url('/api/v2/user/files', c)],
      ['DELETE', url('/api/v2/user/dirs', c)],
      ['POST', url('/api/v2/user/file-actions/move', c, '&target=%2Fmoved')],
      ['POST', `/api/v2/user/file-actions/move?path=%2Fsub%2Ff.txt&target=${c.raw ? c.p : encodeURIComponent(c.p)}`],
      ['POST', url('/api/v2/user/file-actions/copy', c, '&target=%2Fcopied')],
      ['POST', `/api/v2/user/file-actions/copy?path=%2Fsub%2Ff.txt&target=${c.raw ? c.p : encodeURIComponent(c.p)}`],
      ['PATCH', url('/api/v2/user/files/metadata', c), { modification_time: 0 }],
      ['POST', url('/api/v2/user/files', c), ...(Object.values(multipart([{ name: 'pwn.txt', data: 'PWNED' }])) as [Buffer, Record<string, string>])],
      ['POST', '/api/v2/user/streamzip', [c.p]],
    ];
    for (const [method, u, payload, headers] of tries) {
      const r = await ta.inject(method, u, { token, payload: payload as never, headers });
      t.ok(r.statusCode < 500, `${method} ${u} -> ${r.statusCode} ${r.statusCode >= 500 ? r.payload : ''}`);
      t.notOk(r.rawPayload.includes(SECRET), `${method} ${u}: nothing from outside in the answer`);
      if (r.statusCode === 200 && method === 'GET' && u.includes('/user/files')) t.fail(`download succeeded: ${u}`);
      const k = `${method} ${u.split('?')[0]}`;
      statuses.set(k, [...(statuses.get(k) ?? []), r.statusCode]);
    }
  }
  t.same(watched.map(snapshot), before, 'nothing outside the home was read into a response, created, changed or removed');
  t.notOk(existsSync(path.join(outside, 'not-yet')), 'the dangling link target was not created');
  // the links themselves still exist (removing a link through the API would be fine; following it is not)
  for (const l of ['link-out', 'file-link', 'dangling', 'inner/parent-link', 'root-link'])
    t.ok(lstatSync(path.join(home, l)).isSymbolicLink() || !existsSync(path.join(home, l)));
});

t.test('escape attempts are refused with a clear 4xx', async (t) => {
  const cases: [string, number][] = [
    ['../outside/secret.txt', 403],
    ['..\\outside\\secret.txt', 403],
    ['%2e%2e/outside/secret.txt', 403],
    ['a\u0000b', 400],
    ['link-out/secret.txt', 403],
    ['file-link', 403],
    ['inner/parent-link/other/x', 403],
  ];
  for (const [p, status] of cases) {
    const r = await ta.inject('GET', `/api/v2/user/files?path=${encodeURIComponent(p)}`, { token });
    t.equal(r.statusCode, status, `${JSON.stringify(p)}: ${r.payload}`);
    t.match(JSON.parse(r.payload), { message: String, error: String });
  }
  const raw = await ta.inject('GET', '/api/v2/user/files?path=%252e%252e%252foutside%252fsecret.txt', { token });
  t.equal(raw.statusCode, 403, 'double-encoded');
  const up = await ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent('dangling')}`, { token, payload: 'x' });
  t.equal(up.statusCode, 403, `writing through a dangling link: ${up.payload}`);
  t.notOk(existsSync(path.join(outside, 'not-yet')));
});

t.test('absolute-looking paths are rooted in the home; links inside the home work', async (t) => {
  const r = await ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent('/etc/passwd')}&mkdir_parents=1`, { token, payload: 'mine' });
  t.equal(r.statusCode, 201, r.payload);
  t.equal(readFileSync(path.join(home, 'etc', 'passwd'), 'utf8'), 'mine');
  const back = await ta.inject('GET', `/api/v2/user/files?path=${encodeURIComponent('etc\\passwd')}`, { token });
  t.equal(back.payload, 'mine', 'backslash separators');
  writeFileSync(path.join(home, 'sub', 'g.txt'), 'linked');
  const viaLink = await ta.inject('GET', `/api/v2/user/files?path=${encodeURIComponent('/ok-link/g.txt')}`, { token });
  t.equal(viaLink.statusCode, 200);
  t.equal(viaLink.payload, 'linked');
  t.ok(statSync(path.join(home, 'sub')).isDirectory());
});

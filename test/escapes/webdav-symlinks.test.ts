// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { DavUser, PROPPATCH } from './helpers/webdav.js';
import { homeFiles, INSIDE, OUTSIDE_LINKS, resetHome, startWorld } from './helpers/world.js';
import { watchHandleWarnings } from './helpers/handle-warnings.js';

// The symlink policy of symlinks.test.ts over WebDAV: a link planted in a
// home is followed only when its target stays inside the home; a link to
// the outside (or a dangling one) is refused with 403 on direct access
// (GET, HEAD, PROPFIND, PUT, MKCOL, PROPPATCH, LOCK, DELETE, COPY and MOVE
// from it or into it) and left out of PROPFIND listings. No directory
// handle is left for the garbage collector.

const handleWarnings = watchHandleWarnings();

const w = await startWorld({ webdav: true });
t.teardown(() => w.close());
for (const u of w.users) await resetHome(u, w.dataDir);
const clients = w.users.map((u) => new DavUser(w, u));
t.teardown(() => clients.forEach((c) => c.close()));

/** The names a PROPFIND Depth 1 answer lists below `dir` (hrefs decoded, the collection itself left out). */
function listed(body: Buffer, dir: string): string[] {
  const base = dir.endsWith('/') ? dir : dir + '/';
  return [...body.toString().matchAll(/<D:href>([^<]*)<\/D:href>/g)]
    .map((m) => decodeURIComponent(m[1]!))
    .filter((h) => h !== base && h !== dir)
    .map((h) => h.slice(base.length).replace(/\/$/, ''))
    .sort();
}

for (const d of clients) {
  const u = d.user;

  t.test(`${u.name} (provider ${u.provider}): listings leave outside links out, keep inside ones`, async (t) => {
    const top = await d.propfind('/', '1');
    t.equal(top.status, 207);
    const names = listed(top.body, '/');
    for (const l of OUTSIDE_LINKS) t.notOk(names.includes(l), `/ does not list ${l}`);
    t.ok(
      ['chain-in', 'inside.txt', 'nest'].every((n) => names.includes(n)),
      `the inside link, files and directories are listed (${names.join(', ')})`,
    );
    const nest = await d.propfind('/nest', '1');
    t.equal(nest.status, 207);
    t.same(listed(nest.body, '/nest'), ['in', 'ok.txt'], '/nest: its file and its inside link only');
    const inner = await d.propfind('/inner/', '1');
    t.equal(inner.status, 207);
    t.same(listed(inner.body, '/inner'), [], '/inner: the link to the parent of the home is left out');
    const shared = await d.propfind('/shared', '1');
    t.same(listed(shared.body, '/shared'), ['ok.txt', 'sub'], '/shared: no outside link');
  });

  t.test(`${u.name}: direct access through outside links is refused with 403`, async (t) => {
    for (const p of [
      '/link-dir/secret.txt',
      '/link-file',
      '/dangling',
      '/rel-up/secret.txt',
      '/rel-file',
      '/chain1/secret.txt',
      '/nest/out/secret.txt',
      '/nest/link-file',
      '/inner/up/vic/secret.txt',
      '/link-root/etc/hostname',
    ]) {
      t.equal((await d.request('GET', p)).status, 403, `GET ${p}`);
      t.equal((await d.request('HEAD', p)).status, 403, `HEAD ${p}`);
      t.equal((await d.propfind(p, '0')).status, 403, `PROPFIND ${p}`);
      t.equal((await d.copyMove('COPY', p, '/copied.txt')).status, 403, `COPY ${p} into the home`);
    }
    for (const p of ['/link-dir', '/nest/out', '/rel-up', '/chain1']) {
      t.equal((await d.propfind(p, '1')).status, 403, `PROPFIND Depth 1 ${p}`);
      t.equal((await d.propfind(p + '/', '0')).status, 403, `PROPFIND ${p}/`);
    }
    t.equal((await d.request('PUT', '/dangling', {}, Buffer.from('PWNED'))).status, 403, 'PUT through a dangling link');
    t.equal((await d.request('PUT', '/dangling-dir/x', {}, Buffer.from('PWNED'))).status, 403, 'PUT below a dangling directory link');
    t.equal((await d.request('PUT', '/link-dir/new.txt', {}, Buffer.from('PWNED'))).status, 403, 'PUT into an outside directory link');
    t.equal((await d.lock('/dangling')).status, 403, 'LOCK of a dangling link (would create the target)');
    t.notOk(existsSync(path.join(u.outside, 'not-yet')), 'the dangling target was not created');
    t.equal((await d.request('MKCOL', '/link-dir/newdir')).status, 403, 'MKCOL through an outside link');
    t.equal((await d.request('PROPPATCH', '/link-file', {}, PROPPATCH)).status, 403, 'PROPPATCH of an outside file link');
    t.equal((await d.lock('/link-file')).status, 403, 'LOCK of an outside file link');
    t.equal((await d.request('DELETE', '/link-dir/secret.txt')).status, 403, 'DELETE through an outside link');
    t.equal((await d.copyMove('MOVE', '/nest/out/secret.txt', '/stolen.txt')).status, 403, 'MOVE out through an outside link');
    t.equal((await d.copyMove('MOVE', '/inside.txt', '/link-dir/planted.txt')).status, 403, 'MOVE into an outside link');
    t.equal((await d.copyMove('COPY', '/inside.txt', `http://${d.host}/nest/out/planted.txt`)).status, 403, 'COPY into an outside link');
    t.equal((await d.copyMove('COPY', '/sub', '/link-dir/sub')).status, 403, 'COPY of a directory into an outside link');
    t.same(
      [...(await homeFiles(u.home)).keys()].filter((f) => /copied|stolen|planted/.test(f)),
      [],
      'nothing was copied or moved into the home',
    );
    await resetHome(u, w.dataDir);
  });

  t.test(`${u.name}: inside links are followed`, async (t) => {
    const want = `${INSIDE} sub/f.txt`;
    for (const p of ['/chain-in/f.txt', '/nest/in/f.txt']) {
      const r = await d.request('GET', p);
      t.equal(r.status, 200, `GET ${p}`);
      t.equal(r.body.toString(), want, `GET ${p}: the content`);
    }
    const list = await d.propfind('/chain-in', '1');
    t.equal(list.status, 207);
    t.same(listed(list.body, '/chain-in'), ['f.txt'], 'PROPFIND chain-in lists sub');
    t.equal((await d.request('PUT', '/chain-in/new.txt', {}, Buffer.from('mine'))).status, 201, 'a PUT through an inside link');
    t.equal((await d.copyMove('COPY', '/inside.txt', '/nest/in/copied.txt')).status, 201, 'a COPY into an inside link');
    const files = await homeFiles(u.home);
    t.ok(files.has('sub/new.txt') && files.has('sub/copied.txt'), 'both landed in /sub');
    await resetHome(u, w.dataDir);
  });
}

t.test('no directory handle is left for the garbage collector', (t) => handleWarnings.check(t));

t.test('the canary', async (t) => {
  t.same(w.canary.leaks, [], 'no answer held canary content, digests or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff, [], `${path.relative(w.dataDir, root)}: untouched`);
});

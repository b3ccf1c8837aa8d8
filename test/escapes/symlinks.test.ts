// @ferry-test database-independent: the accounts and shares live in the database only as
// settings; what is checked is the filesystem's confinement (runs once in CI, on SQLite).
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { unzip } from '@ferry/testkit';
import { OUTSIDE_LINKS, homeFiles, INSIDE, q, resetHome, startWorld, type Reply, type User } from './helpers/world.js';
import { watchHandleWarnings } from './helpers/handle-warnings.js';

// The decided policy for symlinks planted in a home: a link is followed only
// when its target stays inside the home; a link to the outside (or a
// dangling one) is refused on direct access (403) and left out of listings
// and zips. A zip of a directory holding such links (user streamzip, a
// share's zip download) is complete and valid and skips them, or fails
// before its first byte; no directory handle is left for the garbage
// collector ("Closing directory handle on garbage collection").

const handleWarnings = watchHandleWarnings();

const w = await startWorld();
t.teardown(() => w.close());
for (const u of w.users) await resetHome(u, w.dataDir);

const names = (r: Reply) => (JSON.parse(r.body.toString()) as { name: string }[]).map((e) => e.name).sort();
const get = (u: User, url: string, token = u.token) => w.client.request('GET', url, { token });

for (const u of w.users) {
  t.test(`${u.name} (provider ${u.provider}): listings leave outside links out, keep inside ones`, async (t) => {
    const root = await get(u, '/api/v2/user/dirs?path=%2F');
    t.equal(root.status, 200, root.body.toString());
    const top = names(root);
    for (const l of OUTSIDE_LINKS) t.notOk(top.includes(l), `/ does not list ${l}`);
    t.ok(top.includes('chain-in') && top.includes('inside.txt') && top.includes('nest'), 'the inside link, files and directories are listed');
    const nest = await get(u, '/api/v2/user/dirs?path=%2Fnest');
    t.equal(nest.status, 200);
    t.same(names(nest), ['in', 'ok.txt'], '/nest: its file and its inside link only');
    const inner = await get(u, '/api/v2/user/dirs?path=%2Finner');
    t.same(names(inner), [], '/inner: the link to the parent of the home is left out');
  });

  t.test(`${u.name}: direct access through outside links is refused with 403`, async (t) => {
    for (const p of [
      'link-dir/secret.txt',
      'link-file',
      'dangling',
      'rel-up/secret.txt',
      'rel-file',
      'chain1/secret.txt',
      'nest/out/secret.txt',
      'nest/link-file',
      'inner/up/vic/secret.txt',
      'link-root/etc/hostname',
    ]) {
      const r = await get(u, `/api/v2/user/files?path=${q(p)}`);
      t.equal(r.status, 403, `GET ${p}: ${r.body.toString()}`);
    }
    for (const p of ['link-dir', 'nest/out', 'rel-up', 'chain1']) {
      const r = await get(u, `/api/v2/user/dirs?path=${q(p)}`);
      t.equal(r.status, 403, `list ${p}: ${r.body.toString()}`);
    }
    const up = await w.client.request('POST', `/api/v2/user/files/upload?path=${q('dangling')}`, { token: u.token, body: 'PWNED' });
    t.equal(up.status, 403, `upload through a dangling link: ${up.body.toString()}`);
    t.notOk(existsSync(path.join(u.outside, 'not-yet')), 'the dangling target was not created');
    const mk = await w.client.request('POST', `/api/v2/user/dirs?path=${q('link-dir/newdir')}`, { token: u.token });
    t.equal(mk.status, 403, `mkdir through an outside link: ${mk.body.toString()}`);
    const cp = await w.client.request('POST', `/api/v2/user/file-actions/copy?path=${q('nest/link-file')}&target=${q('/copied.txt')}`, { token: u.token });
    t.equal(cp.status, 403, `copy of an outside file link: ${cp.body.toString()}`);
  });

  t.test(`${u.name}: inside links are followed`, async (t) => {
    for (const p of ['chain-in/f.txt', 'nest/in/f.txt']) {
      const r = await get(u, `/api/v2/user/files?path=${q(p)}`);
      t.equal(r.status, 200, p);
      t.equal(r.body.toString(), `${INSIDE} sub/f.txt`);
    }
  });

  t.test(`${u.name}: a copy of the directory holding outside links takes nothing from outside`, async (t) => {
    const r = await w.client.request('POST', `/api/v2/user/file-actions/copy?path=${q('/nest')}&target=${q('/nest-copy')}`, { token: u.token });
    t.ok(r.status < 500, `copy /nest: ${r.status} ${r.body.toString()}`);
    for (const [rel, data] of await homeFiles(u.home)) {
      for (const n of w.canary.needles) if (data.includes(n.bytes)) t.fail(`${rel} holds ${n.what}`);
    }
    await resetHome(u, w.dataDir);
  });
}

/**
 * A zip over a real socket: either refused before the first byte (a complete
 * 4xx answer) or a complete 200 whose body is a valid zip. Returns the entries
 * (undefined when refused).
 */
function zipOutcome(t: Test, label: string, r: Reply): Map<string, Buffer> | undefined {
  if (r.status >= 400 && r.status < 500) {
    t.ok(r.complete, `${label}: refused with ${r.status}, complete`);
    return undefined;
  }
  t.equal(r.status, 200, `${label}: ${r.status} ${r.status === 200 ? '' : r.body.toString()}`);
  t.ok(r.complete, `${label}: the body is complete (${r.body.length} bytes${r.error ? `, ${r.error}` : ''})`);
  let entries: Map<string, Buffer> | undefined;
  t.doesNotThrow(() => (entries = unzip(r.body)), `${label}: a valid zip (central directory read, every entry checked)`);
  return entries;
}

const outsideEntry = (name: string) =>
  /(^|\/)(out|out-file|link-file|dangling|dangling-dir|link-dir|rel-up|rel-file|chain1|chain2|link-root|link-data|loop-a|loop-b|up)(\/|$)/.test(name);

for (const u of w.users) {
  t.test(`${u.name}: POST /user/streamzip of directories holding outside links`, async (t) => {
    for (const paths of [['/nest'], ['/shared'], ['/'], ['/nest', '/inside.txt'], ['/inner']]) {
      const r = await w.client.request('POST', '/api/v2/user/streamzip', { token: u.token, json: paths });
      const entries = zipOutcome(t, `zip ${paths.join(',')}`, r);
      if (!entries) continue;
      const list = [...entries.keys()];
      t.same(list.filter(outsideEntry), [], `zip ${paths.join(',')}: no entry through an outside link`);
      if (paths[0] === '/nest') t.same(entries.get('nest/ok.txt')?.toString(), `${INSIDE} nest/ok.txt`, 'the inside file is in it');
    }
    const direct = await w.client.request('POST', '/api/v2/user/streamzip', { token: u.token, json: ['/nest/out'] });
    t.equal(direct.status, 403, `a zip naming an outside link is refused before the first byte: ${direct.body.toString().slice(0, 200)}`);
  });

  t.test(`${u.name}: a share's zip download of directories holding outside links`, async (t) => {
    for (const paths of [['/nest'], ['/shared'], ['/nest', '/shared']]) {
      const s = await w.client.request('POST', '/api/v2/user/shares', { token: u.token, json: { name: `zip ${paths.join(',')}`, scope: 1, paths } });
      t.equal(s.status, 201, s.body.toString());
      const id = String(s.headers['x-object-id']);
      const r = await w.client.request('GET', `/api/v2/shares/${id}`);
      const entries = zipOutcome(t, `share zip ${paths.join(',')}`, r);
      if (entries) t.same([...entries.keys()].filter(outsideEntry), [], 'no entry through an outside link');
      if (paths.length === 1) {
        const dirs = await w.client.request('GET', `/api/v2/shares/${id}/dirs`);
        t.equal(dirs.status, 200);
        t.same(
          names(dirs).filter((n) => outsideEntry(n)),
          [],
          `share listing of ${paths[0]} leaves the outside links out`,
        );
      }
    }
  });
}

t.test('no directory handle is left for the garbage collector', (t) => handleWarnings.check(t));

t.test('the canary', async (t) => {
  t.same(w.canary.leaks, [], 'no reply held canary content or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff, [], `${path.relative(w.dataDir, root)}: untouched`);
});

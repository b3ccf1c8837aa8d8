// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import path from 'node:path';
import { craftedPaths, forUser, type Crafted } from './helpers/crafted.js';
import { DavUser, davTargets, PROPPATCH } from './helpers/webdav.js';
import { canaryInHome, INSIDE, resetHome, startWorld, type User } from './helpers/world.js';

// The crafted paths of paths.test.ts (`..` in every spelling, encoded
// dots and separators, backslashes, NUL and control characters, absolute
// and foreign paths, very long paths, the planted symlinks) through every
// WebDAV method that takes a path (GET, HEAD, PROPFIND Depth 0 and 1, PUT,
// DELETE, MKCOL, PROPPATCH, LOCK and UNLOCK, COPY and MOVE with the crafted
// path as the source and as the Destination: an absolute URL on the same
// host, a bare path, an absolute URL on another host), each crafted path
// sent percent-encoded and as literally as a request line allows (raw
// request targets through node's http client), for a provider 0 (fs-local)
// and a provider 4 (fs-crypt) user. No answer (body or header) holds canary
// bytes, digests or names; nothing outside the home is read, listed,
// written, renamed, removed or touched (canary compared byte for byte with
// inode, mtime and ctime); no request answers 500 or breaks its
// connection, and every refusal is a 4xx (a Destination on another host:
// 502, as RFC 4918 section 9.8.5 says).

const w = await startWorld({ webdav: true, webdavShares: true });
t.teardown(() => w.close());

const problems: string[] = [];
/** Statuses seen, by method (shown as a comment: proof the requests reached the server as a logged-in user). */
const statuses = new Map<string, Map<number, number>>();
const tally = (what: string, status: number) => {
  const m = statuses.get(what) ?? new Map<number, number>();
  m.set(status, (m.get(status) ?? 0) + 1);
  statuses.set(what, m);
};
const short = (s: string) => (s.length > 120 ? s.slice(0, 120) + '…' : s);

async function reset(u: User): Promise<void> {
  problems.push(...(await canaryInHome(w.canary, u)));
  await resetHome(u, w.dataDir);
}

/** A crafted path with a `.` or `..` segment (in any spelling the server decodes): refused lexically (400) before any lookup. */
const lexical = (c: Crafted) => c.kind !== 'symlink' || c.p.split('/').some((s) => s === '.' || s === '..');

async function davPaths(d: DavUser, c: Crafted, target: string): Promise<void> {
  const u = d.user;
  const where = (what: string) => `${u.name} ${what} ${short(JSON.stringify(target))}`;
  const answered = (what: string, status: number, error?: string, allow502 = false) => {
    tally(what.replace(/ \(.*\)$/, ''), status);
    if (status === 0) problems.push(`${where(what)}: no answer (${error ?? 'connection broken'})`);
    else if (status >= 500 && !(allow502 && status === 502)) problems.push(`${where(what)}: ${status}`);
  };
  // reads: nothing of these names exists in the home, so every one is refused with a 4xx
  const reads = await Promise.all([
    d.request('GET', target).then((r) => ['GET', r] as const),
    d.request('HEAD', target).then((r) => ['HEAD', r] as const),
    d.propfind(target, '0').then((r) => ['PROPFIND 0', r] as const),
    d.propfind(target, '1').then((r) => ['PROPFIND 1', r] as const),
  ]);
  for (const [what, r] of reads) {
    answered(what, r.status, r.error);
    if (r.status > 0 && (r.status < 400 || r.status >= 500)) problems.push(`${where(what)}: ${r.status}, expected a refusal (4xx)`);
    else if (what === 'GET' && c.download && !lexical(c) && !c.download.includes(r.status)) {
      problems.push(`${where(what)}: ${r.status}, expected ${c.download.join('/')}`);
    }
  }
  // writes and destructive requests: each one starts from the fixture (an earlier success inside the home must not hide a later escape)
  const same = `http://${d.host}${target}`;
  const tries: [string, () => ReturnType<DavUser['request']>, boolean?][] = [
    ['PUT', () => d.request('PUT', target, {}, Buffer.from('PWNED'))],
    ['DELETE', () => d.request('DELETE', target)],
    ['MKCOL', () => d.request('MKCOL', target)],
    ['PROPPATCH', () => d.request('PROPPATCH', target, {}, PROPPATCH)],
    ['LOCK', () => d.lock(target)],
    ['UNLOCK', () => d.request('UNLOCK', target, { 'lock-token': '<opaquelocktoken:00000000-0000-4000-8000-000000000000>' })],
    ['COPY from', () => d.copyMove('COPY', target, `http://${d.host}/copied`)],
    ['MOVE from', () => d.copyMove('MOVE', target, '/moved')],
  ];
  for (const [form, dest, other] of [
    ['same host', same, false],
    ['same host, https', `https://${d.host}${target}`, false],
    ['bare path', target, false],
    ['other host', `http://evil.example${target}`, true],
  ] as const) {
    tries.push(
      [`COPY file to (${form})`, () => d.copyMove('COPY', '/inside.txt', dest), other],
      [`MOVE file to (${form})`, () => d.copyMove('MOVE', '/inside.txt', dest), other],
      [`COPY dir to (${form})`, () => d.copyMove('COPY', '/sub', dest), other],
      [`MOVE dir to (${form}, Overwrite F)`, () => d.copyMove('MOVE', '/nest', dest, 'F'), other],
    );
  }
  for (const [what, attempt, other] of tries) {
    const r = await attempt();
    answered(what, r.status, r.error, other);
    if (other && r.status < 300) problems.push(`${where(what)}: ${r.status} for a Destination on another host`);
    if (r.status < 300) await reset(u);
  }
}

for (const u of w.users) await resetHome(u, w.dataDir);

t.test('crafted paths and planted symlinks through every WebDAV method, as source and as Destination', async (t) => {
  const clients = w.users.map((u) => new DavUser(w, u));
  t.teardown(() => clients.forEach((c) => c.close()));
  // the control: each user is logged in and reaches its own files, so the refusals below are the paths'
  for (const d of clients) {
    const get = await d.request('GET', '/inside.txt');
    t.equal(get.status, 200, `${d.user.name}: GET /inside.txt`);
    t.equal(get.body.toString(), `${INSIDE} inside.txt`, `${d.user.name}: its own file's content`);
    const list = await d.propfind('/', '1');
    t.equal(list.status, 207, `${d.user.name}: PROPFIND / Depth 1`);
    t.match(list.body.toString(), /<D:href>\/inside\.txt<\/D:href>/, `${d.user.name}: the listing names inside.txt`);
  }
  let targets = 0;
  await Promise.all(
    clients.map(async (d) => {
      for (const c of forUser(d.user, craftedPaths(d.user, w.dataDir))) {
        for (const target of davTargets(c)) {
          targets++;
          await davPaths(d, c, target);
          await reset(d.user);
        }
      }
    }),
  );
  const counts = new Map<string, number>();
  for (const d of clients) for (const [k, n] of d.counts) counts.set(k, (counts.get(k) ?? 0) + n);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  t.comment(`${targets} request targets; requests per method (${total} in all, both users):`);
  for (const [k, n] of [...counts].sort()) t.comment(`  ${k}: ${n}`);
  t.comment('statuses per request:');
  for (const [k, m] of [...statuses].sort())
    t.comment(
      `  ${k}: ${[...m]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`,
    );
  t.ok(total >= 2000, `${total} requests`);
  t.same(problems.slice(0, 30), [], 'no 500, no broken connection, every read refused with a 4xx, nothing of the canary copied into the home');
});

t.test('request targets in absolute form, and Destinations with user info or another port', async (t) => {
  const clients = w.users.map((u) => new DavUser(w, u));
  t.teardown(() => clients.forEach((c) => c.close()));
  const seen: string[] = [];
  for (const d of clients) {
    const O = `outside/${d.user.name}`;
    for (const p of ['/../../' + O + '/secret.txt', '/link-dir/secret.txt', '/%2e%2e/%2e%2e/' + O, '/inside.txt']) {
      for (const target of [`http://${d.host}${p}`, `http://evil.example${p}`, `//${d.host}${p}`]) {
        for (const m of ['GET', 'PROPFIND', 'PUT', 'DELETE']) {
          const r = await d.request(m, target, m === 'PROPFIND' ? { depth: '1' } : {}, m === 'PUT' ? Buffer.from('PWNED') : undefined);
          seen.push(`${r.status}`);
          if (r.status === 0 || r.status >= 500) problems.push(`${d.user.name} ${m} ${target}: ${r.status || r.error}`);
          if (r.status < 300 && r.status > 0) await reset(d.user);
        }
      }
      for (const dest of [`http://user@${d.host}${p}`, `http://127.0.0.1:1${p}`, `http://localhost:${w.webdavPort}${p}`, `ftp://${d.host}${p}`]) {
        const r = await d.copyMove('COPY', '/inside.txt', dest);
        seen.push(`${r.status}`);
        if (r.status !== 502 && (r.status < 400 || r.status >= 500)) problems.push(`${d.user.name} COPY to ${dest}: ${r.status || r.error}`);
        if (r.status < 300 && r.status > 0) await reset(d.user);
      }
    }
  }
  t.comment(`statuses: ${[...new Set(seen)].sort().join(' ')} (${seen.length} requests)`);
  t.same(problems.slice(0, 30), [], 'no 500, no broken connection; a Destination elsewhere refused (502 or 4xx)');
});

t.test('crafted paths under a public share (/shares/<id>/, read-only): reads refused with a 4xx, every write with 403 or 400', async (t) => {
  const clients = w.users.map((u) => new DavUser(w, u));
  t.teardown(() => clients.forEach((c) => c.close()));
  const seen = new Map<string, Map<number, number>>();
  const note = (what: string, status: number) => {
    const m = seen.get(what) ?? new Map<number, number>();
    m.set(status, (m.get(status) ?? 0) + 1);
    seen.set(what, m);
  };
  let sent = 0;
  await Promise.all(
    clients.map(async (d) => {
      const u = d.user;
      // a share of /shared with the user's password as its password (the client's Basic credentials fit it)
      const made = await w.client.request('POST', '/api/v2/user/shares', {
        token: u.token,
        json: { name: 'dav', scope: 1, paths: ['/shared'], password: u.password },
      });
      t.equal(made.status, 201, `${u.name}: share created`);
      const id = String(made.headers['x-object-id']);
      const root = `/shares/${id}`;
      // the control: the share's own files are reached, and nothing beside them
      const ok = await d.request('GET', `${root}/ok.txt`);
      t.equal(ok.status, 200, `${u.name}: GET ${root}/ok.txt`);
      t.equal(ok.body.toString(), `${INSIDE} shared/ok.txt`);
      const list = await d.propfind(`${root}/`, '1');
      t.equal(list.status, 207, `${u.name}: PROPFIND the share`);
      t.match(list.body.toString(), new RegExp(`<D:href>${root}/sub/</D:href>`));
      t.notMatch(list.body.toString(), /inside\.txt/, 'the home beside the share is not listed');
      for (const c of forUser(u, craftedPaths(u, w.dataDir))) {
        for (const target of davTargets(c).map((p) => root + p)) {
          const where = `${u.name} ${short(JSON.stringify(target))}`;
          for (const [what, r] of [
            ['GET', await d.request('GET', target)],
            ['HEAD', await d.request('HEAD', target)],
            ['PROPFIND 0', await d.propfind(target, '0')],
            ['PROPFIND 1', await d.propfind(target, '1')],
          ] as const) {
            sent++;
            note(what, r.status);
            if (r.status < 400 || r.status >= 500) problems.push(`share ${where} ${what}: ${r.status || r.error}, expected a refusal (4xx)`);
          }
          for (const [what, r] of [
            ['PUT', await d.request('PUT', target, {}, Buffer.from('PWNED'))],
            ['DELETE', await d.request('DELETE', target)],
            ['MKCOL', await d.request('MKCOL', target)],
            ['PROPPATCH', await d.request('PROPPATCH', target, {}, PROPPATCH)],
            ['LOCK', await d.lock(target)],
            ['COPY from', await d.copyMove('COPY', target, `${root}/copied`)],
            ['MOVE to', await d.copyMove('MOVE', `${root}/ok.txt`, `http://${d.host}${target}`)],
          ] as const) {
            sent++;
            note(what, r.status);
            if (r.status !== 403 && r.status !== 400) problems.push(`share ${where} ${what}: ${r.status || r.error}, expected 403 (read-only) or 400`);
          }
        }
        await reset(u);
      }
    }),
  );
  t.comment(`${sent} requests under the shares; statuses per method:`);
  for (const [k, m] of [...seen].sort())
    t.comment(
      `  ${k}: ${[...m]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`,
    );
  t.ok(sent >= 1000, `${sent} requests`);
  t.same(problems.slice(0, 30), [], 'no 500, no broken connection, no read answered, no write let through, nothing of the canary');
});

t.test('the canary outside the homes', async (t) => {
  t.ok(w.canary.needles.length > 0 && w.canary.names.length > 0, 'the canary has content and names to look for');
  t.same(w.canary.leaks.slice(0, 20), [], 'no answer held canary content, digests or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff.slice(0, 30), [], `${path.relative(w.dataDir, root)}: not written, renamed, removed or touched`);
});

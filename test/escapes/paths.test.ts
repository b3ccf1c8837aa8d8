// @ferry-test database-independent: the accounts and shares live in the database only as
// settings; what is checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import path from 'node:path';
import { craftedPaths, forUser, inQuery, inUrlPath, sharePaths, type Crafted } from './helpers/crafted.js';
import { format } from '@ferry/fs-crypt';
import { canaryInHome, FIXTURE_FILES, homeFiles, multipart, resetHome, startWorld, until, type Reply, type User } from './helpers/world.js';

// Every route that takes a path, with crafted paths (`..` in every spelling,
// encoded and double-encoded dots and separators, backslashes, NUL and
// control characters, absolute and foreign paths, very long paths) and
// symlinks planted in the home (to an outside directory and file, dangling,
// relative `../../outside`, a chain of links, a directory holding an outside
// link, a link to another user's home, to /, a loop), for a provider 0
// (fs-local) and a provider 4 (fs-crypt) user, through real HTTP: user file
// routes, public share routes (share of a directory, TUS included), share
// creation, and the admin's quota scan and retention action. Nothing outside
// the home may be read (no reply holds canary bytes or canary names), listed,
// written, renamed, removed or touched (canary compared byte for byte with
// inode, mtime and ctime).

const w = await startWorld({ tus: true });
t.teardown(() => w.close());

const counts = new Map<string, number>();
const problems: string[] = [];
const short = (s: string) => (s.length > 160 ? s.slice(0, 160) + '…' : s);

interface Try {
  kind: string;
  method: string;
  url: string;
  token?: string;
  json?: unknown;
  body?: Buffer | string;
  headers?: Record<string, string>;
  /** Statuses allowed (default: any answer below 500). */
  allowed?: number[];
}

async function attempt(u: User, a: Try): Promise<Reply> {
  counts.set(a.kind, (counts.get(a.kind) ?? 0) + 1);
  const r = await w.client.request(a.method, a.url, { token: a.token ?? u.token, json: a.json, body: a.body, headers: a.headers });
  const where = `${u.name} ${a.method} ${short(a.url)}`;
  if (r.status === 0 || r.status >= 500) problems.push(`${where}: ${r.status} ${r.error ?? ''} ${short(r.body.toString())}`);
  else if (!r.complete) problems.push(`${where}: ${r.status}, the connection was cut (${r.error})`);
  else if (a.allowed && !a.allowed.includes(r.status)) problems.push(`${where}: ${r.status}, expected ${a.allowed.join('/')}: ${short(r.body.toString())}`);
  return r;
}

const ok = (r: Reply) => r.status >= 200 && r.status < 300;
const fourXX = (statuses?: number[]) => statuses ?? [400, 403, 404, 405, 409, 413, 414];

async function reset(u: User): Promise<void> {
  problems.push(...(await canaryInHome(w.canary, u)));
  await resetHome(u, w.dataDir);
}

async function userRoutes(u: User, c: Crafted): Promise<void> {
  const p = inQuery(c);
  const mp = multipart([{ name: 'pwned.txt', data: 'PWNED' }]);
  const named = multipart([{ name: c.p, data: 'PWNED' }]);
  const reads: Try[] = [
    { kind: 'GET /user/files', method: 'GET', url: `/api/v2/user/files?path=${p}`, allowed: fourXX(c.download) },
    { kind: 'GET /user/dirs', method: 'GET', url: `/api/v2/user/dirs?path=${p}` },
    { kind: 'POST /user/streamzip', method: 'POST', url: '/api/v2/user/streamzip', json: [c.p] },
    { kind: 'POST /user/file-actions/copy', method: 'POST', url: `/api/v2/user/file-actions/copy?path=${p}&target=%2Fcopied` },
  ];
  const writes: Try[] = [
    { kind: 'POST /user/files/upload', method: 'POST', url: `/api/v2/user/files/upload?path=${p}&mkdir_parents=true`, body: 'PWNED' },
    { kind: 'POST /user/files (multipart)', method: 'POST', url: `/api/v2/user/files?path=${p}&mkdir_parents=true`, body: mp.body, headers: mp.headers },
    { kind: 'POST /user/files (multipart)', method: 'POST', url: '/api/v2/user/files?path=%2F', body: named.body, headers: named.headers },
    { kind: 'POST /user/dirs', method: 'POST', url: `/api/v2/user/dirs?path=${p}&mkdir_parents=true` },
    { kind: 'PATCH /user/files/metadata', method: 'PATCH', url: `/api/v2/user/files/metadata?path=${p}`, json: { modification_time: 0 } },
    { kind: 'POST /user/file-actions/copy', method: 'POST', url: `/api/v2/user/file-actions/copy?path=%2Finside.txt&target=${p}` },
    { kind: 'PATCH /user/files (rename)', method: 'PATCH', url: `/api/v2/user/files?path=%2Finside.txt&target=${p}` },
    { kind: 'PATCH /user/dirs (rename)', method: 'PATCH', url: `/api/v2/user/dirs?path=%2Fsub&target=${p}` },
  ];
  const destructive: Try[] = [
    { kind: 'PATCH /user/files (rename)', method: 'PATCH', url: `/api/v2/user/files?path=${p}&target=%2Fmoved` },
    { kind: 'POST /user/file-actions/move', method: 'POST', url: `/api/v2/user/file-actions/move?path=${p}&target=%2Fmoved2` },
    { kind: 'DELETE /user/files', method: 'DELETE', url: `/api/v2/user/files?path=${p}` },
    { kind: 'DELETE /user/dirs', method: 'DELETE', url: `/api/v2/user/dirs?path=${p}` },
  ];
  for (const a of reads) await attempt(u, a);
  for (const a of [...writes, ...destructive]) {
    // each write starts from the fixture: an earlier success inside the home must not hide a later escape
    if (ok(await attempt(u, a))) await reset(u);
  }
}

async function createShare(u: User, paths: string[], scope = 3): Promise<Reply> {
  return w.client.request('POST', '/api/v2/user/shares', { token: u.token, json: { name: `s-${paths.join(',').slice(0, 40)}`, scope, paths } });
}

function tusCreate(shareId: string, rel: string, body: string): Try {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return {
    kind: 'POST /shares-chunked-uploads (TUS)',
    method: 'POST',
    url: '/api/v2/shares-chunked-uploads',
    token: '',
    body,
    headers: {
      'tus-resumable': '1.0.0',
      'upload-length': String(Buffer.byteLength(body)),
      'upload-metadata': `share_id ${b64(shareId)},path ${b64(rel)},mkdir_parents ${b64('true')}`,
      'content-type': 'application/offset+octet-stream',
    },
  };
}

async function shareRoutes(u: User, id: string, c: Crafted): Promise<void> {
  const p = inQuery(c);
  const named = multipart([{ name: c.p, data: 'PWNED' }]);
  const s = `/api/v2/shares/${id}`;
  const tries: Try[] = [
    { kind: 'GET /shares/{id}/files', method: 'GET', url: `${s}/files?path=${p}`, token: '', allowed: fourXX(c.download) },
    { kind: 'GET /shares/{id}/dirs', method: 'GET', url: `${s}/dirs?path=${p}`, token: '' },
    { kind: 'POST /shares/{id}/actions/mkdir', method: 'POST', url: `${s}/actions/mkdir?path=${p}&mkdir_parents=true`, token: '' },
    { kind: 'POST /shares/{id}/files/{filePath}', method: 'POST', url: `${s}/files/${inUrlPath(c)}`, token: '', body: 'PWNED' },
    { kind: 'POST /shares/{id} (multipart)', method: 'POST', url: s, token: '', body: named.body, headers: named.headers },
    tusCreate(id, c.p, 'PWNED'),
  ];
  for (const a of tries) if (ok(await attempt(u, a))) await reset(u);
}

/** A share created on a crafted path: refused, or (rooted in the home) harmless through every public route. */
async function shareOnPath(u: User, c: Crafted): Promise<void> {
  counts.set('POST /user/shares (paths)', (counts.get('POST /user/shares (paths)') ?? 0) + 1);
  const r = await createShare(u, [c.p]);
  if (r.status >= 500) problems.push(`${u.name} share on ${short(JSON.stringify(c.p))}: ${r.status} ${short(r.body.toString())}`);
  if (r.status !== 201) return;
  const id = String(r.headers['x-object-id']);
  const s = `/api/v2/shares/${id}`;
  for (const a of [
    { kind: 'GET /shares/{id} (zip)', method: 'GET', url: s, token: '' },
    { kind: 'GET /shares/{id} (zip)', method: 'GET', url: `${s}?compress=false`, token: '' },
    { kind: 'GET /shares/{id}/dirs', method: 'GET', url: `${s}/dirs`, token: '' },
    { kind: 'GET /shares/{id}/files', method: 'GET', url: `${s}/files?path=secret.txt`, token: '', allowed: [400, 403, 404] },
    { kind: 'POST /shares/{id}/files/{filePath}', method: 'POST', url: `${s}/files/planted.txt`, token: '', body: 'PWNED' },
  ] as Try[]) {
    if (ok(await attempt(u, a)) && a.method === 'POST') await reset(u);
  }
  await w.client.request('DELETE', `/api/v2/user/shares/${id}`, { token: u.token });
}

for (const u of w.users) await resetHome(u, w.dataDir);

t.test('crafted paths and planted symlinks through every route', async (t) => {
  await Promise.all(
    w.users.map(async (u) => {
      const share = await createShare(u, ['/shared']);
      if (share.status !== 201) throw new Error(`share of /shared: ${share.status} ${share.body.toString()}`);
      const id = String(share.headers['x-object-id']);
      for (const c of forUser(u, craftedPaths(u, w.dataDir))) {
        await userRoutes(u, c);
        await reset(u);
      }
      for (const c of forUser(u, sharePaths(u, w.dataDir))) {
        await shareRoutes(u, id, c);
        await reset(u);
      }
      for (const c of [...forUser(u, craftedPaths(u, w.dataDir)), { p: 'nest', kind: 'symlink' } as Crafted, { p: 'shared/out', kind: 'symlink' } as Crafted]) {
        await shareOnPath(u, c);
        await reset(u);
      }
    }),
  );
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  t.comment(`attempts per route (${total} in all, both users):`);
  for (const [k, n] of [...counts].sort()) t.comment(`  ${k}: ${n}`);
  t.ok(total >= 500, `${total} attempts`);
  t.same(problems, [], 'every attempt answered 4xx (or a harmless success inside the home), completely');
});

t.test('admin: quota scans of the homes count only what lies inside', async (t) => {
  for (const u of w.users) {
    await resetHome(u, w.dataDir);
    counts.set('POST /quotas/users/{username}/scan', (counts.get('POST /quotas/users/{username}/scan') ?? 0) + 1);
    const r = await w.client.request('POST', `/api/v2/quotas/users/${u.name}/scan`, { token: w.admin });
    t.equal(r.status, 202, r.body.toString());
    await until(async () => {
      const scans = await w.client.request('GET', '/api/v2/quotas/users/scans', { token: w.admin });
      return !(JSON.parse(scans.body.toString()) as { username: string }[]).some((s) => s.username === u.name);
    }, `quota scan of ${u.name}`);
    const row = JSON.parse((await w.client.request('GET', `/api/v2/users/${u.name}`, { token: w.admin })).body.toString()) as {
      used_quota_size: number;
      used_quota_files: number;
    };
    // what lies in the home itself (links not followed), in plaintext bytes
    const inside = await homeFiles(u.home);
    const size = [...inside.values()].reduce((n, b) => n + (u.provider === 4 ? format.reportedPlainSize(b.length) : b.length), 0);
    t.equal(inside.size, FIXTURE_FILES.length, `${u.name}: the fixture as planted`);
    t.same({ files: row.used_quota_files, size: row.used_quota_size }, { files: inside.size, size }, `${u.name}: the files inside the home only`);
  }
});

t.test('admin: retention checks on paths through planted links delete nothing outside', async (t) => {
  const linkPaths = ['/link-dir', '/rel-up', '/chain1', '/nest', '/nest/out', '/inner/up', '/link-data/outside', '/shared', '/dangling-dir', '/link-root/tmp'];
  const bad = ['..', '/../outside', '/a/../../outside', '%2e%2e/outside', '..\\outside', '/a\u0000b'];
  for (const u of w.users) {
    await resetHome(u, w.dataDir);
    for (const p of bad) {
      counts.set('retention action (paths)', (counts.get('retention action (paths)') ?? 0) + 1);
      const r = await w.client.request('POST', '/api/v2/eventactions', {
        token: w.admin,
        json: { name: `ret-bad-${u.name}-${bad.indexOf(p)}`, type: 8, options: { retention_config: { folders: [{ path: p, retention: 1 }] } } },
      });
      t.equal(r.status, 400, `${JSON.stringify(p)} refused at save: ${r.body.toString()}`);
    }
    const folders = linkPaths.map((p) => ({ path: p, retention: 1, delete_empty_dirs: true }));
    counts.set('retention action (paths)', (counts.get('retention action (paths)') ?? 0) + linkPaths.length);
    const a = await w.client.request('POST', '/api/v2/eventactions', {
      token: w.admin,
      json: { name: `ret-${u.name}`, type: 8, options: { retention_config: { folders } } },
    });
    t.equal(a.status, 201, a.body.toString());
    const rule = await w.client.request('POST', '/api/v2/eventrules', {
      token: w.admin,
      json: {
        name: `ret-rule-${u.name}`,
        trigger: 6,
        conditions: { options: { names: [{ pattern: u.name }] } },
        actions: [{ name: `ret-${u.name}`, order: 1 }],
      },
    });
    t.equal(rule.status, 201, rule.body.toString());
    const run = await w.client.request('POST', `/api/v2/eventrules/run/ret-rule-${u.name}`, { token: w.admin });
    t.equal(run.status, 202, run.body.toString());
    await w.events.idle();
    t.same(await canaryInHome(w.canary, u), []);
  }
});

t.test('filesystem event actions (type 9) that take paths', async (t) => {
  // No plugin registers action type 9 yet (the event-actions issue builds it): saving one is refused,
  // so no rule can run one; this checks the refusal and must grow path attempts once type 9 exists.
  counts.set('filesystem action (paths)', (counts.get('filesystem action (paths)') ?? 0) + 1);
  const r = await w.client.request('POST', '/api/v2/eventactions', {
    token: w.admin,
    json: { name: 'fs-delete', type: 9, options: { fs_config: { type: 2, deletes: ['../../outside'] } } },
  });
  t.equal(r.status, 400, `type 9 refused: ${r.body.toString()}`);
});

t.test('the canary outside the homes', async (t) => {
  t.same(w.canary.leaks, [], 'no reply held canary content or canary names');
  for (const { root, diff } of w.canary.changes()) t.same(diff, [], `${path.relative(w.dataDir, root)}: not written, renamed, removed or touched`);
  t.ok(w.client.requests > 500, `${w.client.requests} requests over HTTP`);
});

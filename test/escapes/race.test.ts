// @ferry-test database-independent: the accounts and shares live in the database only as
// settings; what is checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { unzip } from '@ferry/testkit';
import { raceOp, summary, type RaceOp, type RaceResult } from './helpers/race.js';
import { holdsCanary as holdsCanaryIn, multipart, q, startWorld, until, type Reply, type User } from './helpers/world.js';

// A concurrent symlink swap: while a worker thread keeps renaming a real
// directory of the home away, putting a symlink to the user's canary
// directory (outside the home) in its place and back, many requests over
// real HTTP on 127.0.0.1 work on paths below it: download, zip, listing,
// upload (raw, multipart, share, TUS), delete, rename, move, copy (from and
// into), mkdir, rmdir, mtime change, share routes, a quota scan and a
// retention check. A check between the server's confinement test and its use
// of the path must not let any of them reach the canary: after every reply the
// op's canary directory is compared with its recorded state (content, names,
// inode, mtime, ctime) and the reply is scanned for canary bytes and names.
// Each op stops at its first escape and reports after how many requests.
// Every answer must also be complete, below 500, and a 200 zip valid: a zip
// whose directory turns into an outside link while it is read leaves the
// entry out, or is refused before its first byte (never cut mid-stream).

const ZIPS = new Set(['zip', 'zipf', 'sh-zip']);
/** How long the swapper keeps each state (ms): see helpers/swapper.ts. */
const HOLD_MS = Number(process.env.FERRY_ESCAPES_HOLD_MS ?? 0.05);
const w = await startWorld({
  tus: true,
  canaryDirs: {
    dl: {},
    zip: {},
    zipf: {},
    ls: {},
    up: {},
    mp: {},
    del: { files: 40 },
    ren: { files: 40 },
    mv: { files: 40 },
    cpf: {},
    cpt: {},
    mk: {},
    rmd: { dirs: 40 },
    mt: {},
    qs: { files: 40 },
    ret: { files: 40 },
    'sh-dl': {},
    'sh-up': {},
    'sh-ls': {},
    'sh-zip': {},
    'sh-tus': {},
    'sh-mk': {},
  },
});
t.teardown(() => w.close());

interface Ctx {
  share?: string;
}

interface HttpRaceOp extends Omit<RaceOp<Reply>, 'fire'> {
  /** Swapped path relative to the home: `r-<name>`, or `shr-<name>/race` for share ops (share of `/shr-<name>`). */
  shared?: boolean;
  fire(u: User, i: number, c: Ctx): Promise<Reply>;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const req = (u: User, method: string, url: string, o: { json?: unknown; body?: Buffer | string; headers?: Record<string, string>; token?: string } = {}) =>
  w.client.request(method, url, { token: o.token ?? u.token, json: o.json, body: o.body, headers: o.headers });

const holdsCanary = (u: User, rel: string) => holdsCanaryIn(w.canary, u, rel);

const runs = new Map<string, number>();
async function runRetention(u: User): Promise<Reply> {
  const k = (runs.get(u.name) ?? 0) + 1;
  runs.set(u.name, k);
  const r = await req(u, 'POST', `/api/v2/eventrules/run/race-ret-${u.name}`, { token: w.admin });
  await w.events.idle();
  return r;
}

async function quotaScan(u: User): Promise<Reply> {
  const r = await req(u, 'POST', `/api/v2/quotas/users/${u.name}/scan`, { token: w.admin });
  await until(async () => {
    const scans = await w.client.request('GET', '/api/v2/quotas/users/scans', { token: w.admin });
    return !(JSON.parse(scans.body.toString()) as { username: string }[]).some((s) => s.username === u.name);
  }, `quota scan of ${u.name}`);
  return r;
}

const OPS: HttpRaceOp[] = [
  { name: 'dl', n: [80, 30], fire: (u) => req(u, 'GET', `/api/v2/user/files?path=${q('r-dl/secret.txt')}`) },
  { name: 'zip', n: [60, 20], fire: (u) => req(u, 'POST', '/api/v2/user/streamzip', { json: ['/r-zip'] }) },
  { name: 'zipf', n: [60, 20], fire: (u) => req(u, 'POST', '/api/v2/user/streamzip', { json: ['/r-zipf/secret.txt'] }) },
  { name: 'ls', n: [80, 60], fire: (u) => req(u, 'GET', `/api/v2/user/dirs?path=${q('r-ls')}`) },
  { name: 'up', n: [80, 30], fire: (u, i) => req(u, 'POST', `/api/v2/user/files/upload?path=${q('r-up/secret.txt')}`, { body: `PWNED ${i}` }) },
  {
    name: 'mp',
    n: [80, 30],
    fire: (u, i) => {
      const m = multipart([{ name: 'secret.txt', data: `PWNED ${i}` }]);
      return req(u, 'POST', `/api/v2/user/files?path=${q('r-mp')}`, { body: m.body, headers: m.headers });
    },
  },
  { name: 'del', files: 40, n: [80, 60], fire: (u, i) => req(u, 'DELETE', `/api/v2/user/files?path=${q(`r-del/f-${i % 40}.txt`)}`) },
  {
    name: 'ren',
    files: 40,
    n: [80, 60],
    fire: (u, i) => req(u, 'PATCH', `/api/v2/user/files?path=${q(`r-ren/f-${i % 40}.txt`)}&target=${q(`/renamed-${i}.txt`)}`),
    check: (u, i) => holdsCanary(u, `renamed-${i}.txt`),
  },
  {
    name: 'mv',
    files: 40,
    n: [80, 60],
    fire: (u, i) => req(u, 'POST', `/api/v2/user/file-actions/move?path=${q(`r-mv/f-${i % 40}.txt`)}&target=${q(`/moved-${i}.txt`)}`),
    check: (u, i) => holdsCanary(u, `moved-${i}.txt`),
  },
  {
    name: 'cpf',
    n: [80, 30],
    fire: (u, i) => req(u, 'POST', `/api/v2/user/file-actions/copy?path=${q('r-cpf/secret.txt')}&target=${q(`/copied-${i}.txt`)}`),
    check: (u, i) => holdsCanary(u, `copied-${i}.txt`),
  },
  { name: 'cpt', n: [80, 60], fire: (u, i) => req(u, 'POST', `/api/v2/user/file-actions/copy?path=${q('/inside.txt')}&target=${q(`r-cpt/copied-${i}.txt`)}`) },
  { name: 'mk', n: [80, 60], fire: (u, i) => req(u, 'POST', `/api/v2/user/dirs?path=${q(`r-mk/new-${i}`)}`) },
  { name: 'rmd', dirs: 40, n: [80, 60], fire: (u, i) => req(u, 'DELETE', `/api/v2/user/dirs?path=${q(`r-rmd/d-${i % 40}`)}`) },
  {
    name: 'mt',
    n: [80, 60],
    fire: (u, i) => req(u, 'PATCH', `/api/v2/user/files/metadata?path=${q('r-mt/secret.txt')}`, { json: { modification_time: 1_000_000_000_000 + i } }),
  },
  {
    name: 'qs',
    files: 1,
    n: [15, 15],
    concurrency: 1,
    fire: (u) => quotaScan(u),
    async check(u, _i, _r, inside) {
      const row = JSON.parse((await w.client.request('GET', `/api/v2/users/${u.name}`, { token: w.admin })).body.toString()) as { used_quota_files: number };
      return row.used_quota_files > inside ? `the quota scan counted ${row.used_quota_files} files, the home holds ${inside}` : undefined;
    },
  },
  { name: 'ret', files: 40, n: [15, 15], concurrency: 1, fire: (u) => runRetention(u) },
  {
    name: 'sh-dl',
    shared: true,
    n: [80, 30],
    fire: (u, _i, c) => req(u, 'GET', `/api/v2/shares/${c.share}/files?path=${q('race/secret.txt')}`, { token: '' }),
  },
  {
    name: 'sh-up',
    shared: true,
    n: [80, 30],
    fire: (u, i, c) => req(u, 'POST', `/api/v2/shares/${c.share}/files/race/secret.txt`, { token: '', body: `PWNED ${i}` }),
  },
  { name: 'sh-ls', shared: true, n: [80, 60], fire: (u, _i, c) => req(u, 'GET', `/api/v2/shares/${c.share}/dirs?path=race`, { token: '' }) },
  { name: 'sh-zip', shared: true, n: [60, 20], fire: (u, _i, c) => req(u, 'GET', `/api/v2/shares/${c.share}`, { token: '' }) },
  {
    name: 'sh-tus',
    shared: true,
    n: [80, 30],
    fire: (u, i, c) => {
      const body = `PWNED ${i}`;
      return req(u, 'POST', '/api/v2/shares-chunked-uploads', {
        token: '',
        body,
        headers: {
          'tus-resumable': '1.0.0',
          'upload-length': String(body.length),
          'upload-metadata': `share_id ${b64(c.share!)},path ${b64('race/secret.txt')}`,
          'content-type': 'application/offset+octet-stream',
        },
      });
    },
  },
  {
    name: 'sh-mk',
    shared: true,
    n: [80, 60],
    fire: (u, i, c) => req(u, 'POST', `/api/v2/shares/${c.share}/actions/mkdir?path=${q(`race/new-${i}`)}`, { token: '' }),
  },
];

const swapPath = (op: HttpRaceOp) => (op.shared ? `shr-${op.name}/race` : `r-${op.name}`);

/** The real directories that are swapped, with the same names as the canary's (inside content). */
async function setupHome(u: User): Promise<void> {
  await u.put('inside.txt', 'inside content: mine');
  for (const op of OPS) {
    const dir = swapPath(op);
    await u.put(`${dir}/secret.txt`, `inside ${op.name} secret.txt`);
    await u.put(`${dir}/sub/deep.txt`, `inside ${op.name} deep.txt`);
    for (let i = 0; i < (op.files ?? 0); i++) await u.put(`${dir}/f-${i}.txt`, `inside ${op.name} f-${i}`);
    for (let i = 0; i < (op.dirs ?? 0); i++) await mkdir(path.join(u.home, dir, `d-${i}`), { recursive: true });
  }
}

const results: RaceResult[] = [];

/** An answer's status, and what is wrong with it: cut, a 5xx, a 200 zip that is not valid. */
const judge =
  (op: HttpRaceOp) =>
  (r: Reply): { outcome: string; bad?: string } => {
    const outcome = String(r.status);
    if (!r.complete || r.status === 0) return { outcome, bad: `${r.status} after ${r.body.length} bytes (${r.error})` };
    if (r.status >= 500) return { outcome, bad: `${r.status}: ${r.body.toString().slice(0, 120)}` };
    if (r.status === 200 && ZIPS.has(op.name)) {
      try {
        unzip(r.body);
      } catch (err) {
        return { outcome, bad: `200 with an invalid zip: ${(err as Error).message}` };
      }
    }
    return { outcome };
  };

for (const u of w.users) {
  await setupHome(u);
  const ctx: Record<string, Ctx> = {};
  for (const op of OPS.filter((o) => o.shared)) {
    const r = await req(u, 'POST', '/api/v2/user/shares', { json: { name: `race ${op.name}`, scope: 3, paths: [`/shr-${op.name}`] } });
    if (r.status !== 201) throw new Error(`share: ${r.status} ${r.body.toString()}`);
    ctx[op.name] = { share: String(r.headers['x-object-id']) };
  }
  const ret = await req(u, 'POST', '/api/v2/eventactions', {
    token: w.admin,
    json: { name: `race-ret-${u.name}`, type: 8, options: { retention_config: { folders: [{ path: '/r-ret', retention: 1 }] } } },
  });
  if (ret.status !== 201) throw new Error(`retention action: ${ret.body.toString()}`);
  const rule = await req(u, 'POST', '/api/v2/eventrules', {
    token: w.admin,
    json: {
      name: `race-ret-${u.name}`,
      trigger: 6,
      conditions: { options: { names: [{ pattern: u.name }] } },
      actions: [{ name: `race-ret-${u.name}`, order: 1 }],
    },
  });
  if (rule.status !== 201) throw new Error(`retention rule: ${rule.body.toString()}`);

  t.test(`${u.name} (provider ${u.provider}): symlink swapped under concurrent requests`, async (t) => {
    for (const op of OPS) {
      const r = await raceOp(w, u, { ...op, fire: (u, i) => op.fire(u, i, ctx[op.name] ?? {}) }, swapPath(op), judge(op), HOLD_MS);
      results.push(r);
      t.ok(r.restored, `${op.name}: the real directory is back`);
      t.notOk(
        r.escapedAfter,
        `${u.name} ${op.name}: ${r.escapedAfter ? `ESCAPED after ${r.escapedAfter} requests: ${r.what}` : `held for ${r.requests} requests`} [${summary(r.outcomes)}]`,
      );
      // not an escape, but the same defect as a zip cut by a static outside link: a zip is complete and valid, or refused before its first byte
      t.same(r.bad, [], `${u.name} ${op.name}: every answer complete with a status below 500 (${r.badCount} not)`);
    }
    const mine = results.filter((r) => r.user === u.name);
    t.ok(
      mine.every((r) => r.swaps > 0),
      'the swapper swapped during every op',
    );
    const all = mine.reduce<Record<number, number>>((a, r) => {
      for (const [s, k] of Object.entries(r.outcomes)) a[Number(s)] = (a[Number(s)] ?? 0) + k;
      return a;
    }, {});
    t.ok(
      Object.keys(all).some((s) => Number(s) < 300) && Object.keys(all).some((s) => Number(s) >= 400),
      `the race was live: successes and refusals both seen ${JSON.stringify(all)}`,
    );
  });
}

t.test('the canary after the races', async (t) => {
  for (const r of results)
    t.comment(`${r.user} ${r.op}: ${r.escapedAfter ? `escaped after ${r.escapedAfter}` : `held ${r.requests}`} (${r.swaps} swaps, ${r.ms} ms)`);
  t.same(w.canary.leaks.slice(0, 20), [], 'no reply held canary content or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff.slice(0, 30), [], `${path.relative(w.dataDir, root)}: not written, renamed, removed or touched`);
});

// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DavUser, LOCKINFO, PROPPATCH } from './helpers/webdav.js';
import { canaryAfterRaces, raceUser, type RaceOp, type RaceResult } from './helpers/race.js';
import { holdsCanary, startWorld, type Reply, type User } from './helpers/world.js';

// race.test.ts over WebDAV: while a worker thread keeps swapping a real
// directory of the home with a symlink to the user's canary directory, 4
// concurrent requests per op work below it: GET, HEAD, PROPFIND depth 0
// and 1, PUT, DELETE, MKCOL, MOVE and COPY out of the swapped directory,
// PROPPATCH and LOCK. After every answer the op's canary directory is
// compared with its recorded state and the answer scanned for canary bytes
// and names (the world's canary sees every reply); each op stops at its
// first escape and says after how many requests. No answer may be a 5xx or
// cut short.

/** How long the swapper keeps each state (ms): see helpers/swapper.ts. */
const HOLD_MS = Number(process.env.FERRY_ESCAPES_HOLD_MS ?? 0.05);
/** Files below the directories of the ops that use them up (move, remove). */
const FILES = 24;
const CONCURRENCY = 4;
const OP_NAMES = ['get', 'head', 'stat', 'ls', 'put', 'del', 'mk', 'move', 'copy', 'props', 'lock'];
const w = await startWorld({
  webdav: true,
  canaryDirs: Object.fromEntries(OP_NAMES.map((n) => [n, ['move', 'del', 'copy'].includes(n) ? { files: FILES } : {}])),
});
t.teardown(() => w.close());
const clients = new Map(w.users.map((u) => [u.name, new DavUser(w, u)]));
t.teardown(() => clients.forEach((c) => c.close()));
const dav = (u: User) => clients.get(u.name)!;
const at = (u: User, rel: string) => `http://${dav(u).host}/${rel}`;

/** An answer's outcome (its status) and what is wrong with it: cut short, a server error. */
const judge = (r: Reply): { outcome: string; bad?: string } => {
  const outcome = String(r.status);
  if (!r.complete || r.status === 0) return { outcome, bad: `${r.status} after ${r.body.length} bytes (${r.error})` };
  if (r.status >= 500) return { outcome, bad: `${r.status}: ${r.body.toString().slice(0, 120)}` };
  return { outcome };
};

const OPS: RaceOp<Reply>[] = [
  { name: 'get', n: [60, 30], concurrency: CONCURRENCY, fire: (u) => dav(u).request('GET', '/r-get/secret.txt') },
  { name: 'head', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => dav(u).request('HEAD', '/r-head/secret.txt') },
  { name: 'stat', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => dav(u).propfind('/r-stat/secret.txt', '0') },
  { name: 'ls', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => dav(u).propfind('/r-ls/', '1') },
  { name: 'put', n: [60, 30], concurrency: CONCURRENCY, fire: (u, i) => dav(u).request('PUT', '/r-put/secret.txt', {}, Buffer.from(`PWNED ${i}`)) },
  { name: 'del', files: FILES, n: [60, 40], concurrency: CONCURRENCY, fire: (u, i) => dav(u).request('DELETE', `/r-del/f-${i % FILES}.txt`) },
  { name: 'mk', n: [60, 40], concurrency: CONCURRENCY, fire: (u, i) => dav(u).request('MKCOL', `/r-mk/new-${i}`) },
  {
    name: 'move',
    files: FILES,
    n: [60, 40],
    concurrency: CONCURRENCY,
    fire: (u, i) => dav(u).copyMove('MOVE', `/r-move/f-${i % FILES}.txt`, at(u, `moved-${i}.txt`)),
    check: (u, i) => holdsCanary(w.canary, u, `moved-${i}.txt`),
  },
  {
    name: 'copy',
    files: FILES,
    n: [60, 30],
    concurrency: CONCURRENCY,
    fire: (u, i) => dav(u).copyMove('COPY', `/r-copy/f-${i % FILES}.txt`, at(u, `copied-${i}.txt`)),
    check: (u, i) => holdsCanary(w.canary, u, `copied-${i}.txt`),
  },
  { name: 'props', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => dav(u).request('PROPPATCH', '/r-props/secret.txt', {}, PROPPATCH) },
  {
    name: 'lock',
    n: [60, 40],
    concurrency: CONCURRENCY,
    // a lock granted is released at once (a held one would refuse the next workers' requests)
    fire: async (u) => {
      const r = await dav(u).request('LOCK', '/r-lock/secret.txt', { depth: '0', timeout: 'Second-60' }, LOCKINFO);
      const token = r.headers['lock-token'];
      if (r.status < 300 && typeof token === 'string') await dav(u).request('UNLOCK', '/r-lock/secret.txt', { 'lock-token': token });
      return r;
    },
  },
];

/** The real directories that are swapped, with the same names as the canary's (inside content). */
async function setupHome(u: User): Promise<void> {
  await Promise.all([
    u.put('inside.txt', 'inside content: mine'),
    ...OPS.map(async (op) => {
      const dir = `r-${op.name}`;
      await u.put(`${dir}/secret.txt`, `inside ${op.name} secret.txt`);
      await u.put(`${dir}/sub/deep.txt`, `inside ${op.name} deep.txt`);
      await Promise.all(Array.from({ length: op.files ?? 0 }, (_, i) => u.put(`${dir}/f-${i}.txt`, `inside ${op.name} f-${i}`)));
      await mkdir(path.join(u.home, dir), { recursive: true });
    }),
  ]);
}

const results: RaceResult[] = [];

for (const u of w.users) {
  await setupHome(u);
  t.test(`${u.name} (provider ${u.provider}): symlink swapped under concurrent WebDAV requests`, async (t) => {
    results.push(
      ...(await raceUser(t, w, u, { ops: OPS, judge, holdMs: HOLD_MS, live: (o) => o.some((x) => x.startsWith('2')) && o.some((x) => x.startsWith('4')) })),
    );
  });
}

t.test('the canary after the races', async (t) => {
  canaryAfterRaces(t, w, results);
});

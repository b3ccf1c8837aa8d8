// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { FtpUser, type FtpAnswer } from './helpers/ftp.js';
import { canaryAfterRaces, raceUser, type RaceOp, type RaceResult } from './helpers/race.js';
import { holdsCanary, startWorld, type User } from './helpers/world.js';

// race.test.ts over FTP: while a worker thread keeps swapping a real
// directory of the home with a symlink to the user's canary directory,
// 4 concurrent commands per op (4 control connections per user, over the
// raw client of helpers/ftp.ts) work below it: RETR, SIZE, MLST, HASH,
// XMD5, STOR, APPE, LIST, MLSD, RNFR/RNTO out of the swapped directory,
// DELE, MKD, RMD, MFMT. After every reply the op's canary directory is
// compared with its recorded state and the reply and data scanned for
// canary bytes, names and digests; each op stops at its first escape and
// says after how many commands. No control connection may break and every
// reply must be a well-formed FTP reply.

/** How long the swapper keeps each state (ms): see helpers/swapper.ts. */
const HOLD_MS = Number(process.env.FERRY_ESCAPES_HOLD_MS ?? 0.05);
/** Files below the directories of the ops that use them up (rename, remove): each costs an scrypt for provider 4. */
const FILES = 24;
const CONCURRENCY = 4;
const OP_NAMES = ['read', 'size', 'mlst', 'hash', 'xmd5', 'write', 'append', 'ls', 'mlsd', 'ren', 'del', 'mk', 'rmd', 'mt'];
const w = await startWorld({
  ftp: true,
  canaryDirs: Object.fromEntries(OP_NAMES.map((n) => [n, ['ren', 'del'].includes(n) ? { files: FILES } : n === 'rmd' ? { dirs: FILES } : {}])),
});
t.teardown(() => w.close());

/** Per user, CONCURRENCY logged-in control connections; a command takes a free one (an FTP connection runs one command at a time). */
const free = new Map<string, FtpUser[]>();
const all: FtpUser[] = [];
for (const u of w.users) {
  const conns = await Promise.all(Array.from({ length: CONCURRENCY }, () => FtpUser.connect(w, u)));
  all.push(...conns);
  free.set(u.name, conns);
}
t.teardown(() => all.forEach((c) => c.close()));
async function withFtp(u: User, fn: (f: FtpUser) => Promise<FtpAnswer>): Promise<FtpAnswer> {
  const f = free.get(u.name)!.pop();
  if (!f) throw new Error('no free FTP connection: more workers than connections');
  try {
    return await fn(f);
  } finally {
    free.get(u.name)!.push(f);
  }
}

/** A reply's outcome (its code) and what is wrong with it: a broken control connection, a malformed reply. */
const judge = (a: FtpAnswer) => ({
  outcome: String(a.code),
  bad: a.broken ? 'the control connection broke' : !(a.code >= 100 && a.code <= 599) ? `malformed reply: ${a.text.slice(0, 120)}` : undefined,
});
const cmd = (u: User, line: string) => withFtp(u, (f) => f.cmd(line));
const transfer = (u: User, line: string, upload?: string) => withFtp(u, (f) => f.transfer(line, upload));

const OPS: RaceOp<FtpAnswer>[] = [
  { name: 'read', n: [60, 30], concurrency: CONCURRENCY, fire: (u) => transfer(u, 'RETR r-read/secret.txt') },
  { name: 'size', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => cmd(u, 'SIZE r-size/secret.txt') },
  { name: 'mlst', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => cmd(u, 'MLST r-mlst/secret.txt') },
  { name: 'hash', n: [60, 30], concurrency: CONCURRENCY, fire: (u) => cmd(u, 'HASH r-hash/secret.txt') },
  { name: 'xmd5', n: [60, 30], concurrency: CONCURRENCY, fire: (u) => cmd(u, 'XMD5 r-xmd5/secret.txt') },
  { name: 'write', n: [60, 30], concurrency: CONCURRENCY, fire: (u, i) => transfer(u, 'STOR r-write/secret.txt', `PWNED ${i}`) },
  { name: 'append', n: [60, 30], concurrency: CONCURRENCY, fire: (u, i) => transfer(u, 'APPE r-append/secret.txt', `PWNED ${i}`) },
  { name: 'ls', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => transfer(u, 'LIST r-ls') },
  { name: 'mlsd', n: [60, 40], concurrency: CONCURRENCY, fire: (u) => transfer(u, 'MLSD r-mlsd') },
  {
    name: 'ren',
    files: FILES,
    n: [60, 40],
    concurrency: CONCURRENCY,
    // RNFR and RNTO on one connection, back to back (another worker cannot slip a command in between)
    fire: (u, i) =>
      withFtp(u, async (f) => {
        const from = await f.cmd(`RNFR r-ren/f-${i % FILES}.txt`);
        return from.code === 350 ? f.cmd(`RNTO /renamed-${i}.txt`) : from;
      }),
    check: (u, i) => holdsCanary(w.canary, u, `renamed-${i}.txt`),
  },
  { name: 'del', files: FILES, n: [60, 40], concurrency: CONCURRENCY, fire: (u, i) => cmd(u, `DELE r-del/f-${i % FILES}.txt`) },
  { name: 'mk', n: [60, 40], concurrency: CONCURRENCY, fire: (u, i) => cmd(u, `MKD r-mk/new-${i}`) },
  { name: 'rmd', dirs: FILES, n: [60, 40], concurrency: CONCURRENCY, fire: (u, i) => cmd(u, `RMD r-rmd/d-${i % FILES}`) },
  { name: 'mt', n: [60, 40], concurrency: CONCURRENCY, fire: (u, i) => cmd(u, `MFMT 20300101${String(i % 60).padStart(6, '0')} r-mt/secret.txt`) },
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
      for (let i = 0; i < (op.dirs ?? 0); i++) await mkdir(path.join(u.home, dir, `d-${i}`), { recursive: true });
    }),
  ]);
}

const results: RaceResult[] = [];

for (const u of w.users) {
  await setupHome(u);
  t.test(`${u.name} (provider ${u.provider}): symlink swapped under concurrent FTP commands`, async (t) => {
    results.push(
      ...(await raceUser(t, w, u, {
        ops: OPS,
        judge,
        holdMs: HOLD_MS,
        live: (o) => o.some((x) => x.startsWith('2')) && o.some((x) => x.startsWith('5')),
        unit: 'commands',
      })),
    );
  });
}

t.test('the canary after the races', async (t) => {
  t.same(all.flatMap((f) => [...f.broken, ...f.malformed]).slice(0, 10), [], 'no control connection broke, every reply well-formed');
  canaryAfterRaces(t, w, results);
});

// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { canaryAfterRaces, raceUser, type RaceOp, type RaceResult } from './helpers/race.js';
import { SshUser, STATUS_CODE, type ExecAnswer, type SftpAnswer } from './helpers/sftp.js';
import { holdsCanary, startWorld, type User } from './helpers/world.js';

// race.test.ts over SSH: while a worker thread keeps swapping a real
// directory of the home with a symlink to the user's canary directory,
// 4 concurrent requests per op work below it over one SFTP channel (or
// exec channels): READ, STAT, WRITE (new upload and append), READDIR,
// RENAME, posix-rename, REMOVE, MKDIR, RMDIR, SETSTAT, `scp -f`, `scp -t`
// and sha256sum. After every answer the op's canary directory is compared
// with its recorded state and the answer scanned for canary bytes, names
// and digests; each op stops at its first escape and says after how many
// requests. No SFTP channel may break and every exec channel must end with
// an exit status.

/** How long the swapper keeps each state (ms): see helpers/swapper.ts. */
const HOLD_MS = Number(process.env.FERRY_ESCAPES_HOLD_MS ?? 0.05);
/** Files below the directories of the ops that use them up (rename, remove): fewer than HTTP's 40, each costs an scrypt for provider 4. */
const FILES = 24;
const OP_NAMES = ['read', 'stat', 'write', 'append', 'ls', 'ren', 'prn', 'del', 'mk', 'rmd', 'mt', 'scpf', 'scpt', 'sum'];
const w = await startWorld({
  sftp: true,
  canaryDirs: Object.fromEntries(OP_NAMES.map((n) => [n, ['ren', 'prn', 'del'].includes(n) ? { files: FILES } : n === 'rmd' ? { dirs: FILES } : {}])),
});
t.teardown(() => w.close());
const clients = new Map<string, SshUser>();
for (const u of w.users) clients.set(u.name, await SshUser.connect(w, u));
t.teardown(() => [...clients.values()].forEach((c) => c.close()));

/** What an answer was, and what is wrong with it (a broken channel, an exec channel without exit status). */
interface Outcome {
  outcome: string;
  bad?: string;
}
const codeName = (code: number) => Object.entries(STATUS_CODE).find(([, v]) => v === code)?.[0] ?? String(code);
const sftp = (a: SftpAnswer): Outcome => ({
  // a FAILURE names its reason (an unexpected error says only "internal error")
  outcome: a.code === STATUS_CODE.FAILURE ? `FAILURE (${a.message.replace(/^\/\S*: /, '')})` : codeName(a.code),
  bad: a.broken ? `the channel broke: ${a.message}` : undefined,
});
const exec = (a: ExecAnswer): Outcome => ({
  outcome: `exit ${a.code}`,
  bad: a.code === null ? `no exit status: ${a.stderr.toString().slice(0, 120)}` : undefined,
});
const ssh = (u: User) => clients.get(u.name)!;
/** An exec op goes on until one command succeeded (each is several lookups, so most lose the race). */
const untilExit0 = (o: Record<string, number>) => (o['exit 0'] ?? 0) > 0;

const OPS: RaceOp<Outcome>[] = [
  { name: 'read', n: [60, 30], fire: async (u) => sftp(await ssh(u).read('r-read/secret.txt')) },
  { name: 'stat', n: [60, 40], fire: async (u) => sftp(await ssh(u).stat('r-stat/secret.txt')) },
  { name: 'write', n: [60, 30], fire: async (u, i) => sftp(await ssh(u).write('r-write/secret.txt', 'w', `PWNED ${i}`)) },
  { name: 'append', n: [60, 30], fire: async (u, i) => sftp(await ssh(u).write('r-append/secret.txt', 'a', `PWNED ${i}`)) },
  { name: 'ls', n: [60, 40], fire: async (u) => sftp(await ssh(u).list('r-ls')) },
  {
    name: 'ren',
    files: FILES,
    n: [60, 40],
    fire: async (u, i) => sftp(await ssh(u).rename(`r-ren/f-${i % FILES}.txt`, `/renamed-${i}.txt`)),
    check: (u, i) => holdsCanary(w.canary, u, `renamed-${i}.txt`),
  },
  {
    name: 'prn',
    files: FILES,
    n: [60, 40],
    fire: async (u, i) => sftp(await ssh(u).posixRename(`r-prn/f-${i % FILES}.txt`, `/prenamed-${i}.txt`)),
    check: (u, i) => holdsCanary(w.canary, u, `prenamed-${i}.txt`),
  },
  { name: 'del', files: FILES, n: [60, 40], fire: async (u, i) => sftp(await ssh(u).remove(`r-del/f-${i % FILES}.txt`)) },
  { name: 'mk', n: [60, 40], fire: async (u, i) => sftp(await ssh(u).mkdir(`r-mk/new-${i}`)) },
  { name: 'rmd', dirs: FILES, n: [60, 40], fire: async (u, i) => sftp(await ssh(u).rmdir(`r-rmd/d-${i % FILES}`)) },
  { name: 'mt', n: [60, 40], fire: async (u, i) => sftp(await ssh(u).setstat('r-mt/secret.txt', 1_000_000_000 + i)) },
  { name: 'scpf', n: [30, 16], until: untilExit0, fire: async (u) => exec(await ssh(u).scpGet('r-scpf/secret.txt')) },
  // -d: without it, a moment when the swapper has moved the directory away makes scp write a file
  // named r-scpt in its place (scp's meaning of a missing target), and the directory cannot come back
  { name: 'scpt', n: [30, 16], until: untilExit0, fire: async (u, i) => exec(await ssh(u).scpPut('r-scpt', 'secret.txt', `PWNED ${i}`, { intoDir: true })) },
  { name: 'sum', n: [30, 16], until: untilExit0, fire: async (u) => exec(await ssh(u).exec('sha256sum', 'sha256sum r-sum/secret.txt')) },
];

/** The real directories that are swapped, with the same names as the canary's (inside content). */
async function setupHome(u: User): Promise<void> {
  // written concurrently: provider 4's scrypt per file runs on the thread pool
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
  t.test(`${u.name} (provider ${u.provider}): symlink swapped under concurrent SFTP, SCP and SSH requests`, async (t) => {
    results.push(
      ...(await raceUser(t, w, u, {
        ops: OPS,
        judge: (o) => o,
        holdMs: HOLD_MS,
        live: (o) => o.includes('OK') && o.includes('exit 0') && o.some((x) => x !== 'OK' && x !== 'exit 0'),
      })),
    );
  });
}

t.test('the canary after the races', async (t) => {
  canaryAfterRaces(t, w, results);
});

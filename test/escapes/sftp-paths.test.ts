// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import path from 'node:path';
import { craftedPaths, forUser, type Crafted } from './helpers/crafted.js';
import { SshUser, STATUS_CODE, type SftpAnswer } from './helpers/sftp.js';
import { canaryInHome, resetHome, startWorld, type User } from './helpers/world.js';

// The crafted paths of paths.test.ts (`..` in every spelling, encoded
// dots and separators as literal names, backslashes, NUL and control
// characters, absolute and foreign paths, very long paths, the planted
// symlinks) through every SFTP request that takes a path (OPEN for
// read, write, append, without CREAT; STAT, LSTAT, SETSTAT, OPENDIR and
// READDIR, REALPATH, RENAME both ways, posix-rename@openssh.com both ways,
// REMOVE, MKDIR, RMDIR, READLINK, SYMLINK both ways), through SCP
// (`scp -f SRC`, `scp -t DEST`, a file record named by the crafted path)
// and the SSH commands (md5sum, sha256sum, cd), for a provider 0
// (fs-local) and a provider 4 (fs-crypt) user, over real SSH connections
// (ssh2's client). Nothing outside the home may be read (no answer, error
// message, listing or realpath holds canary bytes, canary names or the
// digests of canary files), listed, written, renamed, removed or touched
// (canary compared byte for byte with inode, mtime and ctime); no SFTP
// channel breaks under a request.

const w = await startWorld({ sftp: true });
t.teardown(() => w.close());

const problems: string[] = [];
const short = (s: string) => (s.length > 120 ? s.slice(0, 120) + '…' : s);
const codeName = (code: number) => Object.entries(STATUS_CODE).find(([, v]) => v === code)?.[0] ?? String(code);

async function reset(u: User): Promise<void> {
  problems.push(...(await canaryInHome(w.canary, u)));
  await resetHome(u, w.dataDir);
}

/** The status a read of the crafted path must answer: PERMISSION_DENIED through an outside link, NO_SUCH_FILE where HTTP says 404, else any failure. */
function readCodes(c: Crafted): number[] | undefined {
  if (!c.download || c.download.includes(400)) return undefined;
  return c.download.map((s) => (s === 403 ? STATUS_CODE.PERMISSION_DENIED : STATUS_CODE.NO_SUCH_FILE));
}

async function sftpPaths(s: SshUser, c: Crafted): Promise<void> {
  const u = s.user;
  const p = c.p;
  const where = (what: string) => `${u.name} ${what} ${short(JSON.stringify(p))}`;
  // reads: refused (nothing of these names exists in the home) or, for listings, harmless; scanned either way
  const read = await s.read(p);
  const want = readCodes(c);
  if (read.code === 0) problems.push(`${where('read')}: answered ${read.value?.length ?? 0} bytes`);
  else if (want && !want.includes(read.code))
    problems.push(`${where('read')}: ${codeName(read.code)} "${read.message}", expected ${want.map(codeName).join('/')}`);
  await s.stat(p);
  await s.lstat(p);
  await s.list(p);
  await s.realpath(p);
  await s.readlink(p);
  await s.scpGet(p);
  for (const cmd of ['md5sum', 'sha256sum']) {
    const r = await s.exec(cmd, `${cmd} -- '${p.replace(/'/g, `'\\''`)}'`);
    if (r.code === 0) problems.push(`${where(cmd)}: exit 0: ${short(r.stdout.toString())}`);
  }
  await s.exec('cd', `cd '${p.replace(/'/g, `'\\''`)}'`);
  // writes and destructive requests: each one starts from the fixture (an earlier success inside the home must not hide a later escape)
  const tries: (() => Promise<SftpAnswer | { code: number | null }>)[] = [
    () => s.write(p, 'w', 'PWNED'),
    () => s.write(p, 'a', 'PWNED'),
    () => s.write(p, 'r+', 'PWNED'),
    () => s.write(p, 'wx', 'PWNED'),
    () => s.setstat(p, 1_000_000_000),
    () => s.mkdir(p),
    () => s.symlink('inside.txt', p),
    () => s.symlink(p, 'lnk'),
    () => s.rename('inside.txt', p),
    () => s.posixRename('inside.txt', p),
    () => s.rename('sub', p),
    () => s.rename(p, 'moved'),
    () => s.posixRename(p, 'moved2'),
    () => s.remove(p),
    () => s.rmdir(p),
    () => s.scpPut(p, 'pwned.txt', 'PWNED'),
    () => s.scpPut('/', p, 'PWNED'),
  ];
  for (const attempt of tries) if ((await attempt()).code === 0) await reset(u);
}

for (const u of w.users) await resetHome(u, w.dataDir);

t.test('crafted paths and planted symlinks through every SFTP request, SCP and the SSH commands', async (t) => {
  const clients = await Promise.all(w.users.map((u) => SshUser.connect(w, u)));
  t.teardown(() => clients.forEach((c) => c.close()));
  await Promise.all(
    clients.map(async (s) => {
      for (const c of forUser(s.user, craftedPaths(s.user, w.dataDir))) {
        await sftpPaths(s, c);
        await reset(s.user);
      }
    }),
  );
  const counts = new Map<string, number>();
  for (const s of clients) for (const [k, n] of s.counts) counts.set(k, (counts.get(k) ?? 0) + n);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  t.comment(`requests per kind (${total} in all, both users):`);
  for (const [k, n] of [...counts].sort()) t.comment(`  ${k}: ${n}`);
  t.ok(total >= 2000, `${total} requests`);
  t.same(clients.flatMap((s) => s.broken).slice(0, 10), [], 'no SFTP channel broke under a request');
  t.same(problems.slice(0, 30), [], 'every read refused as expected, nothing of the canary copied into the home');
});

t.test('the canary outside the homes', async (t) => {
  t.same(w.canary.leaks.slice(0, 20), [], 'no answer held canary content, digests or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff.slice(0, 30), [], `${path.relative(w.dataDir, root)}: not written, renamed, removed or touched`);
});

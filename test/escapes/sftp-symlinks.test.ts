// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { shellQuote, SshUser, STATUS_CODE } from './helpers/sftp.js';
import { homeFiles, INSIDE, OUTSIDE_LINKS, resetHome, startWorld } from './helpers/world.js';
import { watchHandleWarnings } from './helpers/handle-warnings.js';

// The symlink policy of symlinks.test.ts over SFTP, SCP and the SSH
// commands: a link planted in a home is followed only when its target
// stays inside the home; a link to the outside (or a dangling one) is
// refused on direct access (PERMISSION_DENIED, an scp or md5sum error) and
// left out of listings (READDIR, `scp -r -f`); READLINK never tells a
// target. No directory handle is left for the garbage collector.

const handleWarnings = watchHandleWarnings();

const w = await startWorld({ sftp: true });
t.teardown(() => w.close());
for (const u of w.users) await resetHome(u, w.dataDir);
const clients = await Promise.all(w.users.map((u) => SshUser.connect(w, u)));
t.teardown(() => clients.forEach((c) => c.close()));

/** The names of the records (C and D lines) of an `scp -f` answer. */
const scpRecords = (out: Buffer) => [...out.toString('latin1').matchAll(/(?<=^|[\0\n])([CD])\d{4} \d+ ([^\n]*)\n/g)].map((m) => `${m[1]} ${m[2]}`);

for (const s of clients) {
  const u = s.user;

  t.test(`${u.name} (provider ${u.provider}): listings leave outside links out, keep inside ones`, async (t) => {
    const top = await s.list('/');
    t.equal(top.code, 0, top.message);
    for (const l of OUTSIDE_LINKS) t.notOk(top.value!.includes(l), `/ does not list ${l}`);
    t.ok(
      ['chain-in', 'inside.txt', 'nest'].every((n) => top.value!.includes(n)),
      'the inside link, files and directories are listed',
    );
    t.same((await s.list('nest')).value?.sort(), ['in', 'ok.txt'], '/nest: its file and its inside link only');
    t.same((await s.list('/inner')).value, [], '/inner: the link to the parent of the home is left out');
    const r = await s.exec('scp -r -f', `scp -r -f ${shellQuote('/nest')}`, Buffer.alloc(64, 0));
    t.equal(r.code, 0, r.stderr.toString());
    t.same(scpRecords(r.stdout).sort(), ['C ok.txt', 'D in', 'D nest', 'C f.txt'].sort(), 'scp -r -f /nest: the inside file and link only');
    const all = await s.exec('scp -r -f', 'scp -r -f /', Buffer.alloc(1024, 0));
    t.ok(scpRecords(all.stdout).includes('C inside.txt'), 'scp -r -f /: the files of the home');
    t.notOk(
      scpRecords(all.stdout).some((n) => OUTSIDE_LINKS.includes(n.split(' ').pop()!) || /^[CD] (out|out-file|link-file|up)$/.test(n)),
      `scp -r -f /: no record through an outside link (${scpRecords(all.stdout).length} records)`,
    );
  });

  t.test(`${u.name}: direct access through outside links is refused`, async (t) => {
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
      t.equal((await s.read(p)).code, STATUS_CODE.PERMISSION_DENIED, `read ${p}`);
      t.equal((await s.stat(p)).code, STATUS_CODE.PERMISSION_DENIED, `stat ${p}`);
      const sum = await s.exec('sha256sum', `sha256sum ${shellQuote(p)}`);
      t.equal(sum.code, 1, `sha256sum ${p}: ${sum.stderr.toString().trim()}`);
      const get = await s.scpGet(p);
      t.not(get.code, 0, `scp -f ${p}: ${get.stderr.toString().trim()}`);
    }
    for (const p of ['link-dir', 'nest/out', 'rel-up', 'chain1']) {
      t.equal((await s.list(p)).code, STATUS_CODE.PERMISSION_DENIED, `opendir ${p}`);
      const rl = await s.readlink(p);
      t.not(rl.code, 0, `readlink ${p} refused`);
      t.notOk(rl.message.includes('outside') || rl.message.includes(w.dataDir), `readlink ${p}: no target in "${rl.message}"`);
    }
    t.equal((await s.write('dangling', 'w', 'PWNED')).code, STATUS_CODE.PERMISSION_DENIED, 'upload through a dangling link');
    t.equal((await s.write('dangling-dir/x', 'w', 'PWNED')).code, STATUS_CODE.PERMISSION_DENIED, 'upload below a dangling directory link');
    const put = await s.scpPut('dangling', 'x', 'PWNED');
    t.not(put.code, 0, `scp -t into a dangling link: ${put.stderr.toString().trim()}`);
    t.notOk(existsSync(path.join(u.outside, 'not-yet')), 'the dangling target was not created');
    t.equal((await s.mkdir('link-dir/newdir')).code, STATUS_CODE.PERMISSION_DENIED, 'mkdir through an outside link');
    t.equal((await s.setstat('link-file', 1_000_000_000)).code, STATUS_CODE.PERMISSION_DENIED, 'setstat of an outside file link');
    t.equal((await s.remove('link-dir/secret.txt')).code, STATUS_CODE.PERMISSION_DENIED, 'remove through an outside link');
    t.equal((await s.rename('nest/out/secret.txt', 'stolen.txt')).code, STATUS_CODE.PERMISSION_DENIED, 'rename out through an outside link');
    t.equal((await s.posixRename('inside.txt', 'link-dir/planted.txt')).code, STATUS_CODE.PERMISSION_DENIED, 'posix-rename into an outside link');
    t.equal((await s.symlink('/etc', 'made-link')).code, STATUS_CODE.OP_UNSUPPORTED, 'SYMLINK is refused');
    await resetHome(u, w.dataDir);
  });

  t.test(`${u.name}: inside links are followed`, async (t) => {
    const want = `${INSIDE} sub/f.txt`;
    for (const p of ['chain-in/f.txt', 'nest/in/f.txt']) {
      const r = await s.read(p);
      t.equal(r.value?.toString(), want, `read ${p}`);
      const sum = await s.exec('sha256sum', `sha256sum ${p}`);
      t.equal(sum.stdout.toString(), `${createHash('sha256').update(want).digest('hex')}  ${p}\n`, `sha256sum ${p}`);
      const get = await s.scpGet(p);
      t.equal(get.code, 0, `scp -f ${p}`);
      t.ok(get.stdout.includes(want), `scp -f ${p}: the content`);
    }
    t.same((await s.list('chain-in')).value, ['f.txt'], 'opendir chain-in lists sub');
    t.equal((await s.write('chain-in/new.txt', 'w', 'mine')).code, 0, 'an upload through an inside link');
    const put = await s.scpPut('nest/in', 'scp.txt', 'mine too');
    t.equal(put.code, 0, `scp -t through an inside link: ${put.stderr.toString()}`);
    const files = await homeFiles(u.home);
    t.ok(files.has('sub/new.txt') && files.has('sub/scp.txt'), 'both landed in /sub');
    await resetHome(u, w.dataDir);
  });
}

t.test('no directory handle is left for the garbage collector', (t) => handleWarnings.check(t));

t.test('the canary', async (t) => {
  t.same(w.canary.leaks, [], 'no answer held canary content, digests or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff, [], `${path.relative(w.dataDir, root)}: untouched`);
  t.same(
    clients.flatMap((c) => c.broken),
    [],
    'no SFTP channel broke',
  );
});

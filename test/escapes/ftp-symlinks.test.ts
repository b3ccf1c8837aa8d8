// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { FtpUser } from './helpers/ftp.js';
import { homeFiles, INSIDE, OUTSIDE_LINKS, resetHome, startWorld } from './helpers/world.js';
import { watchHandleWarnings } from './helpers/handle-warnings.js';

// The symlink policy of symlinks.test.ts over FTP: a link planted in a home
// is followed only when its target stays inside the home; a link to the
// outside (or a dangling one) is refused on direct access (550: RETR, SIZE,
// MDTM, MLST, HASH, XMD5, CWD, LIST, MLSD, STOR, APPE, MKD, MFMT, DELE,
// RNFR/RNTO) and left out of listings (NLST, MLSD, LIST). No directory
// handle is left for the garbage collector.

const handleWarnings = watchHandleWarnings();

const w = await startWorld({ ftp: true });
t.teardown(() => w.close());
for (const u of w.users) await resetHome(u, w.dataDir);
const clients = await Promise.all(w.users.map((u) => FtpUser.connect(w, u)));
t.teardown(() => clients.forEach((c) => c.close()));

/** The names of an NLST or MLSD listing. */
const names = (data: Buffer | undefined, mlsd = false) =>
  (data?.toString() ?? '')
    .split('\r\n')
    .filter(Boolean)
    .map((l) => (mlsd ? l.slice(l.indexOf(' ') + 1) : l))
    .sort();

for (const f of clients) {
  const u = f.user;

  t.test(`${u.name} (provider ${u.provider}): listings leave outside links out, keep inside ones`, async (t) => {
    for (const verb of ['NLST', 'MLSD', 'LIST']) {
      const top = await f.transfer(`${verb} /`);
      t.equal(top.code, 226, `${verb} /: ${top.text}`);
      // NLST / names `/name`
      const listed =
        verb === 'LIST'
          ? (top.data?.toString() ?? '')
          : names(top.data, verb === 'MLSD')
              .map((n) => n.replace(/^\//, ''))
              .join('\n');
      for (const l of OUTSIDE_LINKS) t.notMatch(listed, new RegExp(`(^| )${l}$`, 'm'), `${verb} / does not list ${l}`);
      for (const n of ['chain-in', 'inside.txt', 'nest']) t.match(listed, new RegExp(`(^| )${n}$`, 'm'), `${verb} / lists ${n}`);
    }
    t.same(names((await f.transfer('NLST nest')).data), ['nest/in', 'nest/ok.txt'], 'NLST nest: its file and its inside link only');
    t.same(names((await f.transfer('MLSD nest')).data, true), ['in', 'ok.txt'], 'MLSD nest: the same');
    const inner = await f.transfer('MLSD /inner');
    t.same([inner.code, names(inner.data, true)], [226, []], '/inner: the link to the parent of the home is left out');
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
      t.equal((await f.transfer(`RETR ${p}`)).code, 550, `RETR ${p}`);
      for (const line of [`SIZE ${p}`, `MDTM ${p}`, `MLST ${p}`, `HASH ${p}`, `XMD5 ${p}`]) t.equal((await f.cmd(line)).code, 550, line);
    }
    for (const p of ['link-dir', 'nest/out', 'rel-up', 'chain1']) {
      t.equal((await f.cmd(`CWD ${p}`)).code, 550, `CWD ${p}`);
      t.equal((await f.transfer(`MLSD ${p}`)).code, 550, `MLSD ${p}`);
      const list = await f.transfer(`LIST ${p}`);
      t.equal(list.code, 550, `LIST ${p}`);
      t.notOk(list.text.includes(u.outside) || list.text.includes(w.dataDir), `LIST ${p}: no target in "${list.text}"`);
    }
    t.match((await f.cmd('PWD')).text, /"\/"/, 'still in /');
    t.equal((await f.transfer('STOR dangling', 'PWNED')).code, 550, 'upload through a dangling link');
    t.equal((await f.transfer('STOR dangling-dir/x', 'PWNED')).code, 550, 'upload below a dangling directory link');
    t.equal((await f.transfer('APPE link-file', 'PWNED')).code, 550, 'append through an outside file link');
    t.notOk(existsSync(path.join(u.outside, 'not-yet')), 'the dangling target was not created');
    t.equal((await f.cmd('MKD link-dir/newdir')).code, 550, 'MKD through an outside link');
    t.equal((await f.cmd('MFMT 20300101000000 link-file')).code, 550, 'MFMT of an outside file link');
    t.equal((await f.cmd('DELE link-dir/secret.txt')).code, 550, 'DELE through an outside link');
    t.equal((await f.cmd('RNFR nest/out/secret.txt')).code, 550, 'RNFR through an outside link');
    t.equal((await f.cmd('RNFR inside.txt')).code, 350);
    t.equal((await f.cmd('RNTO link-dir/planted.txt')).code, 550, 'RNTO into an outside link');
    await resetHome(u, w.dataDir);
  });

  t.test(`${u.name}: inside links are followed`, async (t) => {
    const want = `${INSIDE} sub/f.txt`;
    for (const p of ['chain-in/f.txt', 'nest/in/f.txt']) {
      const r = await f.transfer(`RETR ${p}`);
      t.same([r.code, r.data?.toString()], [226, want], `RETR ${p}`);
      t.equal((await f.cmd(`HASH ${p}`)).text, `213 SHA-256 0-${want.length} ${createHash('sha256').update(want).digest('hex')} ${p}`, `HASH ${p}`);
    }
    t.same(names((await f.transfer('NLST chain-in')).data), ['chain-in/f.txt'], 'NLST chain-in lists sub');
    t.equal((await f.cmd('CWD nest/in')).code, 250, 'CWD through an inside link');
    t.equal((await f.transfer('STOR new.txt', 'mine')).code, 226, 'an upload there');
    t.equal((await f.cmd('CWD /')).code, 250);
    t.equal((await f.transfer('STOR chain-in/new2.txt', 'mine too')).code, 226, 'an upload through an inside link');
    const files = await homeFiles(u.home);
    t.ok(files.has('sub/new.txt') && files.has('sub/new2.txt'), 'both landed in /sub');
    await resetHome(u, w.dataDir);
  });
}

t.test('no directory handle is left for the garbage collector', (t) => handleWarnings.check(t));

t.test('the canary', async (t) => {
  t.same(w.canary.leaks, [], 'no reply or data held canary content, digests or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff, [], `${path.relative(w.dataDir, root)}: untouched`);
  t.same(
    clients.flatMap((c) => [...c.broken, ...c.malformed]),
    [],
    'no control connection broke, every reply well-formed',
  );
});

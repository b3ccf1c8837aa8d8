// @ferry-test database-independent: the accounts live in the database only as settings; what is
// checked is the filesystem's confinement (runs once in CI, on SQLite).
import t from 'tap';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { craftedPaths, forUser, type Crafted } from './helpers/crafted.js';
import { FtpUser, type FtpAnswer } from './helpers/ftp.js';
import { canaryInHome, INSIDE, resetHome, startWorld, type User } from './helpers/world.js';

// The crafted paths of paths.test.ts (`..` in every spelling, encoded
// dots and separators as literal names, backslashes, NUL and control
// characters, absolute and foreign paths, very long paths, the planted
// symlinks) through every FTP command that takes a path (CWD, SIZE, HASH,
// XMD5, MDTM, MLST, LIST, NLST, MLSD, RETR, REST then RETR, STOR, APPE, MFMT, DELE,
// RNFR/RNTO with the crafted path as source and as target, MKD, RMD), for a
// provider 0 (fs-local) and a provider 4 (fs-crypt) user, over a raw FTP
// client (helpers/ftp.ts: plain FTP, EPSV and PASV data connections) that
// sends each path exactly as crafted. A path holding NUL or another control
// character is sent raw: the server must refuse the line with 501; a path
// holding CR or LF is not sent (it would end the command line: the FTP
// command line cannot carry it). Lines over the server's 4096 bytes must be
// refused with 500. Nothing outside the home may be read (no reply text or
// data holds canary bytes, names or digests), listed, written, renamed,
// removed or touched (canary compared byte for byte with inode, mtime and
// ctime); no control connection breaks; every reply is a well-formed FTP
// reply, a refusal a 4xx/5xx one.

const w = await startWorld({ ftp: true });
t.teardown(() => w.close());

const problems: string[] = [];
const skipped: string[] = [];
const short = (s: string) => (s.length > 120 ? s.slice(0, 120) + '…' : s);
const MAX_LINE = 4096;
let refusedLines = 0;

async function reset(u: User): Promise<void> {
  problems.push(...(await canaryInHome(w.canary, u)));
  await resetHome(u, w.dataDir);
}

async function ftpPaths(f: FtpUser, c: Crafted): Promise<void> {
  const u = f.user;
  const p = c.p;
  const where = (what: string) => `${u.name} ${what} ${short(JSON.stringify(p))}`;
  // what the line reader must refuse before any parsing: 501 for NUL and control characters, 500 over the length
  const control = /[\u0000-\u0008\u000b-\u001f\u007f]/.test(p);
  const tooLong = (line: string) => Buffer.byteLength(line) + 2 > MAX_LINE;
  const check = (line: string, a: FtpAnswer, ok: (a: FtpAnswer) => boolean = () => true): FtpAnswer => {
    if (a.broken) return a;
    const refusal = control ? 501 : tooLong(line) ? 500 : undefined;
    if (refusal !== undefined) {
      if (a.code !== refusal) problems.push(`${where(line.split(' ')[0]!)}: ${a.code} "${short(a.text)}", expected the line refused with ${refusal}`);
      else refusedLines++;
    } else if (!ok(a)) problems.push(`${where(line.split(' ')[0]!)}: ${a.code} "${short(a.text)}"`);
    return a;
  };
  const refused = (a: FtpAnswer) => a.code >= 400 && a.code <= 599;
  // reads: refused (nothing of these names exists in the home, outside links are refused) or, for CWD and listings, harmless; scanned either way
  for (const line of [`RETR ${p}`]) check(line, await f.transfer(line), refused);
  check(`RETR ${p}`, await f.transfer(`RETR ${p}`, undefined, { rest: 10 }), refused);
  // SIZE, and the hashes (a hash is a read of the file: HASH's SHA-256 and XMD5's digests are canary needles)
  for (const line of [`SIZE ${p}`, `HASH ${p}`, `XMD5 ${p}`]) check(line, await f.cmd(line), refused);
  for (const line of [`MDTM ${p}`, `MLST ${p}`]) check(line, await f.cmd(line));
  for (const line of [`LIST ${p}`, `NLST ${p}`, `MLSD ${p}`]) check(line, await f.transfer(line));
  {
    const line = `CWD ${p}`;
    const a = check(line, await f.cmd(line));
    if (a.code >= 200 && a.code < 300) {
      // wherever it went, the session's root is still the home: the listing there and a way back are scanned too
      await f.transfer('LIST');
      await f.cmd('PWD');
      const back = await f.cmd('CWD /');
      if (back.code !== 250) problems.push(`${where('CWD back to /')}: ${back.code} ${back.text}`);
    }
  }
  // writes and destructive commands: each one starts from the fixture (an earlier success inside the home must not hide a later escape)
  const tries: [string, () => Promise<FtpAnswer>][] = [
    [`STOR ${p}`, () => f.transfer(`STOR ${p}`, 'PWNED')],
    [`APPE ${p}`, () => f.transfer(`APPE ${p}`, 'PWNED')],
    [`MFMT 20300101000000 ${p}`, () => f.cmd(`MFMT 20300101000000 ${p}`)],
    [`MKD ${p}`, () => f.cmd(`MKD ${p}`)],
    [`DELE ${p}`, () => f.cmd(`DELE ${p}`)],
    [`RMD ${p}`, () => f.cmd(`RMD ${p}`)],
  ];
  for (const [line, attempt] of tries) if (check(line, await attempt()).code < 300) await reset(u);
  // renames: the crafted path as target (of a file, of a directory) and as source
  for (const from of ['inside.txt', 'sub']) {
    const rnfr = await f.cmd(`RNFR ${from}`);
    if (rnfr.code !== 350) problems.push(`${u.name} RNFR ${from}: ${rnfr.code} ${rnfr.text}`);
    const line = `RNTO ${p}`;
    if (check(line, await f.cmd(line)).code < 300) await reset(u);
  }
  {
    const line = `RNFR ${p}`;
    const a = check(line, await f.cmd(line));
    if (a.code === 350 && (await f.cmd('RNTO moved')).code < 300) await reset(u);
  }
}

for (const u of w.users) await resetHome(u, w.dataDir);

t.test('the client works: reads, listings, writes and renames inside the home succeed (so a refusal below means something)', async (t) => {
  for (const u of w.users) {
    const f = await FtpUser.connect(w, u);
    t.teardown(() => f.close());
    const whole = await f.transfer('RETR inside.txt');
    t.same([whole.code, whole.data?.toString()], [226, `${INSIDE} inside.txt`], `${u.name} RETR over EPSV`);
    const tail = await f.transfer('RETR inside.txt', undefined, { rest: 10 });
    t.same([tail.code, tail.data?.toString()], [226, `${INSIDE} inside.txt`.slice(10)], `${u.name} REST 10 then RETR over PASV`);
    for (const verb of ['LIST', 'NLST', 'MLSD']) {
      const l = await f.transfer(`${verb} sub`);
      t.match([l.code, l.data?.toString()], [226, /f\.txt/], `${u.name} ${verb}`);
    }
    t.equal((await f.transfer('STOR new.txt', 'mine')).code, 226, `${u.name} STOR`);
    // fs-crypt writes no offset (so no APPE): a 504 from the backend
    t.equal((await f.transfer('APPE new.txt', ' too')).code, u.provider === 0 ? 226 : 504, `${u.name} APPE`);
    t.equal((await f.cmd('SIZE new.txt')).text, u.provider === 0 ? '213 8' : '213 4', `${u.name} SIZE`);
    const sum = createHash('sha256').update(`${INSIDE} inside.txt`).digest('hex');
    t.equal((await f.cmd('HASH inside.txt')).text, `213 SHA-256 0-${INSIDE.length + 11} ${sum} inside.txt`, `${u.name} HASH`);
    t.equal((await f.cmd('XMD5 /inside.txt')).text, `250 ${createHash('md5').update(`${INSIDE} inside.txt`).digest('hex')}`, `${u.name} XMD5`);
    t.equal((await f.cmd('RNFR new.txt')).code, 350, `${u.name} RNFR`);
    t.equal((await f.cmd('RNTO sub/new.txt')).code, 250, `${u.name} RNTO`);
    t.equal((await f.cmd('MKD d')).code, 257, `${u.name} MKD`);
    t.equal((await f.cmd('CWD d')).code, 250, `${u.name} CWD`);
    t.match((await f.cmd('PWD')).text, /"\/d"/, `${u.name} PWD`);
    t.equal((await f.cmd('RMD /d')).code, 250, `${u.name} RMD`);
    t.equal((await f.cmd('DELE /sub/new.txt')).code, 250, `${u.name} DELE`);
    t.equal((await f.cmd('MULTI')).code, 502, `${u.name} an unknown verb`);
    t.match((await f.cmd('FEAT')).text, /^211-[^]*\n211 End$/, `${u.name} a multi-line reply read whole`);
    // the scan sees data and listings: a probe needle (the content of inside.txt) and a probe name (f.txt), then taken back
    const leaks = w.canary.leaks.length;
    w.canary.needles.push({ what: 'probe', bytes: Buffer.from(`${INSIDE} inside.txt`) });
    w.canary.names.push('f.txt');
    w.canary.needles.push({ what: 'probe digest', bytes: Buffer.from(sum) });
    const probes = [await f.transfer('RETR /inside.txt'), await f.transfer('MLSD /sub'), await f.cmd('MLST /sub/f.txt'), await f.cmd('HASH /inside.txt')];
    w.canary.needles.pop();
    w.canary.needles.pop();
    w.canary.names.pop();
    const seen = w.canary.leaks.splice(leaks).map((l) => l.what);
    t.same(
      probes.map((a) => a.code),
      [226, 226, 250, 213],
      `${u.name} probes answered`,
    );
    t.same(
      seen,
      ['content of probe', 'canary name f.txt', 'canary name f.txt', 'content of probe digest'],
      `${u.name} the canary scan sees RETR data, MLSD data, MLST and HASH replies`,
    );
    t.same([f.broken, f.malformed], [[], []], `${u.name} no broken connection, no malformed reply`);
    await resetHome(u, w.dataDir);
  }
});

t.test('crafted paths and planted symlinks through every FTP command that takes a path', async (t) => {
  const clients = await Promise.all(w.users.map((u) => FtpUser.connect(w, u)));
  t.teardown(() => clients.forEach((c) => c.close()));
  await Promise.all(
    clients.map(async (f) => {
      for (const c of forUser(f.user, craftedPaths(f.user, w.dataDir))) {
        if (/[\r\n]/.test(c.p)) {
          skipped.push(`${f.user.name} ${JSON.stringify(c.p)}`);
          continue;
        }
        await ftpPaths(f, c);
        await reset(f.user);
      }
    }),
  );
  const counts = new Map<string, number>();
  for (const f of clients) for (const [k, n] of f.counts) counts.set(k, (counts.get(k) ?? 0) + n);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  t.comment(`commands per verb (${total} in all, both users; ${refusedLines} lines refused by the line reader as expected):`);
  for (const [k, n] of [...counts].sort()) t.comment(`  ${k}: ${n}`);
  const codes = new Map<string, number>();
  for (const f of clients) for (const [k, n] of f.codes) codes.set(k, (codes.get(k) ?? 0) + n);
  t.comment(
    `final replies by verb and code: ${[...codes]
      .sort()
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ')}`,
  );
  t.comment(`not sent (CR or LF in the path, which would end the command line): ${skipped.join(', ')}`);
  t.ok(total >= 2000, `${total} commands`);
  t.ok(refusedLines > 0, 'control characters and over-long lines refused by the line reader');
  t.same(clients.flatMap((f) => f.broken).slice(0, 10), [], 'no control connection broke under a command');
  t.same(clients.flatMap((f) => f.malformed).slice(0, 10), [], 'every reply a well-formed FTP reply');
  t.same(problems.slice(0, 30), [], 'every read refused as expected, every bad line refused, nothing of the canary copied into the home');
});

t.test('the canary outside the homes', async (t) => {
  t.same(w.canary.leaks.slice(0, 20), [], 'no reply or data held canary content, digests or names');
  for (const { root, diff } of w.canary.changes()) t.same(diff.slice(0, 30), [], `${path.relative(w.dataDir, root)}: not written, renamed, removed or touched`);
});

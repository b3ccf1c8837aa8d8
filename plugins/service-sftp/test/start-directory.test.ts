import t from 'tap';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectSsh, openSftp, rawSftp, sftpBatch, sftpStr, sshKey, startSftp, u32 } from './helpers.js';

// filters.start_directory over SFTP: REALPATH of '.' answers it (OpenSSH's sftp lands there) and
// relative paths resolve against it; a missing one starts the session in '/'; it confines nothing.
t.test('OpenSSH sftp lands in the start directory, put writes there, cd .. leaves it', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({ 'x.txt': 'start here\n' });
  const key = await sshKey(dir);
  const home = await h.addUser('sam', { public_keys: [key.pub], filters: { start_directory: '/in/box' } });
  mkdirSync(path.join(home, 'in', 'box'), { recursive: true });
  writeFileSync(path.join(home, 'top.txt'), 'top');
  const r = await sftpBatch({ port: h.port, user: 'sam', key: key.file, dir, lines: ['pwd', 'put x.txt', 'ls', 'cd ..', 'pwd', 'get ../top.txt got.txt'] });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /Remote working directory: \/in\/box\n/, 'pwd: the start directory');
  t.equal(readFileSync(path.join(home, 'in', 'box', 'x.txt'), 'utf8'), 'start here\n', 'put x.txt wrote into the start directory');
  t.notOk(existsSync(path.join(home, 'x.txt')), 'not at the root');
  t.match(r.stdout, /Remote working directory: \/in\n/, 'cd .. goes up: a starting point, not a jail');
  t.equal(readFileSync(path.join(dir, 'got.txt'), 'utf8'), 'top', 'the root is reachable');

  await t.test("a missing start directory: the session starts in '/'", async (t) => {
    const other = await h.addUser('sid', { public_keys: [key.pub], filters: { start_directory: '/gone' } });
    const r = await sftpBatch({ port: h.port, user: 'sid', key: key.file, dir, lines: ['pwd', 'put x.txt'] });
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /Remote working directory: \/\n/);
    t.ok(existsSync(path.join(other, 'x.txt')));
  });
});

t.test('raw SFTP: REALPATH of . and of relative paths, a relative STAT', async (t) => {
  const h = await startSftp(t);
  const home = await h.addUser('raw', { filters: { start_directory: '/work' } });
  mkdirSync(path.join(home, 'work'), { recursive: true });
  writeFileSync(path.join(home, 'work', 'a.txt'), 'in work');
  const c = await connectSsh({ port: h.port, username: 'raw', password: 'raw-pass-1' });
  t.teardown(() => c.end());
  const sftp = await openSftp(c);
  const realpath = (p: string) => new Promise<string>((res, rej) => sftp.realpath(p, (err, r) => (err ? rej(err) : res(r))));
  t.equal(await realpath('.'), '/work');
  t.equal(await realpath(''), '/work');
  t.equal(await realpath('sub/../b'), '/work/b');
  t.equal(await realpath('/abs'), '/abs', 'absolute paths are untouched');
  t.equal(await realpath('../../..'), '/', "'..' stays inside the root");
  const size = await new Promise<number>((res, rej) => sftp.stat('a.txt', (err, st) => (err ? rej(err) : res(st.size))));
  t.equal(size, 7, 'STAT of a relative path: the file in the start directory');

  // expand-path@openssh.com (raw: ssh2's client writes it malformed): relative paths from the start directory, ~ the root
  const rc = await connectSsh({ port: h.port, username: 'raw', password: 'raw-pass-1' });
  t.teardown(() => rc.end());
  const raw = await rawSftp(rc);
  let id = 0;
  const expand = async (p: string) => {
    raw.send(200, Buffer.concat([u32(++id), sftpStr('expand-path@openssh.com'), sftpStr(p)]));
    const a = await raw.next();
    return a[0] === 104 ? a.toString('utf8', 13, 13 + a.readUInt32BE(9)) : `status ${a[0]}`;
  };
  t.equal(await expand('d/e'), '/work/d/e');
  t.equal(await expand('~/d'), '/d');
});

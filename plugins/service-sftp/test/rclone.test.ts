import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rclone, rcloneRemote, sha, tree } from './clients.js';
import { defenderScore, sshKey, startSftp } from './helpers.js';

// rclone's sftp remote (connection strings, no configuration file) against the service.

/** A local tree of a few files, nested, small and large. */
function makeTree(root: string): void {
  mkdirSync(path.join(root, 'a/b/c'), { recursive: true });
  mkdirSync(path.join(root, 'empty-sibling/d'), { recursive: true });
  writeFileSync(path.join(root, 'top.txt'), 'top level\n');
  writeFileSync(path.join(root, 'a/one.bin'), randomBytes(700_000));
  writeFileSync(path.join(root, 'a/b/two.bin'), randomBytes(3 * 1024 * 1024 + 3));
  writeFileSync(path.join(root, 'a/b/c/three.txt'), 'deep\n');
  writeFileSync(path.join(root, 'empty-sibling/d/zero.txt'), '');
}

t.test('rclone', async (t) => {
  const h = await startSftp(t, { config: { defender: { enabled: true, threshold: 1000, score_invalid: 3, observation_time: 60 } } });
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('rick', { public_keys: [key.pub] });
  const byKey = await rcloneRemote({ port: h.port, user: 'rick', key: key.file });
  const local = path.join(dir, 'local');
  makeTree(local);

  await t.test('copy a tree up and back, sync, check', async (t) => {
    const up = await rclone(['copy', local, `${byKey}/up`]);
    t.equal(up.code, 0, up.stderr);
    t.same(tree(path.join(home, 'up')), tree(local), 'the server has the same tree, byte for byte');
    const down = await rclone(['copy', `${byKey}/up`, path.join(dir, 'down')]);
    t.equal(down.code, 0, down.stderr);
    t.same(tree(path.join(dir, 'down')), tree(local), 'and back');

    // sync: a changed file, a new one and a removed one reach the server
    writeFileSync(path.join(local, 'top.txt'), 'changed, and longer than before\n');
    writeFileSync(path.join(local, 'a/new.txt'), 'new\n');
    const removed = path.join(local, 'a/one.bin');
    const kept = readFileSync(removed);
    rmSync(removed);
    const sync = await rclone(['sync', local, `${byKey}/up`]);
    t.equal(sync.code, 0, sync.stderr);
    t.same(tree(path.join(home, 'up')), tree(local), 'synced: changed, added and removed files');
    t.notOk(existsSync(path.join(home, 'up/a/one.bin')));
    writeFileSync(removed, kept);

    // sync the other way: the server's tree onto a local directory with a stray file
    const back = path.join(dir, 'back');
    mkdirSync(back);
    writeFileSync(path.join(back, 'stray.txt'), 'not on the server');
    const syncDown = await rclone(['sync', `${byKey}/up`, back]);
    t.equal(syncDown.code, 0, syncDown.stderr);
    t.same(tree(back), tree(path.join(home, 'up')), 'synced down; the stray file removed');

    const check = await rclone(['check', `${byKey}/up`, back, '--size-only']);
    t.equal(check.code, 0, check.stderr);
    writeFileSync(path.join(back, 'a/new.txt'), 'different\n');
    const differs = await rclone(['check', `${byKey}/up`, back, '--size-only']);
    t.not(differs.code, 0, 'check sees a difference');
    t.match(differs.stderr, /a\/new\.txt/);
  });

  await t.test('ls, lsf, mkdir, moveto, deletefile, rmdir, purge', async (t) => {
    const ls = await rclone(['ls', `${byKey}/up`]);
    t.equal(ls.code, 0, ls.stderr);
    t.match(ls.stdout, /^\s*3145731 a\/b\/two\.bin$/m, 'ls: size and path');
    const mkdir = await rclone(['mkdir', `${byKey}/made/deeper`]);
    t.equal(mkdir.code, 0, mkdir.stderr);
    t.ok(existsSync(path.join(home, 'made/deeper')), 'mkdir makes the parents too');
    const lsf = await rclone(['lsf', `${byKey}/made`]);
    t.equal(lsf.stdout, 'deeper/\n');
    const moved = await rclone(['moveto', `${byKey}/up/top.txt`, `${byKey}/made/deeper/renamed.txt`]);
    t.equal(moved.code, 0, moved.stderr);
    t.notOk(existsSync(path.join(home, 'up/top.txt')));
    t.equal(readFileSync(path.join(home, 'made/deeper/renamed.txt'), 'utf8'), readFileSync(path.join(local, 'top.txt'), 'utf8'));
    const del = await rclone(['deletefile', `${byKey}/made/deeper/renamed.txt`]);
    t.equal(del.code, 0, del.stderr);
    t.notOk(existsSync(path.join(home, 'made/deeper/renamed.txt')));
    const rmdirs = await rclone(['rmdirs', `${byKey}/made`]);
    t.equal(rmdirs.code, 0, rmdirs.stderr);
    t.notOk(existsSync(path.join(home, 'made')), 'rmdirs removes the empty directories');
    const purge = await rclone(['purge', `${byKey}/up/a/b`]);
    t.equal(purge.code, 0, purge.stderr);
    t.notOk(existsSync(path.join(home, 'up/a/b')), 'purge removes a tree');
    t.ok(existsSync(path.join(home, 'up/a/new.txt')), 'and nothing beside it');
  });

  await t.test('checksums through the md5sum and sha1sum SSH commands (shell_type unix, commands detected)', async (t) => {
    const withShell = await rcloneRemote({ port: h.port, user: 'rick', key: key.file, shell: 'unix' });
    const up = await rclone(['copy', local, `${withShell}/hashed`, '-v']);
    t.equal(up.code, 0, up.stderr);
    // one file at a time: rclone 1.60 detects its hash commands once per run, and reports the files it hashes
    // meanwhile in other goroutines as unsupported
    const md5 = await rclone(['md5sum', `${withShell}/hashed/a/one.bin`]);
    t.equal(md5.code, 0, md5.stderr);
    const want = createHash('md5')
      .update(readFileSync(path.join(local, 'a/one.bin')))
      .digest('hex');
    t.match(md5.stdout, new RegExp(`^${want}  one\\.bin$`, 'm'), 'the md5 the server computed');
    const sha1 = await rclone(['sha1sum', `${withShell}/hashed/a/b/two.bin`]);
    t.equal(
      sha1.stdout.split(' ')[0],
      createHash('sha1')
        .update(readFileSync(path.join(local, 'a/b/two.bin')))
        .digest('hex'),
    );
    const check = await rclone(['check', local, `${withShell}/hashed`]);
    t.equal(check.code, 0, check.stderr);
    t.match(check.stderr, /0 differences found/);
    t.match(check.stderr, /6 matching files/);
    t.notMatch(check.stderr, /hash.*(unavailable|not supported)|no hashes in common/i, 'compared by hash, not only sizes');
    // a file changed on the server behind rclone's back, same size: only the hash shows it
    const changed = path.join(home, 'hashed/a/b/c/three.txt');
    writeFileSync(changed, 'DEEP\n');
    const differs = await rclone(['check', local, `${withShell}/hashed`]);
    t.not(differs.code, 0);
    t.match(differs.stderr, /1 differences found/);
    t.match(differs.stderr, /a\/b\/c\/three\.txt/);
  });

  await t.test('password login (obscured); a wrong password scores in the defender', async (t) => {
    const pw = await h.addUser('rosa');
    const byPassword = await rcloneRemote({ port: h.port, user: 'rosa', password: 'rosa-pass-1' });
    const up = await rclone(['copyto', path.join(local, 'a/b/two.bin'), `${byPassword}/two.bin`]);
    t.equal(up.code, 0, up.stderr);
    t.equal(sha(path.join(pw, 'two.bin')), sha(path.join(local, 'a/b/two.bin')));
    const before = await defenderScore(h);
    const wrong = await rcloneRemote({ port: h.port, user: 'rosa', password: 'not-it' });
    const refused = await rclone(['lsf', wrong]);
    t.not(refused.code, 0);
    t.match(refused.stderr, /unable to authenticate|handshake failed/);
    t.ok((await defenderScore(h)) > before, 'the refused login scored');
    t.ok(
      h.logs.some((e) => e.event === 1 && e.username === 'rosa' && e.protocol === 'SSH'),
      'a failed login event',
    );
  });

  await t.test('refusals: denied path, denied SSH protocol', async (t) => {
    const home = await h.addUser('rudi', { public_keys: [key.pub], permissions: { '/': ['*'], '/ro': ['list', 'download'] } });
    mkdirSync(path.join(home, 'ro'), { recursive: true });
    writeFileSync(path.join(home, 'ro/r.txt'), 'read only\n');
    const remote = await rcloneRemote({ port: h.port, user: 'rudi', key: key.file });
    const put = await rclone(['copyto', path.join(local, 'top.txt'), `${remote}/ro/w.txt`]);
    t.not(put.code, 0, 'an upload into a read-only path fails');
    t.match(put.stderr, /permission denied/i);
    t.notOk(existsSync(path.join(home, 'ro/w.txt')));
    const del = await rclone(['deletefile', `${remote}/ro/r.txt`]);
    t.not(del.code, 0, 'so does a removal');
    t.ok(existsSync(path.join(home, 'ro/r.txt')));
    const get = await rclone(['cat', `${remote}/ro/r.txt`]);
    t.equal(get.stdout, 'read only\n', 'reading is allowed');

    await h.addUser('sal', { public_keys: [key.pub], filters: { denied_protocols: ['SSH'] } });
    const sftpDenied = await rclone(['lsf', await rcloneRemote({ port: h.port, user: 'sal', key: key.file })]);
    t.not(sftpDenied.code, 0, 'SSH denied: the login is refused');
  });
});

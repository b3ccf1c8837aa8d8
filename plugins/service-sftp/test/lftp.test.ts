import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { lftp, sha, tree } from './clients.js';
import { sshKey, startSftp } from './helpers.js';

// lftp over sftp:// (OpenSSH as its connect program, key login) against the service.

t.test('lftp sftp://', async (t) => {
  const h = await startSftp(t);
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const home = await h.addUser('lee', { public_keys: [key.pub], permissions: { '/': ['*'], '/ro': ['list', 'download'] } });
  const cmd = (commands: string[]) => lftp({ port: h.port, user: 'lee', key: key.file, dir, commands });
  const big = randomBytes(4 * 1024 * 1024 + 99);
  writeFileSync(path.join(dir, 'big.bin'), big);
  const local = path.join(dir, 'tree');
  mkdirSync(path.join(local, 'x/y'), { recursive: true });
  writeFileSync(path.join(local, 'x/a.txt'), 'a\n');
  writeFileSync(path.join(local, 'x/y/b.bin'), randomBytes(900_000));
  writeFileSync(path.join(local, 'c.txt'), 'c\n');

  await t.test('put, get, ls, mkdir, mv, chmod, rm, rmdir', async (t) => {
    const r = await cmd([
      'mkdir /d',
      'put big.bin -o /d/big.bin',
      'get /d/big.bin -o back.bin',
      'mv /d/big.bin /d/moved.bin',
      'chmod 600 /d/moved.bin',
      'cls -l /d',
    ]);
    t.equal(r.code, 0, r.stderr);
    t.equal(sha(path.join(home, 'd/moved.bin')), sha(path.join(dir, 'big.bin')), 'uploaded byte for byte');
    t.equal(sha(path.join(dir, 'back.bin')), sha(path.join(dir, 'big.bin')), 'downloaded byte for byte');
    t.notOk(existsSync(path.join(home, 'd/big.bin')), 'renamed');
    t.match(r.stdout, new RegExp(`${big.length}.*moved\\.bin`), 'the long listing shows the size');
    const refused = await cmd(['rmdir /d']);
    t.not(refused.code, 0, 'a directory that is not empty stays');
    t.ok(existsSync(path.join(home, 'd/moved.bin')));
    const removed = await cmd(['rm /d/moved.bin', 'rmdir /d', 'cls /']);
    t.equal(removed.code, 0, removed.stderr);
    t.notOk(existsSync(path.join(home, 'd')));
  });

  await t.test('mirror -R uploads a tree, mirror downloads it', async (t) => {
    const up = await cmd([`mirror -R ${local} /m`]);
    t.equal(up.code, 0, up.stderr);
    t.same(tree(path.join(home, 'm')), tree(local), 'the server has the tree');
    const down = await cmd([`mirror /m ${path.join(dir, 'mirrored')}`]);
    t.equal(down.code, 0, down.stderr);
    t.same(tree(path.join(dir, 'mirrored')), tree(local), 'and back');
    // a second mirror -R after a change sends the change
    writeFileSync(path.join(local, 'x/a.txt'), 'a changed\n');
    const again = await cmd([`mirror -R ${local} /m`]);
    t.equal(again.code, 0, again.stderr);
    t.equal(readFileSync(path.join(home, 'm/x/a.txt'), 'utf8'), 'a changed\n');
  });

  await t.test('reput: the rest of an interrupted upload (put -c)', async (t) => {
    // the part on the server is marked: a resumed upload keeps it, a whole new one would not
    const kept = 1024 * 1024 + 1;
    const marked = Buffer.concat([Buffer.alloc(kept, 0x55), big.subarray(kept)]);
    writeFileSync(path.join(home, 'part.bin'), marked.subarray(0, kept));
    const r = await cmd(['put -c big.bin -o /part.bin']);
    t.equal(r.code, 0, r.stderr);
    t.ok(readFileSync(path.join(home, 'part.bin')).equals(marked), 'the part kept, the rest appended: the size of the whole file');
  });

  await t.test('a denied path: permission denied, nothing written', async (t) => {
    mkdirSync(path.join(home, 'ro'), { recursive: true });
    const r = await cmd(['put big.bin -o /ro/big.bin']);
    t.not(r.code, 0);
    t.match(r.stderr, /permission denied/i);
    t.same(readdirSync(path.join(home, 'ro')), []);
  });
});

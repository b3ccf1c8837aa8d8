import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { run, startWebdav } from './helpers.js';

// rclone's webdav remote (vendor=other; a connection string, no configuration file) both ways,
// compared byte for byte with diff -r.

const rclone = (args: string[]) => run('rclone', ['--retries', '1', '--low-level-retries', '1', ...args], { env: { RCLONE_CONFIG: '/nonexistent.conf' } });
const same = (a: string, b: string) => run('diff', ['-r', a, b]);

t.test('rclone webdav: copy and sync both ways', async (t) => {
  const h = await startWebdav(t, { webdav: { prefix: '/dav' } });
  const home = await h.addUser('rick');
  const dir = t.testdir({});
  const obscured = await run('rclone', ['obscure', 'rick-pass-1']);
  t.equal(obscured.code, 0, 'rclone obscure');
  const remote = `:webdav,url='${h.base}/',vendor=other,user=rick,pass=${obscured.stdout.trim()}:`;
  const local = path.join(dir, 'local');
  mkdirSync(path.join(local, 'a/b/c'), { recursive: true });
  mkdirSync(path.join(local, 'with space/ünï'), { recursive: true });
  writeFileSync(path.join(local, 'top.txt'), 'top level\n');
  writeFileSync(path.join(local, 'a/one.bin'), randomBytes(700_000));
  writeFileSync(path.join(local, 'a/b/two.bin'), randomBytes(5 * 1024 * 1024 + 3));
  writeFileSync(path.join(local, 'a/b/c/three.txt'), 'deep\n');
  writeFileSync(path.join(local, 'with space/ünï/zero #%.txt'), '');

  const up = await rclone(['copy', local, `${remote}up`]);
  t.equal(up.code, 0, 'rclone up', { stderr: up.stderr });
  t.equal((await same(local, path.join(home, 'up'))).code, 0, 'the server has the same tree, byte for byte');

  const down = await rclone(['copy', `${remote}up`, path.join(dir, 'down')]);
  t.equal(down.code, 0, 'rclone down', { stderr: down.stderr });
  t.equal((await same(local, path.join(dir, 'down'))).code, 0, 'and back');

  writeFileSync(path.join(local, 'top.txt'), 'changed, and longer than before\n');
  writeFileSync(path.join(local, 'a/new.txt'), 'new\n');
  rmSync(path.join(local, 'a/one.bin'));
  const sync = await rclone(['sync', local, `${remote}up`]);
  t.equal(sync.code, 0, 'rclone sync', { stderr: sync.stderr });
  t.equal((await same(local, path.join(home, 'up'))).code, 0, 'synced up: changed, added and removed files');
  t.notOk(existsSync(path.join(home, 'up/a/one.bin')));

  const back = path.join(dir, 'back');
  mkdirSync(back);
  writeFileSync(path.join(back, 'stray.txt'), 'not on the server');
  const syncDown = await rclone(['sync', `${remote}up`, back]);
  t.equal(syncDown.code, 0, 'rclone syncDown', { stderr: syncDown.stderr });
  t.equal((await same(path.join(home, 'up'), back)).code, 0, 'synced down; the stray file removed');

  const check = await rclone(['check', `${remote}up`, back, '--download']);
  t.equal(check.code, 0, 'rclone check --download: no difference', { stderr: check.stderr });
  writeFileSync(path.join(back, 'a/new.txt'), 'different\n');
  const differs = await rclone(['check', `${remote}up`, back, '--download']);
  t.not(differs.code, 0, 'and check sees a changed byte');

  const moved = await rclone(['moveto', `${remote}up/top.txt`, `${remote}up/a/top-moved.txt`]);
  t.equal(moved.code, 0, 'rclone moved', { stderr: moved.stderr });
  t.ok(existsSync(path.join(home, 'up/a/top-moved.txt')));
  t.notOk(existsSync(path.join(home, 'up/top.txt')));
  const purge = await rclone(['purge', `${remote}up/a`]);
  t.equal(purge.code, 0, 'rclone purge', { stderr: purge.stderr });
  t.notOk(existsSync(path.join(home, 'up/a')));
});

import { existsSync, fstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { FsErrorCode } from '@ferry/core';
import { expectFsError, openDescriptorsUnder, writeFile } from '@ferry/testkit';
import { LocalFs, closeHeldDirs, heldDirCount, HELD_DIR_IDLE_MS } from '../src/index.js';
import { keepHeldDir, takeHeldDir } from '../src/held-dirs.js';

function fresh(t: Test) {
  closeHeldDirs();
  const base = realpathSync(t.testdir({ root: { sub: { 'a.txt': 'a' } }, outside: { 'secret.txt': 'outside' }, tmp: {} }));
  const root = path.join(base, 'root');
  return { base, root, fs: new LocalFs({ root, tempDir: path.join(base, 'tmp') }) };
}

t.afterEach(() => closeHeldDirs());

t.test('a directory opened by one operation is kept for the next, and closed when idle', async (t) => {
  const { root, fs } = fresh(t);
  t.equal(openDescriptorsUnder(root), 0);
  t.equal((await fs.stat('/sub/a.txt')).size, 1);
  t.equal(openDescriptorsUnder(path.join(root, 'sub')), 1, 'the directory stays open after the stat');
  t.equal(heldDirCount(), 1);
  // another LocalFs on the same root (an HTTP request's) uses the same descriptor
  const other = new LocalFs({ root, tempDir: path.join(root, '..', 'tmp') });
  await writeFile(other, '/sub/b.txt', 'bb');
  t.equal(readFileSync(path.join(root, 'sub', 'b.txt'), 'utf8'), 'bb');
  t.equal(openDescriptorsUnder(path.join(root, 'sub')), 1, 'no second descriptor for the next operations');
  await new Promise((r) => setTimeout(r, HELD_DIR_IDLE_MS * 1.5 + 200));
  t.equal(openDescriptorsUnder(root), 0, 'closed once idle');
  t.equal(heldDirCount(), 0);
});

t.test('a kept directory renamed or removed is not used again', async (t) => {
  const { root, fs } = fresh(t);
  await fs.stat('/sub/a.txt');
  renameSync(path.join(root, 'sub'), path.join(root, 'moved'));
  await expectFsError(t, fs.stat('/sub/a.txt'), FsErrorCode.NotFound, 'the old path is gone');
  await expectFsError(t, writeFile(fs, '/sub/new.txt', 'x'), FsErrorCode.NotFound, 'an upload to the old path does not land in the moved directory');
  t.notOk(existsSync(path.join(root, 'moved', 'new.txt')));
  t.equal((await fs.stat('/moved/a.txt')).size, 1, 'the new path works');

  await fs.stat('/moved/a.txt');
  renameSync(path.join(root, 'moved', 'a.txt'), path.join(root, 'a.txt'));
  rmdirSync(path.join(root, 'moved'));
  mkdirSync(path.join(root, 'moved'));
  await writeFile(fs, '/moved/c.txt', 'c');
  t.equal(readFileSync(path.join(root, 'moved', 'c.txt'), 'utf8'), 'c', 'a directory made again at the path is the one written');
});

t.test('a kept directory swapped for a link leading outside: refused, nothing outside touched', async (t) => {
  const { base, root, fs } = fresh(t);
  await fs.stat('/sub/a.txt');
  renameSync(path.join(root, 'sub'), path.join(base, 'away'));
  symlinkSync(path.join(base, 'outside'), path.join(root, 'sub'));
  await expectFsError(t, fs.stat('/sub/secret.txt'), FsErrorCode.Escape, 'the link is checked as always');
  await expectFsError(t, writeFile(fs, '/sub/x.txt', 'x'), FsErrorCode.Escape, 'no upload through it');
  t.notOk(existsSync(path.join(base, 'outside', 'x.txt')));
  t.notOk(existsSync(path.join(base, 'away', 'x.txt')), 'nor into the directory moved out of the root');
});

t.test('a descriptor in use is closed only once its last user is done', async (t) => {
  const { root } = fresh(t);
  const dir = path.join(root, 'sub');
  const fd = openSync(dir, 'r');
  const release = keepHeldDir(dir, fd);
  t.ok(release, 'kept');
  t.equal(keepHeldDir(dir, fd), undefined, 'one descriptor per directory');
  const again = takeHeldDir(dir);
  t.equal(again?.fd, fd, 'handed out again while its path reads the same');
  closeHeldDirs();
  t.equal(takeHeldDir(dir), undefined, 'no longer handed out');
  release!();
  t.ok(fstatSync(fd).isDirectory(), 'still open: one user left');
  again!.release();
  t.throws(() => fstatSync(fd), { code: 'EBADF' }, 'closed with its last user');
});

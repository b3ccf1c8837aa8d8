// Operations of one batch (OpOptions.batch: the files of one multipart request) share
// the parent directory's descriptor, opened and checked once: the same confinement as
// without a batch, one open and check fewer per file, and nothing left open once the
// batch is closed.
import fsSync, { type PathLike } from 'node:fs';
import { mkdir, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import t from 'tap';
import { FsErrorCode, RequestFsBatch } from '@ferry/core';
import { expectFsError, openDescriptorsUnder, readFile as readFsFile, writeFile as writeFsFile } from '@ferry/testkit';
import { LocalFs, closeHeldDirs } from '../src/index.js';

const base = t.testdir({});
let n = 0;
async function fresh(): Promise<{ fs: LocalFs; root: string; outside: string }> {
  const dir = path.join(base, `d${n++}`);
  const root = path.join(dir, 'root');
  const outside = path.join(dir, 'outside');
  await mkdir(path.join(root, 'up'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'canary.txt'), 'canary');
  return { fs: new LocalFs({ root, tempDir: path.join(dir, 'data', 'uploads-tmp') }), root, outside };
}

t.test('files of a batch are written through one held parent, released by close()', async (t) => {
  const { fs, root } = await fresh();
  const batch = new RequestFsBatch();
  const before = openDescriptorsUnder(root);
  for (let i = 0; i < 20; i++) {
    const vpath = `/up/f${i}.txt`;
    t.equal(
      await fs.stat(vpath, { batch }).then(
        () => 'found',
        (err: { code?: string }) => err.code,
      ),
      FsErrorCode.NotFound,
      `${vpath} is missing at first`,
    );
    await writeFsFile(fs, vpath, `file ${i}`, { batch });
  }
  t.equal(openDescriptorsUnder(root), before + 1, 'one descriptor of the parent is held for the whole batch, not one per file');
  t.equal((await fs.stat('/up/f3.txt', { batch })).size, 6, 'stat in the batch sees a published file');
  await batch.close();
  // (released to held-dirs.ts, which keeps it for the next operations until idle: closed at once here)
  closeHeldDirs();
  t.equal(openDescriptorsUnder(root), before, 'closing the batch releases the held descriptor');
  t.equal((await readdir(path.join(root, 'up'))).length, 20, 'every file is in place');
  t.equal(await readFile(path.join(root, 'up', 'f7.txt'), 'utf8'), 'file 7');
  await writeFsFile(fs, '/up/after.txt', 'after', { batch });
  t.equal(await readFile(path.join(root, 'up', 'after.txt'), 'utf8'), 'after', 'a closed batch holds nothing: the usual path');
  closeHeldDirs();
  t.equal(openDescriptorsUnder(root), before, 'and leaves nothing open');
});

t.test('a parent swapped for a link to the outside during a batch: files go to the checked directory, never outside', async (t) => {
  const { fs, root, outside } = await fresh();
  const batch = new RequestFsBatch();
  await writeFsFile(fs, '/up/first.txt', 'first', { batch });
  // another process moves the directory away and puts a link to the outside in its place
  await rename(path.join(root, 'up'), path.join(root, 'moved'));
  await symlink(outside, path.join(root, 'up'));
  await writeFsFile(fs, '/up/second.txt', 'second', { batch });
  await writeFsFile(fs, '/up/canary.txt', 'overwritten?', { batch });
  await batch.close();
  t.same((await readdir(outside)).sort(), ['canary.txt'], 'nothing was created outside');
  t.equal(await readFile(path.join(outside, 'canary.txt'), 'utf8'), 'canary', 'the outside file is untouched');
  t.same((await readdir(path.join(root, 'moved'))).sort(), ['canary.txt', 'first.txt', 'second.txt'], 'the files are in the directory that was checked');
  // without the batch, the link is refused as always
  await expectFsError(t, writeFsFile(fs, '/up/third.txt', 'third'), FsErrorCode.Escape, 'a new upload through the link');
});

t.test('links as entries of a held directory are checked as without a batch', async (t) => {
  const { fs, root, outside } = await fresh();
  await writeFile(path.join(root, 'target.txt'), 'target');
  await symlink(path.join(outside, 'canary.txt'), path.join(root, 'up', 'out.txt'));
  await symlink('../target.txt', path.join(root, 'up', 'in.txt'));
  const batch = new RequestFsBatch();
  await writeFsFile(fs, '/up/plain.txt', 'plain', { batch });
  await expectFsError(t, fs.stat('/up/out.txt', { batch }), FsErrorCode.Escape, 'stat of a link leading outside');
  await expectFsError(t, writeFsFile(fs, '/up/out.txt', 'x', { batch }), FsErrorCode.Escape, 'a write through a link leading outside');
  await writeFsFile(fs, '/up/in.txt', 'through the link', { batch });
  t.equal(await readFile(path.join(root, 'target.txt'), 'utf8'), 'through the link', 'a link inside the root is followed, as without a batch');
  await expectFsError(t, fs.stat('/up/.ferry-tmp-x', { batch }), FsErrorCode.Permission, 'the reserved namespace');
  await batch.close();
  t.equal(await readFile(path.join(outside, 'canary.txt'), 'utf8'), 'canary', 'the outside file is untouched');
});

t.test('a parent that cannot be opened is not kept: the precise error, then the next file opens it', async (t) => {
  const { fs, root } = await fresh();
  const batch = new RequestFsBatch();
  await expectFsError(t, writeFsFile(fs, '/later/a.txt', 'a', { batch }), FsErrorCode.NotFound, 'the parent does not exist yet');
  await mkdir(path.join(root, 'later'));
  await writeFsFile(fs, '/later/a.txt', 'a', { batch });
  t.equal(await readFsFile(fs, '/later/a.txt').then(String), 'a', 'written once the parent exists');
  await batch.close();
});

t.test('in a batch, a write takes what the stat of its path just learnt (one lstat per file), and stays confined when the entry changed since', async (t) => {
  const { fs, root, outside } = await fresh();
  // count the lstat calls on each entry (single entries are read with lstatSync, src/entry-stat.ts;
  // its named import follows the builtin once synced)
  const calls = new Map<string, number>();
  const builtin = fsSync as { lstatSync: typeof fsSync.lstatSync };
  const original = builtin.lstatSync;
  builtin.lstatSync = ((p: PathLike, ...rest: unknown[]) => {
    const name = path.basename(String(p));
    calls.set(name, (calls.get(name) ?? 0) + 1);
    return (original as (...a: unknown[]) => unknown)(p, ...rest);
  }) as typeof fsSync.lstatSync;
  syncBuiltinESMExports();
  t.teardown(() => {
    builtin.lstatSync = original;
    syncBuiltinESMExports();
  });
  const batch = new RequestFsBatch();
  await writeFile(path.join(root, 'up', 'old.txt'), 'old');
  for (const name of ['new.txt', 'old.txt']) {
    await fs.stat(`/up/${name}`, { batch }).catch(() => undefined);
    await writeFsFile(fs, `/up/${name}`, `content of ${name}`, { batch });
    t.equal(calls.get(name), 1, `${name}: one lstat for the stat and the write`);
    t.equal(await readFile(path.join(root, 'up', name), 'utf8'), `content of ${name}`);
  }
  // the next write of a path does not reuse what was taken already
  await writeFsFile(fs, '/up/new.txt', 'again', { batch });
  t.equal(calls.get('new.txt'), 2, 'a write without a stat before it asks itself');

  // a directory created after the stat: the write is refused, the directory untouched
  await expectFsError(t, fs.stat('/up/dir', { batch }), FsErrorCode.NotFound, 'missing at the stat');
  await mkdir(path.join(root, 'up', 'dir'));
  await writeFile(path.join(root, 'up', 'dir', 'inner.txt'), 'inner');
  await expectFsError(t, writeFsFile(fs, '/up/dir', 'x', { batch }), FsErrorCode.IsDirectory, 'a directory where the file goes');
  t.same(await readdir(path.join(root, 'up', 'dir')), ['inner.txt'], 'the directory is untouched');

  // a link to the outside planted after the stat: the upload replaces the link (as when it is
  // planted during an upload), nothing outside is touched
  await fs.stat('/up/planted.txt', { batch }).catch(() => undefined);
  await symlink(path.join(outside, 'canary.txt'), path.join(root, 'up', 'planted.txt'));
  await writeFsFile(fs, '/up/planted.txt', 'upload', { batch });
  await batch.close();
  t.equal(await readFile(path.join(outside, 'canary.txt'), 'utf8'), 'canary', 'the outside file is untouched');
  t.same(await readdir(outside), ['canary.txt'], 'nothing was created outside');
  t.equal(await readFile(path.join(root, 'up', 'planted.txt'), 'utf8'), 'upload', 'the link was replaced by the file, inside the root');
});

t.test('the parent a batch holds is known to it as a directory (an upload does not look at it again)', async (t) => {
  const { fs } = await fresh();
  const batch = new RequestFsBatch();
  t.notOk(batch.isDirectory(fs, '/up'), 'nothing known before');
  await expectFsError(t, fs.stat('/up/none.txt', { batch }), FsErrorCode.NotFound, 'a missing file');
  t.ok(batch.isDirectory(fs, '/up'), 'known once the missing file was looked up through it');
  t.notOk(batch.isDirectory(new LocalFs({ root: fs.root, tempDir: fs.root }), '/up'), 'for the backend that opened it only');
  await expectFsError(t, fs.stat('/none/x.txt', { batch }), FsErrorCode.NotFound, 'in a missing directory');
  t.notOk(batch.isDirectory(fs, '/none'), 'a parent that could not be opened is not known');
  await batch.close();
  t.notOk(batch.isDirectory(fs, '/up'), 'a closed batch knows nothing');
});

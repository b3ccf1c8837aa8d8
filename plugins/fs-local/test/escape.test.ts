import { symlink } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { FsErrorCode } from '@ferry/core';
import { expectFsError, listAll, localEscapeConformance } from '@ferry/testkit';
import { LocalFs } from '../src/index.js';

await localEscapeConformance(t, {
  name: 'fs-local',
  create: async (root, dataDir) => new LocalFs({ root, tempDir: path.join(dataDir, 'uploads-tmp') }),
});

// The root as configured may itself go through a link (a home directory under a linked mount point):
// directories are then opened at another real path than the one asked for, still inside the root.
t.test('a root configured through a symbolic link confines as a link-free one', async (t) => {
  const base = t.testdir({ real: { root: { sub: { deep: { 'f.txt': 'inside' } } }, outside: { 'secret.txt': 'outside' } } });
  await symlink(path.join(base, 'real', 'root'), path.join(base, 'root-link'));
  await symlink(path.join(base, 'real', 'outside'), path.join(base, 'real', 'root', 'sub', 'out'));
  await symlink(path.join(base, 'real', 'root', 'sub', 'deep'), path.join(base, 'real', 'root', 'abs-in'));
  for (const root of [path.join(base, 'real', 'root'), path.join(base, 'root-link')]) {
    const fs = new LocalFs({ root, tempDir: path.join(base, 'tmp') });
    const names = async (p: string) => (await listAll(fs, p)).entries.map((e) => e.name).sort();
    t.same(await names('/sub/deep'), ['f.txt'], `${root}: a directory inside is listed`);
    t.same(await names('/abs-in'), ['f.txt'], `${root}: through an absolute link to the root's real path`);
    await expectFsError(t, listAll(fs, '/sub/out'), FsErrorCode.Escape, `${root}: not through a link leading outside`);
    await expectFsError(t, fs.stat('/sub/out/secret.txt'), FsErrorCode.Escape, `${root}: nor a file below it`);
  }
});

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { expectFsError, listAll, writeFile as writeFsFile } from '@ferry/testkit';
import { HIDDEN_TMP_PREFIX, LocalFs, claimHiddenTmp, isReservedName, sweepHiddenTmp } from '../src/index.js';

// A process killed (SIGKILL) while it copies an upload across devices, or
// while it runs a server-side copy, leaves a hidden `.ferry-tmp-<uuid>` file
// beside the destination. These tests leave such files behind as a crash
// would, then check they are invisible, not counted, not addressable, and
// swept once stale.

const base = t.testdir({});
let n = 0;
async function fresh(): Promise<{ root: string; tmp: string }> {
  const dir = path.join(base, `d${n++}`);
  const root = path.join(dir, 'root');
  await mkdir(root, { recursive: true });
  return { root, tmp: path.join(dir, 'data', 'uploads-tmp') };
}
const leftoverName = () => `${HIDDEN_TMP_PREFIX}${randomUUID()}`;
const names = async (fs: LocalFs, p: string) => (await listAll(fs, p)).entries.map((e) => e.name).sort();

t.test('isReservedName', async (t) => {
  t.ok(isReservedName(leftoverName()));
  t.ok(isReservedName('.ferry-tmp-'), 'the bare prefix');
  t.ok(isReservedName('.FERRY-Tmp-anything'), 'any case (case-insensitive filesystems)');
  t.notOk(isReservedName('.ferry-tmp'), 'without the dash');
  t.notOk(isReservedName('x.ferry-tmp-1'), 'only as a prefix');
  t.notOk(isReservedName('.ferry'));
});

t.test('a crash leftover is invisible and not counted, but kept while it may still be live', async (t) => {
  const { root, tmp } = await fresh();
  const fs = new LocalFs({ root, tempDir: tmp });
  await mkdir(path.join(root, 'd', 'sub'), { recursive: true });
  await writeFile(path.join(root, 'd', 'kept.txt'), '12345');
  const top = leftoverName();
  const deep = leftoverName();
  await writeFile(path.join(root, 'd', top), Buffer.alloc(10_000, 1));
  await writeFile(path.join(root, 'd', 'sub', deep), Buffer.alloc(20_000, 2));
  t.same(await names(fs, '/d'), ['kept.txt', 'sub'], 'list leaves the hidden file out');
  t.same(await names(fs, '/d/sub'), [], 'a directory holding only a leftover lists as empty');
  t.same(await fs.usedSpace('/'), { size: 5, files: 1 }, 'usedSpace does not count it');
  t.same(await fs.usedSpace('/d/sub'), { size: 0, files: 0 });
  const paged = await listAll(fs, '/d', { pageSize: 1 });
  t.same(paged.entries.map((e) => e.name).sort(), ['kept.txt', 'sub'], 'paging skips it too');
  t.ok(
    paged.pages.every((p) => p === 1),
    'and pages stay full',
  );
  t.ok(
    existsSync(path.join(root, 'd', top)) && existsSync(path.join(root, 'd', 'sub', deep)),
    'a fresh one is not removed (it may be another node’s live copy)',
  );
});

t.test('reserved names cannot be created or addressed', async (t) => {
  const { root, tmp } = await fresh();
  const fs = new LocalFs({ root, tempDir: tmp });
  const hidden = leftoverName();
  await mkdir(path.join(root, 'd'));
  await writeFile(path.join(root, 'd', hidden), 'secret partial');
  await writeFile(path.join(root, 'd', 'f.txt'), 'f');
  const p = `/d/${hidden}`;
  await expectFsError(t, fs.stat(p), 'PERMISSION', 'stat');
  await expectFsError(t, fs.openRead(p), 'PERMISSION', 'read');
  await expectFsError(t, fs.openWrite(p), 'PERMISSION', 'overwrite');
  await expectFsError(t, fs.remove(p), 'PERMISSION', 'remove');
  await expectFsError(t, fs.rename(p, '/d/stolen'), 'PERMISSION', 'rename from');
  await expectFsError(t, fs.copy(p, '/d/stolen'), 'PERMISSION', 'copy from');
  await expectFsError(t, fs.chtimes(p, new Date(0)), 'PERMISSION', 'chtimes');
  await expectFsError(t, fs.usedSpace(p), 'PERMISSION', 'usedSpace');
  const err = await expectFsError(t, fs.openWrite('/d/.ferry-tmp-mine'), 'PERMISSION', 'a new file with the prefix');
  t.match(err, { message: /reserved/ }, 'the message says why');
  await expectFsError(t, fs.openWrite('/d/.Ferry-TMP-mine'), 'PERMISSION', 'in another case');
  await expectFsError(t, fs.mkdir('/.ferry-tmp-dir'), 'PERMISSION', 'mkdir');
  await expectFsError(t, fs.mkdir('/.ferry-tmp-dir/a/b', { recursive: true }), 'PERMISSION', 'mkdir -p through one');
  await expectFsError(t, fs.openWrite('\\.ferry-tmp-x\\y'), 'PERMISSION', 'backslash-separated');
  await expectFsError(t, fs.rename('/d/f.txt', '/d/.ferry-tmp-f'), 'PERMISSION', 'rename onto one');
  await expectFsError(t, fs.copy('/d/f.txt', '/.ferry-tmp-c'), 'PERMISSION', 'copy onto one');
  await expectFsError(t, fs.list('/.ferry-tmp-dir')[Symbol.asyncIterator]().next(), 'PERMISSION', 'list');
  t.equal(await readFile(path.join(root, 'd', hidden), 'utf8'), 'secret partial', 'the hidden file is untouched');
  t.same((await readdir(root)).sort(), ['d'], 'nothing was created');
  t.same((await readdir(path.join(root, 'd'))).sort(), [hidden, 'f.txt'].sort());
  t.same(await readdir(tmp).catch(() => []), [], 'no upload left in the temp area');
  t.ok((await fs.stat('/d/.ferry-tmpfile').catch((e: unknown) => e)) instanceof Error, 'a merely similar name is an ordinary (missing) file');
  await writeFsFile(fs, '/d/.ferry-tmpfile', 'ok');
  t.equal((await fs.stat('/d/.ferry-tmpfile')).size, 2, 'and can be written');
});

t.test('stale leftovers are swept by listings, quota scans and rmdir', async (t) => {
  const { root, tmp } = await fresh();
  const fs = new LocalFs({ root, tempDir: tmp, hiddenTmpMaxAgeMs: 0 });
  await mkdir(path.join(root, 'a', 'b'), { recursive: true });
  await mkdir(path.join(root, 'empty'));
  const inA = leftoverName();
  const inB = leftoverName();
  const inEmpty = leftoverName();
  await writeFile(path.join(root, 'a', inA), 'x');
  await writeFile(path.join(root, 'a', 'b', inB), 'y');
  await writeFile(path.join(root, 'empty', inEmpty), 'z');
  // reserved but not of Ferry's own form: hidden, never removed
  await writeFile(path.join(root, 'a', '.ferry-tmp-not-ours'), 'keep');
  await mkdir(path.join(root, 'a', `${leftoverName()}`));

  t.same(await names(fs, '/a'), ['b']);
  t.notOk(existsSync(path.join(root, 'a', inA)), 'listing a directory removes its stale leftover');
  t.ok(existsSync(path.join(root, 'a', 'b', inB)), 'only in the directory listed');
  t.ok(existsSync(path.join(root, 'a', '.ferry-tmp-not-ours')), 'a name Ferry does not create is left alone');
  t.equal((await readdir(path.join(root, 'a'))).filter((x) => isReservedName(x)).length, 2, 'and so is a directory');

  t.same(await fs.usedSpace('/'), { size: 0, files: 0 }, 'nothing counted');
  t.notOk(existsSync(path.join(root, 'a', 'b', inB)), 'the quota scan swept the deeper one');

  await fs.remove('/empty');
  t.notOk(existsSync(path.join(root, 'empty')), 'an rmdir of a directory that only looks empty succeeds');

  const def = new LocalFs({ root, tempDir: tmp });
  await mkdir(path.join(root, 'e'));
  await writeFile(path.join(root, 'e', leftoverName()), 'fresh');
  await def.remove('/e');
  t.notOk(existsSync(path.join(root, 'e')), 'also with a fresh leftover: the directory goes anyway');
  await mkdir(path.join(root, 'full'));
  await writeFile(path.join(root, 'full', 'real.txt'), 'r');
  const kept = leftoverName();
  await writeFile(path.join(root, 'full', kept), 'l');
  await expectFsError(t, def.remove('/full'), 'NOT_EMPTY', 'a directory with a real entry is not empty');
  t.ok(existsSync(path.join(root, 'full', kept)), 'and its leftover is not touched by the failed rmdir');
});

t.test('a hidden file this process is writing is never swept', async (t) => {
  const { root, tmp } = await fresh();
  const fs = new LocalFs({ root, tempDir: tmp, hiddenTmpMaxAgeMs: 0 });
  const live = claimHiddenTmp(root);
  await writeFile(live.path, 'being copied');
  t.same(await names(fs, '/'), [], 'hidden');
  t.same(await fs.usedSpace('/'), { size: 0, files: 0 });
  t.equal(await sweepHiddenTmp(root, await readdir(root), 0), 0, 'a direct sweep skips it too');
  t.ok(existsSync(live.path), 'still there while claimed');
  await mkdir(path.join(root, 'd'));
  const liveInD = claimHiddenTmp(path.join(root, 'd'));
  await writeFile(liveInD.path, 'landing');
  await expectFsError(t, fs.remove('/d'), 'NOT_EMPTY', 'rmdir refuses while an upload is landing there');
  live.release();
  liveInD.release();
  t.same(await names(fs, '/'), ['d']);
  t.notOk(existsSync(live.path), 'swept once released');
  await fs.remove('/d');
  t.notOk(existsSync(path.join(root, 'd')));
});

t.test('copies and uploads still leave no hidden file', async (t) => {
  const { root, tmp } = await fresh();
  const fs = new LocalFs({ root, tempDir: tmp, hiddenTmpMaxAgeMs: 0 });
  await writeFsFile(fs, '/src.txt', 'content');
  await fs.copy('/src.txt', '/dst.txt');
  await expectFsError(t, fs.copy('/src.txt', '/missing-dir/dst.txt'), 'NOT_FOUND', 'a failed copy');
  t.same((await readdir(root)).sort(), ['dst.txt', 'src.txt'], 'nothing hidden beside the copies');
  t.equal(await readFile(path.join(root, 'dst.txt'), 'utf8'), 'content');
});

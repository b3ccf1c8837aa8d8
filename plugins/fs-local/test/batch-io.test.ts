// The batch I/O worker (src/batch-io.ts): small files read in groups
// (Fs.readSmallFiles, the files of a zip), large listings stat'ed and removed
// trees counted and unlinked in one go off the event loop, with the same answers and the
// same confinement as the calls made one by one.
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { FsErrorCode, RequestFsBatch, type FileInfo } from '@ferry/core';
import { LocalFs } from '../src/index.js';
import { BatchIo, batchIo, batchIo as sharedBatchIo, type WorkerRead } from '../src/batch-io.js';
import { WHOLE_DIR_MAX } from '../src/dir-tree.js';

const base = t.testdir({});
let n = 0;
async function fresh(): Promise<{ fs: LocalFs; root: string; outside: string }> {
  const dir = path.join(base, `d${n++}`);
  const root = path.join(dir, 'root');
  const outside = path.join(dir, 'outside');
  await mkdir(path.join(root, 'd'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'outside the root');
  return { fs: new LocalFs({ root, tempDir: path.join(dir, 'data', 'uploads-tmp') }), root, outside };
}

t.test('readSmallFiles answers each name: bytes, a refusal, or undefined for the usual path', async (t) => {
  const { fs, root, outside } = await fresh();
  const d = path.join(root, 'd');
  await writeFile(path.join(d, 'a.txt'), 'alpha');
  await writeFile(path.join(d, 'empty'), '');
  await writeFile(path.join(d, 'big.bin'), Buffer.alloc(300, 7));
  await mkdir(path.join(d, 'sub'));
  await symlink(path.join(outside, 'secret.txt'), path.join(d, 'out-link'));
  await symlink('a.txt', path.join(d, 'in-link'));
  execFileSync('mkfifo', [path.join(d, 'fifo')]);
  await writeFile(path.join(d, '.ferry-tmp-x'), 'reserved');
  const names = ['a.txt', 'empty', 'big.bin', 'sub', 'out-link', 'in-link', 'fifo', 'missing', '.ferry-tmp-x', '..'];
  const got = await fs.readSmallFiles!('/d', names, 256);
  t.equal(got.length, names.length, 'one answer per name');
  const [a, empty, big, sub, outLink, inLink, fifo, missing, reserved, dotdot] = got;
  t.ok(a && 'data' in a, 'a small file is read');
  if (a && 'data' in a) {
    t.equal(a.data.toString(), 'alpha');
    const st = await stat(path.join(d, 'a.txt'));
    t.match(a.info, { name: 'a.txt', path: '/d/a.txt', isDir: false, size: 5, mode: st.mode } satisfies Partial<FileInfo>);
    t.equal(a.info.mtime.getTime(), st.mtime.getTime(), 'its mtime is the one stat() reports');
  }
  t.ok(empty && 'data' in empty && empty.data.length === 0, 'an empty file is read, empty');
  t.equal(big, undefined, 'a file larger than asked for: the usual path');
  t.match(sub, { error: { code: FsErrorCode.IsDirectory } }, 'a directory is refused');
  t.equal(outLink, undefined, 'a link is never followed by the worker (the usual path checks where it leads)');
  t.equal(inLink, undefined, 'not even one that stays inside');
  t.match(fifo, { error: { code: FsErrorCode.Invalid } }, 'a FIFO is not a regular file (and does not hang the read)');
  t.match(missing, { error: { code: FsErrorCode.NotFound } }, 'a missing file is NOT_FOUND');
  t.equal(reserved, undefined, 'a reserved name is left to the usual path (which refuses it)');
  t.equal(dotdot, undefined, "'..' is not an entry name");
});

t.test('the native reads (@ferry/dir-calls) answer as the JavaScript ones, name by name', async (t) => {
  const { root, outside } = await fresh();
  const d = path.join(root, 'd');
  await writeFile(path.join(d, 'a.txt'), 'alpha');
  await writeFile(path.join(d, 'empty'), '');
  await writeFile(path.join(d, 'at-max'), Buffer.alloc(256, 1));
  await writeFile(path.join(d, 'over-max'), Buffer.alloc(257, 2));
  await writeFile(path.join(d, 'é ü'), 'unicode name');
  await mkdir(path.join(d, 'sub'));
  await symlink(path.join(outside, 'secret.txt'), path.join(d, 'out-link'));
  execFileSync('mkfifo', [path.join(d, 'fifo')]);
  const names = ['a.txt', 'empty', 'at-max', 'over-max', 'é ü', 'sub', 'out-link', 'fifo', 'missing', 'a.txt'];
  const js = new BatchIo(undefined, false);
  const shape = (r: { reads: WorkerRead[]; data: Buffer }) =>
    r.reads.map((x) =>
      x.k === 'read' ? { ...x, bytes: r.data.subarray(x.at, x.at + x.size).toString('hex') } : x.k === 'error' ? { k: x.k, code: x.code } : x,
    );
  const native = await batchIo.read(d, names, 256);
  const plain = await js.read(d, names, 256);
  t.same(shape(native), shape(plain));
  t.same(
    native.reads.map((r) => (r.k === 'error' ? r.code : r.k)),
    ['read', 'read', 'read', 'large', 'read', 'EISDIR', 'ELOOP', 'NOTREG', 'ENOENT', 'read'],
  );
  const [first] = native.reads;
  const st = await stat(path.join(d, 'a.txt'));
  t.match(first, { k: 'read', size: 5, mode: st.mode, mtimeMs: st.mtimeMs }, 'the mtime and mode stat() reports');
  // through a directory opened by path and checked where it is (readAt)
  const at = await batchIo.readAt(d, ['a.txt', 'over-max'], 256);
  const atJs = await js.readAt(d, ['a.txt', 'over-max'], 256);
  t.ok(at && atJs);
  if (at && atJs) t.same(shape(at), shape(atJs));
  t.equal(await batchIo.readAt(path.join(d, 'nowhere'), ['a.txt'], 256), undefined, 'a directory that is not there: the usual path');
  const failed = await batchIo.read(path.join(d, 'nowhere'), ['a.txt', 'b'], 256);
  t.same(
    failed.reads.map((r) => r.k === 'error' && r.code),
    ['ENOENT', 'ENOENT'],
    'every name fails when the directory cannot be opened',
  );
});

t.test('readSmallFiles in a batch reads through the directory the batch holds', async (t) => {
  const { fs, root } = await fresh();
  for (let i = 0; i < 10; i++) await writeFile(path.join(root, 'd', `f${i}`), `file ${i}`);
  const batch = new RequestFsBatch();
  const first = await fs.readSmallFiles!(
    '/d',
    Array.from({ length: 5 }, (_, i) => `f${i}`),
    1024,
    { batch },
  );
  // the directory is swapped for another once the batch holds it: the held descriptor still names the first
  await mkdir(path.join(root, 'other'));
  await writeFile(path.join(root, 'other', 'f7'), 'another file');
  execFileSync('mv', [path.join(root, 'd'), path.join(root, 'moved')]);
  execFileSync('mv', [path.join(root, 'other'), path.join(root, 'd')]);
  const second = await fs.readSmallFiles!('/d', ['f7'], 1024, { batch });
  t.same(
    first.map((r) => r && 'data' in r && r.data.toString()),
    ['file 0', 'file 1', 'file 2', 'file 3', 'file 4'],
  );
  t.ok(second[0] && 'data' in second[0] && second[0].data.toString() === 'file 7', 'read through the held descriptor');
  await batch.close();
  const after = await fs.readSmallFiles!('/d', ['f7'], 1024);
  t.ok(after[0] && 'data' in after[0] && after[0].data.toString() === 'another file', 'without the batch, the path as it is now');
});

t.test('readSmallFiles of a directory outside the root is refused', async (t) => {
  const { fs, root, outside } = await fresh();
  await symlink(outside, path.join(root, 'escape'));
  await t.rejects(fs.readSmallFiles!('/escape', ['secret.txt'], 1024), { code: FsErrorCode.Escape });
});

t.test('a large listing (stat by the worker) answers as the small one does', async (t) => {
  const { fs, root } = await fresh();
  const d = path.join(root, 'd');
  for (let i = 0; i < 100; i++) await writeFile(path.join(d, `f${String(i).padStart(3, '0')}`), 'x'.repeat(i));
  await mkdir(path.join(d, 'sub'));
  await symlink('f001', path.join(d, 'link-in'));
  await symlink('/etc/passwd', path.join(d, 'link-out'));
  const listed: FileInfo[] = [];
  for await (const page of fs.list('/d')) listed.push(...page);
  const byName = new Map(listed.map((e) => [e.name, e]));
  t.equal(listed.length, 102, '100 files, the directory and the link inside; the link leading outside is left out');
  t.notOk(byName.has('link-out'));
  const st = await stat(path.join(d, 'f042'));
  t.match(byName.get('f042'), { path: '/d/f042', isDir: false, size: 42, mode: st.mode });
  t.equal(byName.get('f042')!.mtime.getTime(), st.mtime.getTime());
  t.match(byName.get('sub'), { isDir: true, size: 0 });
  t.match(byName.get('link-in'), { isDir: false, size: 1 }, 'a link inside is reported as its target');
  // the same entries one page of 10 at a time
  const small: FileInfo[] = [];
  for await (const page of fs.list('/d', { pageSize: 10 })) small.push(...page);
  t.same(
    new Set(small.map((e) => `${e.name} ${e.size} ${e.mode} ${e.mtime.getTime()}`)),
    new Set(listed.map((e) => `${e.name} ${e.size} ${e.mode} ${e.mtime.getTime()}`)),
  );
});

/** The entries of a listing of `vpath` as comparable lines, with the number of pages. */
async function listingOf(fs: LocalFs, vpath: string, pageSize?: number): Promise<{ lines: string[]; pages: number[] }> {
  const lines: string[] = [];
  const pages: number[] = [];
  for await (const page of fs.list(vpath, { pageSize })) {
    pages.push(page.length);
    for (const e of page) lines.push(`${e.path} ${e.isDir} ${e.size} ${e.mode} ${e.mtime.getTime()}`);
  }
  return { lines: lines.sort(), pages };
}

t.test('a small directory is listed by one worker request, with the answer of the listing read in pages', async (t) => {
  const { fs, root, outside } = await fresh();
  const d = path.join(root, 'd');
  for (let i = 0; i < 10; i++) await writeFile(path.join(d, `f${i}`), 'x'.repeat(i * 3));
  await mkdir(path.join(d, 'sub'));
  await symlink('f2', path.join(d, 'link-in'));
  await symlink(path.join(outside, 'secret.txt'), path.join(d, 'link-out'));
  await symlink('missing', path.join(d, 'dangling'));
  await writeFile(path.join(d, `.ferry-tmp-${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`), 'a leftover');
  const calls = { list: 0, lstat: 0 };
  const { list, lstat } = batchIo;
  batchIo.list = (...a) => (calls.list++, list.apply(batchIo, a));
  batchIo.lstat = (...a) => (calls.lstat++, lstat.apply(batchIo, a));
  t.teardown(() => Object.assign(batchIo, { list, lstat }));

  const whole = await listingOf(fs, '/d');
  t.same(calls, { list: 1, lstat: 0 }, 'one request to the worker, no stat of its own');
  t.equal(whole.lines.length, 12, 'ten files, the directory and the link inside');
  t.ok(
    whole.lines.some((l) => l.startsWith('/d/link-in false 6 ')),
    'a link inside is reported as its target',
  );
  t.notOk(
    whole.lines.some((l) => /link-out|dangling|ferry-tmp/.test(l)),
    'a link leading outside, a dangling link and a reserved name are left out',
  );
  const st = await stat(path.join(d, 'f4'));
  t.ok(whole.lines.includes(`/d/f4 false 12 ${st.mode} ${st.mtime.getTime()}`), 'size, mode and mtime as stat() reports them');
  const inFives = await listingOf(fs, '/d', 5);
  t.same(inFives.lines, whole.lines, 'in pages of 5: the same entries');
  t.equal(inFives.pages.length, 3, 'in pages of the 14 visible names (links left out leave a page short)');
  t.ok(
    inFives.pages.every((n) => n > 0 && n <= 5),
    'none larger than asked for, none empty',
  );

  // the worker failing (or the directory too large for one request): the listing read in pages answers the same
  batchIo.list = async () => undefined;
  const paged = await listingOf(fs, '/d');
  t.same(paged.lines, whole.lines, 'the same entries as the listing read in pages');
  batchIo.list = async () => Promise.reject(new Error('the worker stopped'));
  t.same((await listingOf(fs, '/d')).lines, whole.lines, 'a failed request: read in pages');
  Object.assign(batchIo, { list, lstat });

  await t.rejects(listingOf(fs, '/d/f1'), { code: FsErrorCode.NotDirectory }, 'a file is not listed');
  await t.rejects(listingOf(fs, '/d/nothing'), { code: FsErrorCode.NotFound }, 'nor a missing directory');
  await symlink(outside, path.join(root, 'escape'));
  await t.rejects(listingOf(fs, '/escape'), { code: FsErrorCode.Escape }, 'nor a directory outside the root');
});

t.test('a directory larger than one worker request is read in pages with the same entries', async (t) => {
  const { fs, root } = await fresh();
  const d = path.join(root, 'd');
  for (let i = 0; i <= WHOLE_DIR_MAX; i++) await writeFile(path.join(d, `f${i}`), 'x'.repeat(i % 5));
  const answers: unknown[] = [];
  const { list } = batchIo;
  batchIo.list = async (...a) => {
    const r = await list.apply(batchIo, a);
    answers.push(r);
    return r;
  };
  t.teardown(() => Object.assign(batchIo, { list }));
  const big = await listingOf(fs, '/d', 100);
  t.same(answers, [undefined], 'the worker declined the whole directory');
  t.equal(big.lines.length, WHOLE_DIR_MAX + 1, 'every entry listed');
  t.equal(big.pages.length, Math.ceil((WHOLE_DIR_MAX + 1) / 100), 'in pages of the size asked for');
  const st = await stat(path.join(d, 'f7'));
  t.ok(big.lines.includes(`/d/f7 false 2 ${st.mode} ${st.mtime.getTime()}`));
});

t.test('the worker reports a directory it cannot read', async (t) => {
  const { root } = await fresh();
  await writeFile(path.join(root, 'file'), 'x');
  await t.rejects(batchIo.list(path.join(root, 'file'), 10), { code: 'ENOTDIR' });
  await t.rejects(batchIo.list(path.join(root, 'missing'), 10), { code: 'ENOENT' });
  t.same(await batchIo.list(path.join(root, 'd'), 10), { names: [], stats: [] }, 'an empty directory');
});

t.test('a removed directory is swept in one message when small; past one group, the rest in parts at once', async (t) => {
  const { fs, root } = await fresh();
  const parts: string[] = [];
  const sweep = batchIo.sweep.bind(batchIo);
  batchIo.sweep = (...a) => (parts.push(a[4] ? a[4].join('/') : 'whole'), sweep(...a));
  t.teardown(() => {
    batchIo.sweep = sweep;
  });
  await mkdir(path.join(root, 'small', 'sub'), { recursive: true });
  await mkdir(path.join(root, 'big'));
  for (let i = 0; i < 10; i++) await writeFile(path.join(root, 'small', `f${i}`), 'x');
  await writeFile(path.join(root, 'small', 'sub', 'g'), 'y');
  const removed = { size: 0, files: 0 };
  await fs.removeCounted('/small', removed, { recursive: true });
  t.same(removed, { size: 11, files: 11 });
  t.same(parts, ['whole', 'whole'], 'one message for the directory, one for its subdirectory');
  parts.length = 0;
  for (let i = 0; i < 1500; i++) await writeFile(path.join(root, 'big', `f${i}`), '');
  await fs.remove('/big', { recursive: true });
  t.equal(parts[0], 'whole', 'the first group from the whole directory');
  const n = batchIo.parallelism;
  t.same(
    [...new Set(parts.slice(1))].sort(),
    Array.from({ length: n }, (_, k) => `${k}/${n}`),
    'then every part',
  );
  t.same(await readdir(root), ['d'], 'both gone');
});

t.test('removing a large tree (swept by the worker) removes it all, and only it, and counts what it removed', async (t) => {
  const { fs, root, outside } = await fresh();
  const d = path.join(root, 'd');
  // more files than one group of the worker, of sizes 0 to 6 bytes
  let size = 0;
  for (let i = 0; i < 2500; i++) {
    await writeFile(path.join(d, `f${i}`), 'x'.repeat(i % 7));
    size += i % 7;
  }
  await mkdir(path.join(d, 'sub'));
  for (let i = 0; i < 40; i++) await writeFile(path.join(d, 'sub', `g${i}`), 'abc');
  await symlink(outside, path.join(d, 'link-to-outside'));
  await symlink('f1', path.join(d, 'link-in'));
  // a reserved directory (an upload's leftover) and a reserved file: removed, not counted
  await mkdir(path.join(d, '.ferry-tmp-dir'));
  await writeFile(path.join(d, '.ferry-tmp-dir', 'part'), 'not counted');
  await writeFile(path.join(d, '.ferry-tmp-leftover'), 'not counted either');
  const expected = { size: size + 40 * 3, files: 2540 };
  t.same(await fs.usedSpace('/d'), expected, 'what usedSpace counts');
  const removed = { size: 0, files: 0 };
  await fs.removeCounted('/d', removed, { recursive: true });
  t.same(removed, expected, 'removeCounted counts what it removed as usedSpace did');
  await t.rejects(stat(d), { code: 'ENOENT' }, 'the directory is gone');
  t.same(await readdir(outside), ['secret.txt'], 'what the link led to is untouched');
  await mkdir(d);
  for (let i = 0; i < 50; i++) await writeFile(path.join(d, `f${i}`), 'ab');
  await fs.remove('/d', { recursive: true });
  await t.rejects(stat(d), { code: 'ENOENT' }, 'remove() with recursive removes it as well');
  await writeFile(path.join(root, 'file'), 'abcd');
  const one = { size: 0, files: 0 };
  await fs.removeCounted('/file', one);
  t.same(one, { size: 4, files: 1 }, 'a file is removed and counted, without recursive as well');
  await mkdir(path.join(root, 'full'));
  await writeFile(path.join(root, 'full', 'x'), 'x');
  await t.rejects(fs.removeCounted('/full', one), { code: FsErrorCode.NotEmpty }, 'without recursive a directory with files in it stays');
  t.same(one, { size: 4, files: 1 }, 'and nothing more is counted');
  await t.rejects(fs.removeCounted('/missing', one), { code: FsErrorCode.NotFound });
  await t.rejects(fs.removeCounted('/', one), { code: FsErrorCode.Permission }, 'never the root');
});

t.test('a removal that fails midway has counted what it removed', async (t) => {
  const { fs, root } = await fresh();
  const d = path.join(root, 'd');
  for (let i = 0; i < 100; i++) await writeFile(path.join(d, `f${i}`), 'abc');
  const ac = new AbortController();
  const removed = { size: 0, files: 0 };
  // aborted after the first groups of the workers: the files of those groups are gone and counted
  const sweep = batchIo.sweep.bind(batchIo);
  batchIo.sweep = async (...a) => {
    const r = await sweep(a[0], a[1], 30, a[3], a[4]);
    ac.abort();
    return r;
  };
  t.teardown(() => {
    batchIo.sweep = sweep;
  });
  await t.rejects(fs.removeCounted('/d', removed, { recursive: true, signal: ac.signal }));
  // the first group of 30, taken from the whole directory
  const gone = 30;
  t.same(removed, { size: 3 * gone, files: gone });
  t.equal((await readdir(d)).length, 100 - gone, 'the rest is still there');
});

t.test('the space used under a large directory (stat by the worker, in groups) counts its files, and only them', async (t) => {
  const { fs, root, outside } = await fresh();
  const d = path.join(root, 'd');
  // more files than one group of the worker, of sizes 0 to 6 bytes
  let size = 0;
  for (let i = 0; i < 2100; i++) {
    await writeFile(path.join(d, `f${i}`), 'x'.repeat(i % 7));
    size += i % 7;
  }
  await mkdir(path.join(d, 'sub'));
  for (let i = 0; i < 40; i++) await writeFile(path.join(d, 'sub', `g${i}`), 'abc');
  await symlink('f6', path.join(d, 'link-in'));
  await symlink(path.join(outside, 'secret.txt'), path.join(d, 'link-out'));
  t.same(await fs.usedSpace('/d'), { size: size + 40 * 3, files: 2140 }, 'every regular file counted once, links neither followed nor counted');
  t.same(await fs.usedSpace('/d/sub'), { size: 120, files: 40 }, 'a small directory (stat one by one) counts the same way');
});

t.test('the worker answers each name of an lstat in its place, failures included', async (t) => {
  const { root } = await fresh();
  const d = path.join(root, 'd');
  await writeFile(path.join(d, 'a'), 'aaaa');
  await writeFile(path.join(d, 'b'), 'bb');
  await mkdir(path.join(d, 'sub'));
  const st = await stat(path.join(d, 'b'));
  const stats = await batchIo.lstat(d, ['a', 'missing', 'b', 'sub']);
  t.match(stats, [{ k: 'stat', size: 4 }, { k: 'error', code: 'ENOENT' }, { k: 'stat', size: 2, mode: st.mode, mtimeMs: st.mtimeMs }, { k: 'stat' }]);
  t.equal(stats[3]!.k === 'stat' && stats[3]!.mode & 0o170000, 0o040000, 'a directory is reported as one');
});

for (const [label, io] of [
  ['native (@ferry/dir-calls)', batchIo],
  ['JavaScript', new BatchIo(undefined, false)],
] as const) {
  t.test(`${label}: a sweep removes a group of files, answers the directories and skips what it is told to`, async (t) => {
    const { root } = await fresh();
    const d = path.join(root, 'd');
    await writeFile(path.join(d, 'a'), 'aaaa');
    await writeFile(path.join(d, 'b'), 'bb');
    await writeFile(path.join(d, 'keep'), 'k');
    await mkdir(path.join(d, 'sub'));
    await symlink('a', path.join(d, 'link'));
    const first = await io.sweep(d, ['keep'], 2, true);
    t.equal(first.more, true, 'a group of 2 leaves more');
    const second = await io.sweep(d, ['keep', ...first.dirs], 10, true);
    t.equal(second.more, false);
    const files = [...first.files, ...second.files].sort((x, y) => x.name.localeCompare(y.name));
    t.same(
      files,
      [
        { name: 'a', size: 4 },
        { name: 'b', size: 2 },
      ],
      'the regular files removed, with their sizes (the link removed, not counted)',
    );
    t.same([...first.dirs, ...second.dirs], ['sub'], 'the directory answered once');
    t.same([...first.failed, ...second.failed], []);
    t.same((await readdir(d)).sort(), ['keep', 'sub'], 'the directory and the skipped file stay');
    await writeFile(path.join(d, 'c'), 'ccc');
    t.same(await io.sweep(d, ['keep'], 10, false), { files: [], dirs: ['sub'], failed: [], more: false }, 'uncounted: removed, no sizes');
    t.same((await readdir(d)).sort(), ['keep', 'sub']);
    await t.rejects(io.sweep(path.join(d, 'missing'), [], 10, true), { code: 'ENOENT' });
    await t.rejects(io.sweep(path.join(d, 'keep'), [], 10, true), { code: 'ENOTDIR' });
  });

  t.test(`${label}: the parts of a directory swept at once take every entry once (names in UTF-8 too)`, async (t) => {
    const { root } = await fresh();
    const d = path.join(root, 'parts');
    await mkdir(d);
    const names = Array.from({ length: 400 }, (_, i) => (i % 5 === 0 ? `é-${i}-日本` : `f-${i}`));
    for (const n of names) await writeFile(path.join(d, n), n);
    const [p0, p1] = await Promise.all([io.sweep(d, [], 1000, true, [0, 2]), io.sweep(d, [], 1000, true, [1, 2])]);
    t.ok(p0.files.length > 100 && p1.files.length > 100, `both parts took a share (${p0.files.length}, ${p1.files.length})`);
    t.same([...p0.files, ...p1.files].map((f) => f.name).sort(), [...names].sort());
    t.same(
      [...p0.files, ...p1.files].map((f) => f.size).reduce((a, b) => a + b, 0),
      names.reduce((a, n) => a + Buffer.byteLength(n), 0),
    );
    t.same(await readdir(d), []);
  });
}

t.test('a part swept natively and the other in JavaScript still take every entry once (the same hash)', async (t) => {
  const { root } = await fresh();
  const d = path.join(root, 'mixed');
  await mkdir(d);
  const names = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? `ñ-${i}-€` : `g-${i}`));
  for (const n of names) await writeFile(path.join(d, n), 'x');
  const p0 = await batchIo.sweep(d, [], 1000, true, [0, 2]);
  const p1 = await new BatchIo(undefined, false).sweep(d, [], 1000, true, [1, 2]);
  t.same([...p0.files, ...p1.files].map((f) => f.name).sort(), [...names].sort());
  t.same(await readdir(d), []);
});

t.test('the second worker, started by a fifth request waiting at once, stops after its shorter idle time; the first stays', async (t) => {
  const { root } = await fresh();
  await writeFile(path.join(root, 'a.txt'), 'a');
  const io = new BatchIo([60_000, 100], false);
  const lstats = (n: number) => Promise.all(Array.from({ length: n }, () => io.lstat(root, ['a.txt'])));
  t.equal(io.running, 0, 'no worker before the first request');
  await io.lstat(root, ['a.txt']);
  t.equal(io.running, 1, 'a lone request starts one worker');
  const four = await lstats(4);
  t.equal(io.running, 1, 'four requests at once wait on the first (a zip reading ahead costs one worker)');
  t.same(
    four.map(([st]) => st?.k),
    ['stat', 'stat', 'stat', 'stat'],
    'and each is answered',
  );
  await lstats(5);
  t.equal(io.running, 2, 'a fifth at once starts the second');
  for (let i = 0; i < 100 && io.running > 1; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(io.running, 1, 'the second stopped once idle; the first runs on');
  const [st] = await io.lstat(root, ['a.txt']);
  t.match(st, { k: 'stat', size: 1 }, 'and answers the next request');
});

t.test('the second worker takes only what overflows the first: it stops once idle while requests go on at a pace the first keeps up with', async (t) => {
  const { root } = await fresh();
  await writeFile(path.join(root, 'a.txt'), 'a');
  const io = new BatchIo([60_000, 100], false);
  const lstats = (n: number) => Promise.all(Array.from({ length: n }, () => io.lstat(root, ['a.txt'])));
  await lstats(5);
  t.equal(io.running, 2, 'five at once run both');
  // two in flight at a time for 1.5 s: the first takes both, the second gets none and stops after its 100 ms
  const until = Date.now() + 1500;
  let answered = 0;
  while (Date.now() < until) {
    for (const [st] of await lstats(2)) if (st?.k === 'stat') answered++;
    if (io.running === 1) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  t.equal(io.running, 1, 'the second stopped while requests went on');
  t.ok(answered > 0, 'and every request meanwhile was answered');
  const more = await lstats(4);
  t.equal(io.running, 1, 'four at once stay on the first');
  t.same(
    more.map(([st]) => st?.k),
    ['stat', 'stat', 'stat', 'stat'],
  );
});

t.test('the parts of a sweep run on both workers at once', async (t) => {
  const { root } = await fresh();
  const d = path.join(root, 'parts');
  await mkdir(d);
  for (let i = 0; i < 50; i++) await writeFile(path.join(d, `f${i}`), 'x');
  const io = new BatchIo([60_000, 60_000], false);
  const [p0, p1] = await Promise.all([io.sweep(d, [], 1000, true, [0, 2]), io.sweep(d, [], 1000, true, [1, 2])]);
  t.equal(io.running, 2, 'the second part started the second worker');
  t.equal(p0.files.length + p1.files.length, 50, 'every file removed once');
  t.same(await readdir(d), []);
});

for (const native of [false, true]) {
  t.test(
    `a process waits for the answer of ${native ? "the addon's job" : 'a worker'}, and not for an idle ${native ? 'thread pool' : 'worker'}`,
    async (t) => {
      const { root } = await fresh();
      await writeFile(path.join(root, 'a.txt'), 'abc');
      const mod = new URL('../src/batch-io.ts', import.meta.url).href;
      // idle times of ten minutes: a worker that kept the process alive once idle would time this out
      const script = `
      const { BatchIo } = await import(${JSON.stringify(mod)});
      const io = new BatchIo([600000, 600000], ${native});
      const [st] = await io.lstat(${JSON.stringify(root)}, ['a.txt']);
      console.log(JSON.stringify({ ...st, native: io.native }));
    `;
      const out = execFileSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
      t.match(JSON.parse(out), { k: 'stat', size: 3, native }, 'the answer came, then the process ended');
    },
  );
}

t.test("with the addon built, requests are the addon's jobs on the thread pool: no worker thread starts", async (t) => {
  const { root } = await fresh();
  await writeFile(path.join(root, 'a.txt'), 'abc');
  const io = new BatchIo([60_000, 60_000]);
  t.equal(io.native, true, 'the addon is built here (npm ci)');
  const answers = await Promise.all(Array.from({ length: 12 }, () => io.lstat(root, ['a.txt'])));
  t.equal(answers.filter(([st]) => st?.k === 'stat').length, 12, 'twelve at once, each answered');
  t.equal(io.running, 0, 'and no worker ran');
  t.equal(new BatchIo(undefined, false).native, false, 'native = false: the workers');
});

t.test("the addon's jobs answer every operation as the worker's JavaScript does", async (t) => {
  const js = new BatchIo([60_000, 60_000], false);
  /** The same tree twice (the operations that change it run once on each). */
  const tree = async (base: string) => {
    const d = path.join(base, 'd');
    await mkdir(path.join(d, 'sub'), { recursive: true });
    await writeFile(path.join(d, 'a.txt'), 'alpha');
    await writeFile(path.join(d, 'b.bin'), Buffer.alloc(300, 3));
    await writeFile(path.join(d, 'é ü'), 'unicode');
    await symlink('a.txt', path.join(d, 'link'));
    await writeFile(path.join(d, 'sub', 'inner'), 'in');
    return d;
  };
  const { root } = await fresh();
  const dn = await tree(path.join(root, 'native'));
  const dj = await tree(path.join(root, 'js'));
  const sorted = <T>(r: { names: string[]; stats: T[] } | undefined) =>
    r && r.names.map((n, i) => [n, r.stats[i]] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // times differ between the two trees, and messages name their paths (and the C library's wording): both left out
  const noTimes = (x: unknown) => JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'mtimeMs' ? 0 : k === 'message' ? undefined : v))) as unknown;

  t.same(noTimes(sorted(await batchIo.list(dn, 100))), noTimes(sorted(await js.list(dj, 100))), 'list');
  t.equal(await batchIo.list(dn, 2), undefined, 'list: more entries than asked for');
  t.equal(await js.list(dj, 2), undefined);
  await t.rejects(batchIo.list(path.join(dn, 'a.txt'), 10), { code: 'ENOTDIR' }, 'list: not a directory');
  await t.rejects(js.list(path.join(dj, 'a.txt'), 10), { code: 'ENOTDIR' });
  const at = await batchIo.listAt(dn, 100);
  t.equal(at?.real, dn, 'listAt: where the directory really is');
  t.same(noTimes(sorted(at)), noTimes(sorted(await js.listAt(dj, 100))), 'listAt');
  await symlink(dn, path.join(root, 'via-link'));
  t.equal((await batchIo.listAt(path.join(root, 'via-link'), 100))?.real, dn, 'listAt through a link: its real location');
  await t.rejects(batchIo.listAt(path.join(root, 'missing'), 10), { code: 'ENOENT' });

  const names = ['a.txt', 'missing', 'sub', 'link', 'é ü'];
  t.same(noTimes(await batchIo.lstat(dn, names)), noTimes(await js.lstat(dj, names)), 'lstat');
  t.same(
    (await batchIo.lstat(path.join(dn, 'nowhere'), ['x', 'y'])).map((s) => s.k === 'error' && s.code),
    ['ENOENT', 'ENOENT'],
    'lstat in a missing directory: each name fails',
  );
  t.equal(await batchIo.readAt(path.join(root, 'via-link'), ['a.txt'], 100), undefined, 'readAt through a link: the usual path');

  for (const [io, d] of [
    [batchIo, dn],
    [js, dj],
  ] as const) {
    const label = io === batchIo ? 'addon' : 'worker';
    await io.put(path.join(d, 'new.tmp'), [Buffer.from('put '), Buffer.from('bytes')]);
    t.equal(await readFile(path.join(d, 'new.tmp'), 'utf8'), 'put bytes', `${label}: put`);
    await t.rejects(io.put(path.join(d, 'new.tmp'), [Buffer.from('x')]), { code: 'EEXIST' }, `${label}: put never overwrites`);
    await t.rejects(io.put(path.join(d, 'nowhere', 'f.tmp'), [Buffer.from('x')]), { code: 'ENOENT' }, `${label}: put in a missing directory`);
    t.equal(await io.replace(path.join(d, 'new.tmp'), path.join(d, 'a.txt')), 5, `${label}: replace answers the size replaced`);
    t.equal(await readFile(path.join(d, 'a.txt'), 'utf8'), 'put bytes');
    await writeFile(path.join(d, 'other.tmp'), 'o');
    t.equal(await io.replace(path.join(d, 'other.tmp'), path.join(d, 'fresh')), undefined, `${label}: replace of nothing`);
    await t.rejects(io.replace(path.join(d, 'gone.tmp'), path.join(d, 'x')), { code: 'ENOENT' }, `${label}: replace of a missing file`);
    const swept = await io.sweep(path.join(d, 'sub'), [], 100, true);
    t.same(swept.files, [{ name: 'inner', size: 2 }], `${label}: sweep`);
    await t.rejects(io.sweep(path.join(d, 'missing'), [], 10, true), { code: 'ENOENT' }, `${label}: sweep of a missing directory`);
  }
});

t.test('a request sent while an idle worker is stopping goes to a new worker, and the old one ending does not fail it', async (t) => {
  const { root } = await fresh();
  await writeFile(path.join(root, 'a.txt'), 'a');
  // the first worker stops as soon as it is idle
  const io = new BatchIo([0, 0], false);
  for (let round = 0; round < 5; round++) {
    await io.lstat(root, ['a.txt']);
    // the idle timer stops the worker: ask again at once, before its thread has ended
    for (let i = 0; i < 1000 && io.running > 0; i++) await new Promise((r) => setImmediate(r));
    t.equal(io.running, 0, `round ${round}: the idle worker was stopped`);
    const [st] = await io.lstat(root, ['a.txt']);
    t.match(st, { k: 'stat', size: 1 }, `round ${round}: answered by the next worker`);
  }
});

for (const [label, batchIo] of [
  ["the addon's job", sharedBatchIo],
  ['the worker', new BatchIo(undefined, false)],
] as const) {
  t.test(`putReplace creates, writes and renames in one message (${label}), and tells which step failed`, async (t) => {
    const { root } = await fresh();
    await writeFile(path.join(root, 'old.txt'), '12345');
    const tmp = path.join(root, 'tmp.upload');
    t.equal(await batchIo.putReplace(tmp, [Buffer.from('ab'), Buffer.from('c')], path.join(root, 'old.txt')), 5, 'the size it replaced');
    t.equal(await readFile(path.join(root, 'old.txt'), 'utf8'), 'abc');
    t.equal(await batchIo.putReplace(tmp, [Buffer.from('n')], path.join(root, 'new.txt')), undefined, 'nothing replaced');
    await writeFile(tmp, 'in the way');
    t.match(
      await batchIo.putReplace(tmp, [Buffer.from('x')], path.join(root, 'x.txt')).catch((e: unknown) => e),
      { code: 'EEXIST', step: 'put' },
      'an existing temporary file: the put failed',
    );
    t.equal(await readFile(tmp, 'utf8'), 'in the way', 'and it is left alone');
    await mkdir(path.join(root, 'full', 'x'), { recursive: true });
    const other = path.join(root, 'other.upload');
    t.match(
      await batchIo.putReplace(other, [Buffer.from('y')], path.join(root, 'full')).catch((e: unknown) => e),
      { step: 'replace' },
      'a non-empty directory in the way: the rename failed',
    );
    t.equal(await readFile(other, 'utf8'), 'y', 'the temporary file stays for the caller');
  });
}

import type { Test } from 'tap';
import type { FileInfo, Fs } from '@ferry/core';
import type { CaseGroup, SuiteContext } from '../fs-conformance.js';
import { S_IFDIR, S_IFMT, expectFsError, expectMissing, listAll, namesIn, readFile, writeFile } from '../fs-helpers.js';

/** Names that must round-trip byte for byte (paths reach backends normalised, so no trailing spaces). */
export const AWKWARD_NAMES = [
  'with space.txt',
  'two  spaces  inside',
  '  leading spaces',
  'héllo wörld.txt',
  'e\u0301-decomposed.txt',
  '日本語のファイル.txt',
  'emoji 🎉📁.bin',
  'Ωmega αλφα.dat',
  `quote's "double".txt`,
  'symbols !@#$&()[]{}+=,;~`^.txt',
  'hash#and?question&amp.txt',
  '100% sure %41.txt',
  'dots...name..',
  '.hidden',
];

const TEN_MINUTES = 10 * 60 * 1000;

function checkFileInfo(t: Test, info: FileInfo, expect: { name: string; path: string; isDir: boolean; size?: number }): void {
  t.equal(info.name, expect.name, `${expect.path}: name`);
  t.equal(info.path, expect.path, `${expect.path}: path`);
  t.equal(info.isDir, expect.isDir, `${expect.path}: isDir`);
  if (expect.size !== undefined) t.equal(info.size, expect.size, `${expect.path}: size`);
  t.ok(info.mtime instanceof Date && !Number.isNaN(info.mtime.getTime()), `${expect.path}: mtime is a valid Date`);
  t.type(info.mode, 'number', `${expect.path}: mode is a number`);
  if (expect.isDir) t.ok((info.mode & S_IFDIR) !== 0, `${expect.path}: mode has the directory bit`);
  else t.not(info.mode & S_IFMT, S_IFDIR, `${expect.path}: mode has no directory type bits`);
}

async function statCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await fs.mkdir('/dir');
  await writeFile(fs, '/dir/file.txt', 'hello');

  await t.test('root', async (t) => {
    const root = await fs.stat('/');
    t.equal(root.isDir, true, 'the root is a directory');
    t.equal(root.path, '/', 'root path is /');
  });
  await t.test('file', async (t) => {
    const info = await fs.stat('/dir/file.txt');
    checkFileInfo(t, info, { name: 'file.txt', path: '/dir/file.txt', isDir: false, size: 5 });
    t.ok(Math.abs(info.mtime.getTime() - Date.now()) < TEN_MINUTES, 'mtime of a new file is recent');
  });
  await t.test('directory', async (t) => {
    checkFileInfo(t, await fs.stat('/dir'), { name: 'dir', path: '/dir', isDir: true });
  });
  await t.test('missing', async (t) => {
    await expectMissing(t, fs, '/nope', 'stat of a missing file');
    await expectMissing(t, fs, '/nope/deeper/file', 'stat under a missing directory');
    await expectFsError(t, fs.stat('/dir/file.txt/child'), ['NOT_FOUND', 'NOT_DIR'], 'stat under a file');
  });
}

async function mkdirCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await t.test('non-recursive creates one level', async (t) => {
    await fs.mkdir('/a');
    t.equal((await fs.stat('/a')).isDir, true, '/a is a directory');
    const { entries } = await listAll(fs, '/');
    t.same(
      entries.map((e) => [e.name, e.isDir]),
      [['a', true]],
      'the root lists /a as a directory',
    );
    t.same((await listAll(fs, '/a')).entries, [], 'a new directory is empty');
  });
  await t.test('existing directory', async (t) => {
    await expectFsError(t, fs.mkdir('/a'), 'EXISTS', 'non-recursive mkdir of an existing directory');
    await fs.mkdir('/a', { recursive: true });
    t.pass('recursive mkdir of an existing directory succeeds');
  });
  await t.test('recursive creates every missing parent', async (t) => {
    await fs.mkdir('/r1/r2/r3/r4', { recursive: true });
    for (const p of ['/r1', '/r1/r2', '/r1/r2/r3', '/r1/r2/r3/r4']) t.equal((await fs.stat(p)).isDir, true, `${p} exists`);
  });
  await t.test('missing parent without recursive', ctx.requires('realDirectories'), async (t) => {
    await expectFsError(t, fs.mkdir('/missing/child'), 'NOT_FOUND', 'non-recursive mkdir under a missing parent');
    await expectMissing(t, fs, '/missing', 'the parent was not created');
  });
  await t.test('onto an existing file', async (t) => {
    await writeFile(fs, '/file', 'x');
    await expectFsError(t, fs.mkdir('/file'), ['EXISTS', 'NOT_DIR'], 'mkdir onto a file');
    await expectFsError(t, fs.mkdir('/file', { recursive: true }), ['EXISTS', 'NOT_DIR'], 'recursive mkdir onto a file');
    t.equal((await readFile(fs, '/file')).toString(), 'x', 'the file is untouched');
  });
}

async function zeroByteCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  const result = await writeFile(fs, '/empty', Buffer.alloc(0));
  t.equal(result.size, 0, 'done reports 0 bytes');
  t.equal((await fs.stat('/empty')).size, 0, 'stat size is 0');
  t.equal((await fs.stat('/empty')).isDir, false, 'an empty file is a file');
  t.equal((await readFile(fs, '/empty')).length, 0, 'reading yields nothing');
  const { entries } = await listAll(fs, '/');
  t.same(
    entries.map((e) => [e.name, e.size, e.isDir]),
    [['empty', 0, false]],
    'listed with size 0',
  );
  await writeFile(fs, '/shrink', 'not empty yet');
  await writeFile(fs, '/shrink', '');
  t.equal((await fs.stat('/shrink')).size, 0, 'overwriting with zero bytes truncates');
  t.equal((await readFile(fs, '/shrink')).length, 0, 'and reads back empty');
}

async function nameCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await fs.mkdir('/names');
  for (const name of AWKWARD_NAMES) {
    const p = `/names/${name}`;
    await writeFile(fs, p, `content of ${name}`);
    const info = await fs.stat(p);
    t.equal(info.name, name, `stat name round-trips: ${JSON.stringify(name)}`);
    t.equal((await readFile(fs, p)).toString(), `content of ${name}`, `content round-trips: ${JSON.stringify(name)}`);
  }
  const listed = await namesIn(fs, '/names');
  t.same(listed, [...AWKWARD_NAMES].sort(), 'the listing shows every name exactly as written');

  const dir = '/📁 déjà vu/sub dir ü';
  await fs.mkdir(dir, { recursive: true });
  await writeFile(fs, `${dir}/文件 1.txt`, 'deep');
  t.same(await namesIn(fs, '/📁 déjà vu'), ['sub dir ü'], 'unicode directory listed');
  t.equal((await readFile(fs, `${dir}/文件 1.txt`)).toString(), 'deep', 'file in a unicode directory reads back');
  await fs.rename(`${dir}/文件 1.txt`, `${dir}/ファイル 2.txt`);
  t.same(await namesIn(fs, dir), ['ファイル 2.txt'], 'rename between unicode names');
}

async function nestedCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  const levels = ['/n1', '/n1/n2', '/n1/n2/n3', '/n1/n2/n3/n4', '/n1/n2/n3/n4/n5'];
  await fs.mkdir(levels[levels.length - 1]!, { recursive: true });
  for (const [i, dir] of levels.entries()) await writeFile(fs, `${dir}/file${i}.txt`, `level ${i}`);
  for (const [i, dir] of levels.entries()) {
    const { entries } = await listAll(fs, dir);
    const expected: [string, boolean][] = [[`file${i}.txt`, false]];
    if (i < levels.length - 1) expected.push([`n${i + 2}`, true]);
    t.same(entries.map((e): [string, boolean] => [e.name, e.isDir]).sort(), expected.sort(), `${dir} lists only its own children`);
    for (const e of entries) t.equal(e.path, `${dir}/${e.name}`, `${dir}/${e.name}: listed path`);
  }
  const deep = '/n1/n2/n3/n4/n5/file4.txt';
  t.equal((await fs.stat(deep)).path, deep, 'deep stat path');
  t.equal((await readFile(fs, deep)).toString(), 'level 4', 'deep file reads back');
}

async function writeIntoMissingParent(t: Test, fs: Fs): Promise<void> {
  const err = await writeFile(fs, '/no-such-dir/file.txt', 'x').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err, 'writing into a missing directory fails');
  t.match(err, { code: 'NOT_FOUND' }, 'with NOT_FOUND');
  await expectMissing(t, fs, '/no-such-dir', 'no directory was created');
}

export const basicCases: CaseGroup[] = [
  { name: 'stat()', run: statCases },
  { name: 'mkdir()', run: mkdirCases },
  { name: 'zero-byte file', run: zeroByteCases },
  { name: 'unicode and space-containing names', run: nameCases },
  { name: 'nested directories', run: nestedCases },
  {
    name: 'openWrite() into a missing directory',
    requires: ['realDirectories'],
    run: async (t, ctx) => writeIntoMissingParent(t, await ctx.fresh(t)),
  },
];

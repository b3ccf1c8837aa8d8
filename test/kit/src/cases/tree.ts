import type { Test } from 'tap';
import type { Fs } from '@ferry/core';
import type { CaseGroup, SuiteContext } from '../fs-conformance.js';
import { expectFsError, expectMissing, listAll, namesIn, readFile, writeFile } from '../fs-helpers.js';

/** Runs `fn` over `items` with at most `limit` in flight. */
async function eachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function listCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await fs.mkdir('/many');
  const files = Array.from({ length: 1000 }, (_, i) => `f-${String(i).padStart(4, '0')}.txt`);
  await eachLimit(files, 16, async (name) => void (await writeFile(fs, `/many/${name}`, name)));
  await fs.mkdir('/many/zz-subdir');
  const expected = [...files, 'zz-subdir'].sort();

  await t.test('1,001 entries with pageSize 100', async (t) => {
    const { entries, pages } = await listAll(fs, '/many', { pageSize: 100 });
    t.ok(
      pages.every((n) => n <= 100),
      `no page holds more than 100 entries (pages: ${pages.join(',')})`,
    );
    t.ok(pages.length >= 11, `at least 11 pages (${pages.length})`);
    const names = entries.map((e) => e.name).sort();
    t.equal(names.length, 1001, '1,001 entries in total');
    t.same(names, expected, 'every name exactly once');
    const bad = entries.filter((e) => (e.name === 'zz-subdir' ? !e.isDir : e.isDir || e.size !== Buffer.byteLength(e.name) || e.path !== `/many/${e.name}`));
    t.same(bad, [], 'every entry has the right path, type and size');
  });
  await t.test('default page size', async (t) => {
    const { entries, pages } = await listAll(fs, '/many');
    t.ok(
      pages.every((n) => n <= 1000),
      'pages hold at most 1000 entries by default',
    );
    t.same(entries.map((e) => e.name).sort(), expected, 'every name exactly once');
  });
  await t.test('stopping early', async (t) => {
    let pages = 0;
    for await (const page of fs.list('/many', { pageSize: 100 })) {
      pages += page.length > 0 ? 1 : 0;
      break;
    }
    t.equal(pages, 1, 'breaking out after one page is fine');
    t.equal((await namesIn(fs, '/many')).length, 1001, 'and a new listing still sees everything');
  });
  await t.test('empty, missing and non-directories', async (t) => {
    await fs.mkdir('/empty');
    t.same((await listAll(fs, '/empty')).entries, [], 'an empty directory lists nothing');
    await expectFsError(t, listAll(fs, '/missing'), 'NOT_FOUND', 'listing a missing directory');
    if (ctx.caps.realDirectories) {
      await expectFsError(t, listAll(fs, '/many/f-0001.txt'), 'NOT_DIR', 'listing a file');
    }
  });
}

async function renameCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await t.test('file', async (t) => {
    await writeFile(fs, '/a.txt', 'A');
    await fs.rename('/a.txt', '/b.txt');
    await expectMissing(t, fs, '/a.txt', 'the source is gone');
    t.equal((await readFile(fs, '/b.txt')).toString(), 'A', 'the destination has the content');
    await fs.mkdir('/into');
    await fs.rename('/b.txt', '/into/c.txt');
    t.same(await namesIn(fs, '/into'), ['c.txt'], 'moved into another directory');
  });
  await t.test('non-empty directory', async (t) => {
    await fs.mkdir('/src/deep/er', { recursive: true });
    await writeFile(fs, '/src/x.txt', 'X');
    await writeFile(fs, '/src/deep/er/y.txt', 'Y');
    await fs.rename('/src', '/dst');
    await expectMissing(t, fs, '/src', 'the old directory is gone');
    await expectMissing(t, fs, '/src/x.txt', 'and so is its content');
    t.equal((await readFile(fs, '/dst/x.txt')).toString(), 'X', 'direct child moved');
    t.equal((await readFile(fs, '/dst/deep/er/y.txt')).toString(), 'Y', 'nested child moved');
    t.equal((await fs.stat('/dst/deep')).isDir, true, 'subdirectory moved');
  });
  await t.test('onto an existing file replaces it', async (t) => {
    await writeFile(fs, '/old.txt', 'old content that is longer');
    await writeFile(fs, '/new.txt', 'new');
    await fs.rename('/new.txt', '/old.txt');
    t.equal((await readFile(fs, '/old.txt')).toString(), 'new', 'destination has the source content');
    await expectMissing(t, fs, '/new.txt', 'the source is gone');
    t.equal((await namesIn(fs, '/')).filter((n) => n === 'old.txt').length, 1, 'listed once');
  });
  await t.test('into a missing parent', async (t) => {
    await writeFile(fs, '/orphan.txt', 'O');
    let err: unknown;
    try {
      await fs.rename('/orphan.txt', '/no/such/parent/orphan.txt');
    } catch (e) {
      err = e;
    }
    if (ctx.caps.realDirectories) {
      t.match(err, { code: 'NOT_FOUND' }, 'fails with NOT_FOUND');
      t.equal((await readFile(fs, '/orphan.txt')).toString(), 'O', 'the source stays in place');
    } else if (err) {
      t.match(err, { code: 'NOT_FOUND' }, 'a flat backend that refuses uses NOT_FOUND');
      t.equal((await readFile(fs, '/orphan.txt')).toString(), 'O', 'the source stays in place');
    } else {
      await expectMissing(t, fs, '/orphan.txt', 'a flat backend that accepts moves the file');
      t.equal((await readFile(fs, '/no/such/parent/orphan.txt')).toString(), 'O', 'to the new key');
    }
  });
  await t.test('missing source', async (t) => {
    await expectFsError(t, fs.rename('/ghost', '/ghost2'), 'NOT_FOUND', 'renaming a missing file');
  });
}

async function copyCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  if (!fs.copy) {
    t.fail('capabilities.serverSideCopy is true but copy() is missing');
    return;
  }
  await writeFile(fs, '/orig.txt', 'copied bytes');
  await fs.mkdir('/other');
  await fs.copy('/orig.txt', '/other/copy.txt');
  t.equal((await readFile(fs, '/other/copy.txt')).toString(), 'copied bytes', 'the copy has the content');
  t.equal((await readFile(fs, '/orig.txt')).toString(), 'copied bytes', 'the source is unchanged');
  await writeFile(fs, '/orig.txt', 'changed');
  t.equal((await readFile(fs, '/other/copy.txt')).toString(), 'copied bytes', 'the copy is independent of the source');
  await expectFsError(t, fs.copy('/none', '/none2'), 'NOT_FOUND', 'copy of a missing file');
}

async function unsupportedCall(t: Test, fs: Fs, method: 'copy' | 'chtimes'): Promise<void> {
  if (!fs[method]) {
    t.pass(`${method}() is absent`);
    return;
  }
  await writeFile(fs, '/u.txt', 'u');
  const call = method === 'copy' ? fs.copy!('/u.txt', '/u2.txt') : fs.chtimes!('/u.txt', new Date(0));
  await expectFsError(t, call, 'NOT_SUPPORTED', `${method}() present but unsupported throws, never a no-op`);
}

async function removeCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await writeFile(fs, '/f.txt', 'f');
  await fs.remove('/f.txt');
  await expectMissing(t, fs, '/f.txt', 'a removed file is gone');
  await fs.mkdir('/empty');
  await fs.remove('/empty');
  await expectMissing(t, fs, '/empty', 'a removed empty directory is gone');
  await fs.mkdir('/full/sub', { recursive: true });
  await writeFile(fs, '/full/sub/z.txt', 'z');
  await expectFsError(t, fs.remove('/full'), 'NOT_EMPTY', 'removing a non-empty directory without recursive');
  t.equal((await readFile(fs, '/full/sub/z.txt')).toString(), 'z', 'its content is untouched');
  await fs.remove('/full', { recursive: true });
  await expectMissing(t, fs, '/full', 'recursive removal removes the directory');
  await expectMissing(t, fs, '/full/sub/z.txt', 'and everything under it');
  t.same(await namesIn(fs, '/'), [], 'nothing is left');
  await expectFsError(t, fs.remove('/never'), 'NOT_FOUND', 'removing a missing path');
}

async function mtimeCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  const close = (a: Date, b: Date): boolean => Math.abs(a.getTime() - b.getTime()) < 1000;
  const when = new Date('2021-03-04T05:06:07.000Z');
  await writeFile(fs, '/w.txt', 'w', { mtime: when });
  const got = (await fs.stat('/w.txt')).mtime;
  t.ok(close(got, when), `WriteOptions.mtime is applied (${got.toISOString()})`);
  if (!fs.chtimes) {
    t.fail('capabilities.settableMtime is true but chtimes() is missing');
    return;
  }
  const later = new Date('2022-12-31T23:59:58.000Z');
  await fs.chtimes('/w.txt', later);
  t.ok(close((await fs.stat('/w.txt')).mtime, later), 'chtimes() sets the mtime stat reports');
  const listed = (await listAll(fs, '/')).entries.find((e) => e.name === 'w.txt');
  t.ok(listed && close(listed.mtime, later), 'and list() reports it too');
  await expectFsError(t, fs.chtimes('/none', later), 'NOT_FOUND', 'chtimes() of a missing file');
}

async function usedSpaceCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  t.same(await fs.usedSpace(), { size: 0, files: 0 }, 'an empty root uses nothing');
  await fs.mkdir('/u/v/w', { recursive: true });
  const files: [string, number][] = [
    ['/top.bin', 1],
    ['/u/zero.bin', 0],
    ['/u/a.bin', 1000],
    ['/u/v/b.bin', 70_000],
    ['/u/v/w/c.bin', 65_536],
  ];
  for (const [p, n] of files) await writeFile(fs, p, Buffer.alloc(n, 7));
  const total = files.reduce((s, [, n]) => s + n, 0);
  t.same(await fs.usedSpace('/'), { size: total, files: files.length }, 'totals under /');
  t.same(await fs.usedSpace(), { size: total, files: files.length }, 'path defaults to /');
  t.same(await fs.usedSpace('/u/v'), { size: 135_536, files: 2 }, 'totals of a subtree');
  await expectFsError(t, fs.usedSpace('/nowhere'), 'NOT_FOUND', 'usedSpace of a missing path');
}

export const treeCases: CaseGroup[] = [
  { name: 'list()', run: listCases },
  { name: 'rename()', run: renameCases },
  { name: 'copy()', requires: ['serverSideCopy'], run: copyCases },
  {
    name: 'copy() when serverSideCopy is false',
    run: async (t, ctx) => {
      if (ctx.caps.serverSideCopy) return void t.pass('not applicable: serverSideCopy is true');
      await unsupportedCall(t, await ctx.fresh(t), 'copy');
    },
  },
  { name: 'remove()', run: removeCases },
  { name: 'chtimes() and mtime on write', requires: ['settableMtime'], run: mtimeCases },
  {
    name: 'chtimes() when settableMtime is false',
    run: async (t, ctx) => {
      if (ctx.caps.settableMtime) return void t.pass('not applicable: settableMtime is true');
      await unsupportedCall(t, await ctx.fresh(t), 'chtimes');
    },
  },
  { name: 'usedSpace()', run: usedSpaceCases },
];

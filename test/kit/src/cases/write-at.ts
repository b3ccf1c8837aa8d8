import type { Test } from 'tap';
import type { Fs } from '@ferry/core';
import type { CaseGroup, SuiteContext } from '../fs-conformance.js';
import { expectFsError, readFile, rejectionOf, writeFile } from '../fs-helpers.js';

/** Writes `data` through Fs.writeAt from `offset` on; resolves with the bytes written. */
async function writeAtFile(fs: Fs, path: string, offset: number, data: string): Promise<number> {
  const h = await fs.writeAt!(path, offset, { size: data.length });
  h.stream.end(Buffer.from(data));
  return (await h.done).size;
}

async function writeAtCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  t.type(fs.writeAt, 'function', 'writeAt is implemented where writeAtOffset is declared');
  await writeFile(fs, '/w.txt', '0123456789');
  t.equal(await writeAtFile(fs, '/w.txt', 5, 'abcdefgh'), 8, 'done reports the bytes written');
  t.equal((await readFile(fs, '/w.txt')).toString(), '01234abcdefgh', 'the bytes before the offset are kept, the file grows past its end');
  t.equal((await fs.stat('/w.txt')).size, 13, 'stat reports the new size');

  await writeAtFile(fs, '/w.txt', 2, 'XY');
  t.equal((await readFile(fs, '/w.txt')).toString(), '01XY4abcdefgh', 'a write inside the file keeps the bytes after it');

  await writeAtFile(fs, '/w.txt', 13, '!');
  t.equal((await readFile(fs, '/w.txt')).toString(), '01XY4abcdefgh!', 'a write at the size appends');

  await writeFile(fs, '/empty', '');
  await writeAtFile(fs, '/empty', 0, 'abc');
  t.equal((await readFile(fs, '/empty')).toString(), 'abc', 'offset 0 of an empty file');

  await expectFsError(t, fs.writeAt!('/w.txt', 15), 'INVALID', 'an offset past the end');
  await expectFsError(t, fs.writeAt!('/w.txt', -1), 'INVALID', 'a negative offset');
  await expectFsError(t, fs.writeAt!('/missing.txt', 0), 'NOT_FOUND', 'a missing file');
  t.equal((await readFile(fs, '/w.txt')).toString(), '01XY4abcdefgh!', 'refused writes leave the file as it was');

  await t.test('a directory', ctx.requires('realDirectories'), async (t) => {
    await fs.mkdir('/d');
    await expectFsError(t, fs.writeAt!('/d', 0), ['IS_DIR', 'INVALID'], 'writing into a directory');
  });

  await t.test('abort keeps what was written before', async (t) => {
    await writeFile(fs, '/a.txt', 'keep');
    const h = await fs.writeAt!('/a.txt', 4);
    await h.abort(new Error('stop'));
    t.ok(await rejectionOf(h.done), 'done rejects once aborted');
    t.equal((await readFile(fs, '/a.txt')).toString(), 'keep', 'the bytes before the offset are still there');
  });

  await t.test('an aborted signal', async (t) => {
    const ac = new AbortController();
    ac.abort();
    await expectFsError(t, fs.writeAt!('/w.txt', 0, { signal: ac.signal }), 'ABORTED', 'refused before anything is written');
  });
}

async function truncateCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  t.type(fs.truncate, 'function', 'truncate is implemented where truncate is declared');
  await writeFile(fs, '/t.txt', '0123456789');
  await fs.truncate!('/t.txt', 4);
  t.equal((await readFile(fs, '/t.txt')).toString(), '0123', 'cut to 4 bytes');
  await fs.truncate!('/t.txt', 6);
  t.same([...(await readFile(fs, '/t.txt'))], [48, 49, 50, 51, 0, 0], 'extended with zero bytes');
  await fs.truncate!('/t.txt', 0);
  t.equal((await fs.stat('/t.txt')).size, 0, 'cut to nothing');
  await expectFsError(t, fs.truncate!('/missing.txt', 0), 'NOT_FOUND', 'a missing file');
  await expectFsError(t, fs.truncate!('/t.txt', -1), 'INVALID', 'a negative size');
}

/** A backend that declares a capability off must not pretend otherwise: the method is absent or refuses with NOT_SUPPORTED. */
async function refusalCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await writeFile(fs, '/r.txt', 'abc');
  if (!ctx.caps.writeAtOffset) {
    if (fs.writeAt) await expectFsError(t, fs.writeAt('/r.txt', 3), 'NOT_SUPPORTED', `${ctx.name} declares writeAtOffset = false: writeAt refuses`);
    else t.pass(`${ctx.name} declares writeAtOffset = false and has no writeAt`);
  }
  if (!ctx.caps.truncate) {
    if (fs.truncate) await expectFsError(t, fs.truncate('/r.txt', 1), 'NOT_SUPPORTED', `${ctx.name} declares truncate = false: truncate refuses`);
    else t.pass(`${ctx.name} declares truncate = false and has no truncate`);
  }
  if (ctx.caps.writeAtOffset && ctx.caps.truncate) t.pass('both declared: checked by their own groups');
  t.equal((await readFile(fs, '/r.txt')).toString(), 'abc', 'the file is unchanged');
}

export const writeAtCasesGroups: CaseGroup[] = [
  { name: 'write at an offset', requires: ['writeAtOffset'], run: writeAtCases },
  { name: 'truncate', requires: ['truncate'], run: truncateCases },
  { name: 'capabilities declared off are refused', run: refusalCases },
];

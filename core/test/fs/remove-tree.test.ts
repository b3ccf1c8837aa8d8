// removeTreeCounting and removeFileCounting (src/fs/remove-tree.ts): what a removal tells the
// quota, with a backend that counts as it removes and with one that does not, when it succeeds
// and when it fails midway.
import t from 'tap';
import { removeFileCounting, removeTreeCounting } from '../../src/fs/remove-tree.js';
import type { Fs, RemoveOptions, UsedSpace } from '../../src/fs/fs.contract.js';

/** A backend holding `files` (sizes) in one directory; the removal fails after `failAfter` files when set. */
function backend(files: number[], o: { counts: boolean; failAfter?: number }) {
  const calls: string[] = [];
  const left = [...files];
  const removeAll = (removed?: UsedSpace) => {
    while (left.length) {
      if (o.failAfter !== undefined && files.length - left.length === o.failAfter) throw new Error('disk gone');
      const size = left.shift()!;
      if (removed) {
        removed.size += size;
        removed.files++;
      }
    }
  };
  const fs = {
    usedSpace: async () => (calls.push('usedSpace'), { size: left.reduce((a, b) => a + b, 0), files: left.length }),
    remove: async (_p: string, ro?: RemoveOptions) => (calls.push(`remove recursive=${ro?.recursive}`), removeAll()),
    ...(o.counts
      ? {
          removeCounted: async (_p: string, removed: UsedSpace, ro?: RemoveOptions) => (
            calls.push(`removeCounted recursive=${ro?.recursive}`),
            removeAll(removed)
          ),
        }
      : {}),
  } as unknown as Fs;
  return { fs, calls, left };
}

t.test('a backend that counts as it removes: one call, its count', async (t) => {
  const b = backend([1, 2, 3], { counts: true });
  t.same(await removeTreeCounting(b.fs, '/d', {}), { removed: { size: 6, files: 3 } });
  t.same(b.calls, ['removeCounted recursive=true']);
});

t.test('a backend that does not: usedSpace first, then remove with recursive', async (t) => {
  const b = backend([1, 2, 3], { counts: false });
  t.same(await removeTreeCounting(b.fs, '/d', {}), { removed: { size: 6, files: 3 } });
  t.same(b.calls, ['usedSpace', 'remove recursive=true']);
});

t.test('a failure midway: what went is counted where the backend counts, nothing otherwise; the error is returned', async (t) => {
  const counting = backend([1, 2, 3], { counts: true, failAfter: 2 });
  const r = await removeTreeCounting(counting.fs, '/d', {});
  t.same(r.removed, { size: 3, files: 2 });
  t.match(r.error, { message: 'disk gone' });
  const other = backend([1, 2, 3], { counts: false, failAfter: 2 });
  const r2 = await removeTreeCounting(other.fs, '/d', {});
  t.same(r2.removed, { size: 0, files: 0 });
  t.match(r2.error, { message: 'disk gone' });
});

t.test('a file: the size the backend removed where it counts, else the size the caller saw; never recursive', async (t) => {
  // the file is 7 bytes when removed; the caller's stat had seen 5 (overwritten in between)
  const counting = backend([7], { counts: true });
  t.same(await removeFileCounting(counting.fs, '/f', { size: 5 }, {}), { size: 7, files: 1 });
  t.same(counting.calls, ['removeCounted recursive=undefined']);
  const other = backend([7], { counts: false });
  t.same(await removeFileCounting(other.fs, '/f', { size: 5 }, {}), { size: 5, files: 1 });
  t.same(other.calls, ['remove recursive=undefined']);
  const failing = backend([7], { counts: true, failAfter: 0 });
  await t.rejects(removeFileCounting(failing.fs, '/f', { size: 5 }, {}), { message: 'disk gone' }, 'a failure is thrown');
});

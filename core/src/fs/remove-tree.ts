import type { Fs, FileInfo, OpOptions, UsedSpace } from './fs.contract.js';

/** What removeTreeCounting() removed, and why it stopped when it failed midway. */
export interface TreeRemoval {
  /** The files removed, as usedSpace() counts them. */
  removed: UsedSpace;
  /** Set when the removal failed (what went before is in `removed`). */
  error?: unknown;
}

/**
 * Removes the directory `path` of `fs` and everything under it, and answers
 * what went for the quota: counted by the backend as it removes when it can
 * (Fs.removeCounted, one walk), else by usedSpace() first (two walks; a failure
 * midway then counts nothing, as nothing can say what went).
 */
export async function removeTreeCounting(fs: Fs, path: string, o: OpOptions): Promise<TreeRemoval> {
  const removed: UsedSpace = { size: 0, files: 0 };
  try {
    if (fs.removeCounted) {
      await fs.removeCounted(path, removed, { ...o, recursive: true });
    } else {
      const used = await fs.usedSpace(path, o);
      await fs.remove(path, { ...o, recursive: true });
      Object.assign(removed, used);
    }
    return { removed };
  } catch (error) {
    return { removed, error };
  }
}

/**
 * Removes the file `path` of `fs` (not a directory) and answers what went
 * for the quota: counted by the backend as it removes when it can, the size
 * the file had then; else `info`, what the caller's stat saw before (a
 * concurrent overwrite in between is then counted at the size it replaced).
 */
export async function removeFileCounting(fs: Fs, path: string, info: Pick<FileInfo, 'size'>, o: OpOptions): Promise<UsedSpace> {
  if (!fs.removeCounted) {
    await fs.remove(path, o);
    return { size: info.size, files: 1 };
  }
  const removed: UsedSpace = { size: 0, files: 0 };
  await fs.removeCounted(path, removed, o);
  return removed;
}

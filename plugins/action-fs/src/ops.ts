import { FsError, FsErrorCode, isFsError, parentPath, type Logger, type UserFiles } from '@ferry/core';
import type { KeyValue, RenameConfig } from './schema.js';

/** What every sub-type runs with. */
export interface FsRun {
  files: UserFiles;
  signal: AbortSignal;
  logger: Logger;
}

/** Creates the missing parents of a target path. */
export async function ensureParent(r: FsRun, vpath: string): Promise<void> {
  const parent = parentPath(r.files.path(vpath));
  if (parent !== '/') await r.files.mkdir(parent, { parents: true, signal: r.signal });
}

/** Runs `fn` on each item in order, stopping at the first failure (later items may depend on earlier ones). */
async function each<T>(items: T[], label: (t: T) => string, fn: (t: T) => Promise<void>): Promise<void> {
  for (const it of items) {
    try {
      await fn(it);
    } catch (err) {
      throw new Error(`${label(it)}: ${(err as Error).message}`, { cause: err });
    }
  }
}

/** 1: renames (key -> value); the target's missing parents are created, an existing target file is replaced. */
export async function renameAll(r: FsRun, items: RenameConfig[]): Promise<void> {
  await each(
    items,
    (i) => `rename ${i.key} -> ${i.value}`,
    async (i) => {
      await ensureParent(r, i.value);
      await r.files.rename(i.key, i.value, { signal: r.signal });
      if (!i.update_modtime) return;
      try {
        await r.files.chtimes(i.value, new Date(), { signal: r.signal });
      } catch (err) {
        if (!isFsError(err, FsErrorCode.NotSupported)) throw err;
        r.logger.info({ path: i.value }, 'update_modtime: the storage backend cannot set modification times');
      }
    },
  );
}

/**
 * 2: deletes. A path ending with '/' empties the directory and keeps it;
 * otherwise the file, or the directory with everything under it, is removed.
 */
export async function deleteAll(r: FsRun, items: string[]): Promise<void> {
  await each(
    items,
    (p) => `delete ${p}`,
    async (p) => {
      const vp = r.files.path(p);
      if (!/[/\\]\s*$/.test(p)) return r.files.remove(vp, { signal: r.signal });
      const info = await r.files.stat(vp, { signal: r.signal });
      if (!info.isDir) throw new FsError(FsErrorCode.NotDirectory, `${vp} is not a directory (a trailing '/' empties a directory)`, { path: vp });
      // names first, removals after: a listing is not modified while it is read
      const names: string[] = [];
      for await (const page of r.files.list(vp, { signal: r.signal })) for (const e of page) names.push(e.path);
      for (const child of names) await r.files.remove(child, { signal: r.signal });
    },
  );
}

/** 3: creates directories with their missing parents (an existing directory is fine). */
export async function mkdirAll(r: FsRun, items: string[]): Promise<void> {
  await each(
    items,
    (p) => `mkdir ${p}`,
    (p) => r.files.mkdir(p, { parents: true, signal: r.signal }),
  );
}

/** 4: fails, naming every missing path, when one of the paths does not exist. */
export async function existAll(r: FsRun, items: string[]): Promise<void> {
  const missing: string[] = [];
  for (const p of items) if (!(await r.files.statOrNull(p, { signal: r.signal }))) missing.push(r.files.path(p));
  if (missing.length) throw new FsError(FsErrorCode.NotFound, `missing: ${missing.join(', ')}`);
}

/** 6: copies files and directory trees (server side where the backend can); the target's missing parents are created. */
export async function copyAll(r: FsRun, items: KeyValue[]): Promise<void> {
  await each(
    items,
    (i) => `copy ${i.key} -> ${i.value}`,
    async (i) => {
      await ensureParent(r, i.value);
      await r.files.copy(i.key, i.value, { signal: r.signal });
    },
  );
}

/**
 * System calls on the entries of one directory in one native call
 * (native/dir-calls.c), relative to the directory's descriptor: a folder's
 * files removed (fstatat and unlinkat, as `rm -rf` does) and small files
 * read whole (openat, fstat, pread, close). Made for worker threads that do
 * this for many entries: they load the addon with require(addonPath())
 * themselves. Without the addon (not built on this machine, or
 * FERRY_DIR_CALLS=off) addonPath() is null and callers take their
 * JavaScript path.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** What one sweep() answers. */
export interface SweepResult {
  /** The regular files removed (only when counted). */
  files: string[];
  /** Their sizes, in the order of `files` (a Float64Array's buffer). */
  sizes: ArrayBuffer;
  /** The subdirectories met (not entered). */
  dirs: string[];
  /** The entries that failed: [name, code (ENOENT, EISDIR...), message]. */
  errors: [string, string, string][];
  /** Entries are left past `max`. */
  more: boolean;
}

/** What one readFiles() answers. */
export interface ReadFilesResult {
  /**
   * Five doubles per name (a Float64Array's buffer): kind (0 read, 1 larger
   * than `max`, not read, 2 failed), then for a file read the offset of its
   * bytes in `data`, their length, its mtimeMs and its mode.
   */
  meta: ArrayBuffer;
  /** The bytes of the files read, one after the other. */
  data: ArrayBuffer;
  /** The names that failed: [index, code (ENOENT, ELOOP for a link, EISDIR, NOTREG: not a regular file...), message]. */
  errors: [number, string, string][];
}

export interface DirCallsAddon {
  /**
   * Removes up to `max` entries of the directory at the path `dir` (its
   * subdirectories only answered), skipping the names `skip` and, when
   * `partN` > 0, those of the other parts (see native/dir-calls.c); `count`:
   * each entry is fstat'ed first and the regular files answered with their
   * sizes. Throws (with `code`) when the directory cannot be opened.
   */
  sweep(dir: string, skip: readonly string[], max: number, count: boolean, partK: number, partN: number): SweepResult;
  /**
   * Reads the regular files `names` of the directory at `dir` whole (each
   * opened with openat and `flags`, O_NOFOLLOW among them to refuse links),
   * those of at most `max` bytes. Throws (with `code`) when the directory
   * cannot be opened.
   */
  readFiles(dir: string, names: readonly string[], max: number, flags: number): ReadFilesResult;
}

let found: string | null | undefined;

/** The path of the built addon, or null (not built, does not load, or FERRY_DIR_CALLS=off). */
export function addonPath(): string | null {
  if (found !== undefined) return found;
  found = null;
  if (process.env.FERRY_DIR_CALLS === 'off') return found;
  // dist/src/index.js and src/index.ts sit two or one folders below the package
  for (const rel of ['../../build/Release/dir_calls.node', '../build/Release/dir_calls.node']) {
    const file = fileURLToPath(new URL(rel, import.meta.url));
    if (!existsSync(file)) continue;
    try {
      createRequire(import.meta.url)(file);
      found = file;
    } catch {
      // built for another node, or broken: the JavaScript path
    }
    break;
  }
  return found;
}

/** The addon, loaded in this thread, or null (see addonPath). */
export function loadAddon(): DirCallsAddon | null {
  const file = addonPath();
  return file ? (createRequire(import.meta.url)(file) as DirCallsAddon) : null;
}

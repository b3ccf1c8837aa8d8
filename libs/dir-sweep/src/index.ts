/**
 * The files of one directory removed in one native call (native/sweep.c):
 * fstatat and unlinkat on the entry names through the directory's
 * descriptor, as `rm -rf` does. Made for worker threads that sweep large
 * directories: they load the addon with require(addonPath()) themselves.
 * Without the addon (not built on this machine, or FERRY_DIR_SWEEP=off)
 * addonPath() is null and callers take their JavaScript path.
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

export interface DirSweepAddon {
  /**
   * Removes up to `max` entries of the directory at the path `dir` (its
   * subdirectories only answered), skipping the names `skip` and, when
   * `partN` > 0, those of the other parts (see native/sweep.c); `count`:
   * each entry is fstat'ed first and the regular files answered with their
   * sizes. Throws (with `code`) when the directory cannot be opened.
   */
  sweep(dir: string, skip: readonly string[], max: number, count: boolean, partK: number, partN: number): SweepResult;
}

let found: string | null | undefined;

/** The path of the built addon, or null (not built, does not load, or FERRY_DIR_SWEEP=off). */
export function addonPath(): string | null {
  if (found !== undefined) return found;
  found = null;
  if (process.env.FERRY_DIR_SWEEP === 'off') return found;
  // dist/src/index.js and src/index.ts sit two or one folders below the package
  for (const rel of ['../../build/Release/dir_sweep.node', '../build/Release/dir_sweep.node']) {
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
export function loadAddon(): DirSweepAddon | null {
  const file = addonPath();
  return file ? (createRequire(import.meta.url)(file) as DirSweepAddon) : null;
}

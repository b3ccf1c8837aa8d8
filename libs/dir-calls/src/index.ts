/**
 * System calls on the entries of one directory in one native call
 * (native/dir-calls.c), relative to the directory's descriptor: a folder's
 * files removed (fstatat and unlinkat, as `rm -rf` does), small files read
 * whole (openat, fstat, pread, close), a directory listed with its entries'
 * lstat, a small file created and renamed into place. run() makes such a
 * group of calls off the event loop and calls back with the answer;
 * sweep() and readFiles() make theirs in the calling thread. Without the
 * addon (not built on this machine, or FERRY_DIR_CALLS=off) addonPath() is
 * null and callers take their JavaScript path.
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

/** The jobs run() makes off the event loop (see native/dir-calls.c). */
export type DirJob = 'read' | 'readAt' | 'lstat' | 'list' | 'listAt' | 'sweep' | 'put' | 'replace' | 'putReplace';

/**
 * What one job of run() answers: the fields of its kind (see DirCallsAddon.run),
 * and `failed` when it failed as a whole.
 */
export interface DirJobAnswer {
  /** The job failed as a whole: the errno's name (ENOENT, ENOTDIR...) and node's kind of message. */
  failed?: { code: string; message: string };
  /** read, readAt: five doubles per name (as ReadFilesResult.meta); lstat, list, listAt: mode, size and mtimeMs per name (NaN mode: failed). */
  meta?: ArrayBuffer;
  /** read, readAt: the bytes of the files read. */
  data?: ArrayBuffer;
  /** read, readAt, lstat, list, listAt: [index, code, message]; sweep: [name, code, message]. */
  errors?: [number | string, string, string][];
  /** list, listAt: the entry names, in readdir's order (empty with `more`). */
  names?: string[];
  /** list, listAt: more entries than `max` (nothing stat'ed); sweep: entries left. */
  more?: boolean;
  /** readAt, listAt: the real location of the directory opened. */
  real?: string;
  /** sweep: as SweepResult. */
  files?: string[];
  sizes?: ArrayBuffer;
  dirs?: string[];
  /** replace, putReplace: the size of the regular file the destination held, or -1. */
  replaced?: number;
  /** putReplace: the step that failed. */
  step?: 'put' | 'replace';
}

export interface DirCallsAddon {
  /**
   * One job of system calls made on the addon's I/O thread (sweeps on
   * libuv's pool, so a directory's parts run at once); `callback`
   * gets its answer on the event loop. `dir`: the directory (read, readAt,
   * lstat, list, listAt, sweep) or the file (put, replace, putReplace: the
   * temporary file); `names`: the entries (read, lstat), the names to skip
   * (sweep) or the destination (replace, putReplace: one name); `max`: the
   * largest file read, the entries listed or swept; `flags`: the open flags
   * of reads; `count`, `partK`, `partN`: as sweep(); `data`: put's bytes
   * (held until the callback). Throws a TypeError for bad arguments only:
   * what the system calls answer, the callback gets.
   */
  run(
    op: DirJob,
    dir: string,
    names: readonly string[],
    max: number,
    flags: number,
    count: boolean,
    partK: number,
    partN: number,
    data: ArrayBuffer | null,
    callback: (answer: DirJobAnswer) => void,
  ): void;
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

// What fs-local's batch I/O asks (Message) and what it is answered (Answer), by a worker
// (batch-io-worker.ts) or by a job of @ferry/dir-calls's addon (batch-io-jobs.ts); batch-io.ts
// turns the answers into what its callers get.

/** One file as a read answers it. */
export type WorkerRead =
  /** Read: its bytes are the answer's `data` from `at`, `size` long. */
  | { k: 'read'; at: number; size: number; mtimeMs: number; mode: number }
  /** A regular file larger than asked for (not read). */
  | { k: 'large' }
  /** The call failed with `code` (NOTREG: not a regular file, EISDIR: a directory). */
  | { k: 'error'; code: string; message: string };

/** One entry as an lstat answers it. */
export type WorkerStat = { k: 'stat'; mode: number; size: number; mtimeMs: number } | { k: 'error'; code: string; message: string };

export interface Answer {
  id: number;
  /** read: one per name; lstat: [index, error] of the names that failed; sweep: [name, error]. */
  results: unknown[];
  /** read: the files' bytes; lstat, list: mode, size and mtimeMs of each name (Float64Array). */
  data?: ArrayBuffer;
  /** list: the directory's entry names, in the order read (absent with `more` or `failed`); sweep: the regular files removed. */
  names?: string[];
  /** list: the directory holds more entries than asked for (nothing was stat'ed); sweep: entries are left after this group. */
  more?: boolean;
  /** sweep: the subdirectories met. */
  dirs?: string[];
  /** list, listAt, readAt, sweep: the directory could not be read; put, replace: the call that failed. */
  failed?: { code: string; message: string };
  /** putReplace: which of the two failed. */
  step?: 'put' | 'replace';
  /** replace: the size of the regular file the destination held, or -1 (none, or not a regular file). */
  replaced?: number;
  /** listAt, readAt: the real path of the directory opened (read through its descriptor). */
  real?: string;
}

/** A request to a worker. */
export interface Message {
  op: string;
  dir: string;
  names: readonly string[];
  max?: number;
  flags?: number;
  count?: boolean;
  part?: readonly [number, number];
  /** put: the bytes (transferred, not copied). */
  data?: ArrayBuffer;
}

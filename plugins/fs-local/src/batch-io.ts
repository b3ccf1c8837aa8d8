import { Worker } from 'node:worker_threads';
import { loadAddon } from '@ferry/dir-calls';
import { WORKER_SOURCE } from './batch-io-worker.js';
import { AddonJobsIo } from './batch-io-jobs.js';
import type { Answer, Message, WorkerRead, WorkerStat } from './batch-io-messages.js';

export type { WorkerRead, WorkerStat } from './batch-io-messages.js';
import { READ_FLAGS } from './file-reads.js';

/*
 * System calls on many entries of one directory, made off the event loop in
 * one go: the small files of a zip read (Fs.readSmallFiles), a small
 * directory read and its entries stat'ed (a listing), the entries of a large
 * listing stat'ed, the files of a removed tree counted and unlinked (and a
 * small upload's temporary file written, an upload published with a look at
 * what it replaces). Made one by one with promises, each is a round trip to
 * libuv's thread pool, on a busy machine a thread switch each (a small
 * file read takes five: lstat, open, fstat, read, close): 10,000 files of a
 * few KiB zipped took ten times as long as `zip -r`. Here the calls of a
 * whole group are made at once, off the event loop, which meanwhile does
 * the rest (compresses what came before, sends a listing's page):
 *   - as one job of @ferry/dir-calls's addon on its native I/O thread (one
 *     hand-over each way), where the addon is built (npm ci builds it);
 *   - else by a worker thread (batch-io-worker.ts), synchronously, answering
 *     with one message. A worker costs more: its own JavaScript heap (6-9 MB
 *     of resident memory while it runs, twice that with the second), and
 *     about twice the CPU per request for the message each way (structured
 *     clone, the worker's own event loop): a 4 KiB download through Ferry
 *     spent 8% of the event loop's time posting its one message
 *     (docs/performance-history.md).
 *
 * Every call names one entry of a directory through the directory's
 * descriptor (`/proc/self/fd/N/name`, held by the caller until the answer
 * came: see confine.ts), never a path resolved from the root. Reads open
 * with O_NOFOLLOW and O_NONBLOCK and check with fstat that the entry is a
 * regular file; a link (ELOOP) is not followed: the caller reads it the
 * usual way, which checks where it leads. lstat and unlink act on the entry
 * itself, as their promise versions did.
 */

/** One group of a removed directory's entries as a sweep answers it. */
export interface WorkerSweep {
  /** The regular files removed, with their sizes (only when counted). */
  files: { name: string; size: number }[];
  /** The subdirectories met (not entered). */
  dirs: string[];
  /** The entries that could not be removed, with the error. */
  failed: { name: string; code: string; message: string }[];
  /** More entries are left after this group. */
  more: boolean;
}

/** The worker's heap limits (MB): its young generation is what its garbage costs in resident memory. */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 };

/** The first worker stops after this long without a request (it starts again on the next). */
const IDLE_MS = 10_000;

/**
 * The second worker, started only when requests queue up on the first (a
 * large removal's parts, many small uploads at once), stops after this long
 * without one: a worker holds 7-16 MB, and the bursts that start the
 * second are the moments the process needs memory for other things too.
 */
const SPARE_IDLE_MS = 1_000;

/** Workers of the process: two, so that the two parts of a large removal (or a queue of requests) go at once. */
const WORKERS = 2;

/**
 * Requests in flight on every running worker before the next starts one
 * more (the parts of a sweep start it at once). A zip keeps a few groups of
 * reads and a listing ahead of what it compresses: queued on one worker,
 * they are read a little later (a zip of 10,000 small files took about 4%
 * longer), and the second worker's 7-16 MB stay unspent.
 */
const QUEUED_BEFORE_SPARE = 4;

/**
 * One worker thread (started on first use, stopped when idle; it keeps
 * the process alive only while a request waits: an idle one held every
 * script and test that used it up to its idle time). A worker that fails
 * fails what it was asked, and the next request starts a new one.
 */
class IoThread {
  /**
   * The running worker and the requests it was sent: each worker has its
   * own, so one ending (stopped when idle, or failed) fails only what it
   * was asked, never what its successor already took.
   */
  private current: { worker: Worker; pending: Map<number, { resolve: (a: Answer) => void; reject: (err: Error) => void }> } | undefined;
  private nextId = 1;
  private idle: NodeJS.Timeout | undefined;

  constructor(private readonly idleMs: number) {}

  /** True while its worker thread runs. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** Requests sent and not yet answered. */
  get load(): number {
    return this.current?.pending.size ?? 0;
  }

  ask(message: Message): Promise<Answer> {
    const { worker, pending } = this.start();
    const id = this.nextId++;
    clearTimeout(this.idle);
    this.idle = undefined;
    // a request waiting keeps the process alive, an idle worker does not
    if (pending.size === 0) worker.ref();
    return new Promise<Answer>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...message }, message.data ? [message.data] : []);
    });
  }

  private start(): NonNullable<IoThread['current']> {
    if (this.current) return this.current;
    // a small heap: it holds one group's answer at a time (a worker over its limits stops, and its callers take the usual path)
    // none of the process's node options: module hooks given with --import (a loader, a tracer) would load into its small heap
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      stdout: false,
      stderr: false,
      resourceLimits: WORKER_LIMITS,
    });
    const c: NonNullable<IoThread['current']> = { worker: w, pending: new Map() };
    w.on('message', (a: Answer) => {
      const p = c.pending.get(a.id);
      c.pending.delete(a.id);
      p?.resolve(a);
      if (c.pending.size === 0) {
        w.unref();
        this.stopWhenIdle(c);
      }
    });
    const fail = (err: Error) => {
      if (this.current === c) this.current = undefined;
      for (const p of c.pending.values()) p.reject(err);
      c.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the batch I/O worker stopped (exit ${code})`)));
    this.current = c;
    return c;
  }

  private stopWhenIdle(c: NonNullable<IoThread['current']>): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.current !== c || c.pending.size > 0) return;
      // (its 'exit' comes later: a request sent meanwhile starts the next worker, untouched by it)
      this.current = undefined;
      void c.worker.terminate();
    }, this.idleMs);
    this.idle.unref();
  }
}

/**
 * The batch I/O workers of the process: each request goes to the first
 * running one with fewer than QUEUED_BEFORE_SPARE requests in flight; when
 * every running one has that many, to one more (started for it), else to
 * the one with the fewest. The parts of one job that are meant to run at
 * once (a sweep's) go to the one with the fewest, another being started
 * as soon as each running one has a request.
 *
 * So a second worker only takes what overflows the first, and stops
 * SPARE_IDLE_MS after the burst that needed it, even while the first goes
 * on with requests. Shared by load, it stayed alive as long as requests
 * came (a zip right after a large removal kept the worker the removal had
 * started: its 7-16 MB, and the zip took 10-15% longer with its reads
 * split across two threads competing for two cores with the event loop:
 * docs/performance-history.md).
 */
export class BatchIo {
  private readonly threads: IoThread[];
  /** The addon's jobs on its I/O thread, when it is built and wanted (then no worker ever starts). */
  private readonly pool: AddonJobsIo | null;

  /**
   * `idleMs`: how long the first worker and the others stay without a
   * request; `native`: the requests are jobs of @ferry/dir-calls's addon
   * when it is built (false: the workers' JavaScript, as without the addon).
   */
  constructor(idleMs: readonly [number, number] = [IDLE_MS, SPARE_IDLE_MS], native = true) {
    const addon = native ? loadAddon() : null;
    this.pool = addon ? new AddonJobsIo(addon) : null;
    this.threads = Array.from({ length: WORKERS }, (_, i) => new IoThread(idleMs[i === 0 ? 0 : 1]));
  }

  /** Worker threads running now (none when the addon's jobs take the requests). */
  get running(): number {
    return this.threads.filter((t) => t.running).length;
  }

  /** True when the requests are jobs of the addon. */
  get native(): boolean {
    return this.pool !== null;
  }

  /** How many requests run at once for one job (sweeps split a directory in as many parts). */
  readonly parallelism = WORKERS;

  /** Reads the regular files `names` of the directory at `dir` (a path valid while the caller holds its descriptor), each of at most `max` bytes. */
  async read(dir: string, names: readonly string[], max: number): Promise<{ reads: WorkerRead[]; data: Buffer }> {
    return readsOf(await this.ask({ op: 'read', dir, names, max, flags: READ_FLAGS }));
  }

  /**
   * read() of the directory at the path `dir` (absolute, as the server
   * expects it to be), opened by the worker itself: answered only when the
   * directory really is there (link-free, read through its descriptor while
   * it was open), undefined otherwise and when it cannot be opened (the
   * caller takes its usual path, which gives the precise answer). A file is
   * opened in no other directory.
   */
  async readAt(dir: string, names: readonly string[], max: number): Promise<{ reads: WorkerRead[]; data: Buffer } | undefined> {
    const a = await this.ask({ op: 'readAt', dir, names, max, flags: READ_FLAGS });
    return a.failed || a.real !== dir ? undefined : readsOf(a);
  }

  /** The lstat of the entries `names` of the directory at `dir`. */
  async lstat(dir: string, names: readonly string[]): Promise<WorkerStat[]> {
    return statsOf(names, await this.ask({ op: 'lstat', dir, names }));
  }

  /**
   * The entries of the directory at `dir` with their lstat, read in one
   * request (a small listing costs one message instead of a round trip to
   * the thread pool per entry); undefined when it holds more than `max`
   * entries (the caller reads it in pages). Rejects when it cannot be read.
   */
  async list(dir: string, max: number): Promise<{ names: string[]; stats: WorkerStat[] } | undefined> {
    const a = await this.ask({ op: 'list', dir, names: [], max });
    if (a.failed) throw failure(a.failed);
    if (a.more) return undefined;
    const names = a.names ?? [];
    return { names, stats: statsOf(names, a) };
  }

  /**
   * list() of the directory at the path `dir`, opened by the worker itself
   * (links on the way followed by the kernel), with `real`: where that
   * directory really is, read through its descriptor while it was open. The
   * caller uses the answer only when `real` is inside its root (one message
   * for what took a round trip to the thread pool to open the directory,
   * then the list). Rejects when it cannot be opened or read.
   */
  async listAt(dir: string, max: number): Promise<{ real: string; names: string[]; stats: WorkerStat[] } | undefined> {
    const a = await this.ask({ op: 'listAt', dir, names: [], max });
    if (a.failed) throw failure(a.failed);
    if (a.more || a.real === undefined) return undefined;
    const names = a.names ?? [];
    return { real: a.real, names, stats: statsOf(names, a) };
  }

  /**
   * Removes up to `max` entries of the directory at `dir` that are not in
   * `skip` (a directory met is answered, not removed), each lstat'ed first
   * when `count` (the regular files' sizes are answered). Entries removed
   * are gone, so the next group, skipping the directories and failures of
   * this one, reads on from what is left. With `part` [k, n], only the
   * entries of part k of n (by a hash of the name): n sweeps at once share a
   * directory without meeting. Rejects when it cannot be read.
   */
  async sweep(dir: string, skip: readonly string[], max: number, count: boolean, part?: readonly [number, number]): Promise<WorkerSweep> {
    const a = await this.ask({ op: 'sweep', dir, names: skip, max, count, ...(part ? { part } : {}) }, part !== undefined);
    if (a.failed) throw failure(a.failed);
    const sizes = new Float64Array(a.data ?? new ArrayBuffer(0));
    const names = a.names ?? [];
    if (sizes.length !== names.length) throw new Error('the batch I/O worker answered a sweep of the wrong length');
    return {
      files: names.map((name, i) => ({ name, size: sizes[i]! })),
      dirs: a.dirs ?? [],
      failed: (a.results as [string, { code: string; message: string }][]).map(([name, e]) => ({ name, code: e.code, message: e.message })),
      more: !!a.more,
    };
  }

  /**
   * Creates the file `file` (a path of Ferry's temporary area; never an
   * existing file) with the bytes of `chunks`, and closes it: a small
   * upload's temporary file in one message, for what took three round trips
   * to the thread pool (open, write, close). A file it created is removed
   * again when writing fails. Rejects with the error of the call that failed.
   */
  async put(file: string, chunks: readonly Buffer[]): Promise<void> {
    const a = await this.ask({ op: 'put', dir: file, names: [], data: ownBuffer(chunks) });
    if (a.failed) throw failure(a.failed);
  }

  /**
   * put() of `file` then replace() of `to` by it, in one message: a small
   * upload with nothing to do between the two. Rejects with the error of the
   * call that failed, its `step` telling which ('put': nothing was left;
   * 'replace': the temporary file is there, unpublished).
   */
  async putReplace(file: string, chunks: readonly Buffer[], to: string): Promise<number | undefined> {
    const a = await this.ask({ op: 'putReplace', dir: file, names: [to], data: ownBuffer(chunks) });
    if (a.failed) throw Object.assign(failure(a.failed), { step: a.step });
    return replacedOf(a);
  }

  /**
   * Renames `from` onto `to` (both paths the caller confined) and answers
   * what `to` held just before: the size of a regular file, or undefined
   * (nothing, or no regular file). The look and the rename are one message,
   * so nothing of this process comes in between. Rejects with the error of
   * the call that failed (a failed look renames nothing).
   */
  async replace(from: string, to: string): Promise<number | undefined> {
    const a = await this.ask({ op: 'replace', dir: from, names: [to] });
    if (a.failed) throw failure(a.failed);
    return replacedOf(a);
  }

  /** Sends `message` to a worker (see the class); `spread`: one of several parts of a job to run at once. */
  private ask(message: Message, spread = false): Promise<Answer> {
    if (this.pool) return this.pool.ask(message);
    if (!spread) {
      const free = this.threads.find((t) => t.running && t.load < QUEUED_BEFORE_SPARE);
      if (free) return free.ask(message);
    }
    let best: IoThread | undefined;
    for (const t of this.threads) if (t.running && (best === undefined || t.load < best.load)) best = t;
    if (best === undefined || best.load >= (spread ? 1 : QUEUED_BEFORE_SPARE)) best = this.threads.find((t) => !t.running) ?? best;
    return best!.ask(message);
  }
}

/** The bytes of `chunks` in one buffer of their own, to hand over to the worker or the addon. */
function ownBuffer(chunks: readonly Buffer[]): ArrayBuffer {
  let size = 0;
  for (const c of chunks) size += c.length;
  const data = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const c of chunks) at += c.copy(data, at);
  return data.buffer;
}

/** A read's answer: each name's outcome, and the bytes they point into. */
function readsOf(a: Answer): { reads: WorkerRead[]; data: Buffer } {
  return { reads: a.results as WorkerRead[], data: Buffer.from(a.data ?? new ArrayBuffer(0)) };
}

/** A replace's answer: the size of the regular file the destination held, or undefined. */
function replacedOf(a: Answer): number | undefined {
  return a.replaced !== undefined && a.replaced >= 0 ? a.replaced : undefined;
}

/** The error of a call the worker answered as failed, with its code. */
function failure(f: { code: string; message: string }): Error {
  return Object.assign(new Error(f.message), { code: f.code });
}

/** The lstat answers of `names` (an lstat's or a list's answer: figures in `data`, failures in `results`). */
function statsOf(names: readonly string[], a: Answer): WorkerStat[] {
  const figures = new Float64Array(a.data ?? new ArrayBuffer(0));
  if (figures.length !== names.length * 3) throw new Error('the batch I/O worker answered an lstat of the wrong length');
  const out: WorkerStat[] = names.map((_, i) => ({ k: 'stat', mode: figures[3 * i]!, size: figures[3 * i + 1]!, mtimeMs: figures[3 * i + 2]! }));
  for (const [i, err] of a.results as [number, WorkerStat][]) out[i] = err;
  return out;
}

export const batchIo = new BatchIo();

/** What a listing needs of an entry's lstat (an fs.Stats, or one the worker answered). */
export interface EntryStats {
  readonly mode: number;
  readonly size: number;
  readonly mtime: Date;
  isDirectory(): boolean;
  isFile(): boolean;
  isSymbolicLink(): boolean;
}

const S_IFMT = 0o170000;

/** An lstat the worker answered, as EntryStats. */
export class WorkerEntryStats implements EntryStats {
  readonly mode: number;
  readonly size: number;
  readonly mtime: Date;
  constructor(st: { mode: number; size: number; mtimeMs: number }) {
    this.mode = st.mode;
    this.size = st.size;
    this.mtime = new Date(Math.round(st.mtimeMs)); // as fs.Stats rounds it
  }
  isDirectory(): boolean {
    return (this.mode & S_IFMT) === 0o040000;
  }
  isFile(): boolean {
    return (this.mode & S_IFMT) === 0o100000;
  }
  isSymbolicLink(): boolean {
    return (this.mode & S_IFMT) === 0o120000;
  }
}

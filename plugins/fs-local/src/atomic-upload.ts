// longer than 500 lines: one upload writer is one state machine (held bytes, write queue, temporary file, hooks, publication); its steps read best side by side
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, link, lstat, open, rename, stat, unlink, utimes, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  chunkStored,
  FsError,
  fsErrorFromNode,
  handled,
  hasNodeCode,
  onAbort,
  type PendingUpload,
  type WriteHandle,
  type WriteOptions,
  type WriteResult,
} from '@ferry/core';
import { batchIo } from './batch-io.js';
import { claimHiddenTmp, type HiddenTmp } from './temp-area.js';

/**
 * Turns the bytes a writer sends into the bytes stored, inside the upload
 * writer itself (no extra stream layer): fs-crypt seals 64 KiB records here.
 * `encode` may hold bytes back; `finish` returns whatever is still due when
 * the writer ends (it is called once, even when nothing was written).
 */
export interface WriteEncoder {
  encode(chunk: Buffer): Buffer[];
  finish(): Buffer[];
}

export interface AtomicUploadTarget {
  /** Virtual path, for errors. */
  vpath: string;
  /**
   * The destination, as a path through an open descriptor of its parent
   * directory (`/proc/self/fd/N/name`, see confine.ts): valid until `release`.
   */
  dest: string;
  /** The destination's parent by its real path (see DirHandle.realPath), recorded for crash recovery. */
  destDir?: string;
  /** Called once when the upload is over (published or discarded): closes the parent's descriptor. */
  release?: () => Promise<void>;
  /** Directory for the temporary file (this process's folder in `<dataDir>/uploads-tmp`). */
  tmpDir: string;
  writeBufferSize: number;
  /**
   * The write buffer size is the default, not the operator's: the queue of a
   * long upload may grow to GROWN_WRITE_QUEUE while all uploads together
   * hold less than WRITE_QUEUE_BUDGET (see `queueLimit`).
   */
  adaptiveWrites?: boolean;
  readBufferSize: number;
  /** A stored file's size as usedSpace() counts it (publication reports what it replaced: WriteResult.replaced). */
  reportedSize: (rawSize: number) => number;
  /** Makes the temporary directory again (it was found missing when the temporary file was created): one more try follows. */
  remakeTmpDir?: () => Promise<void>;
}

/**
 * An upload of at most this many stored bytes (and one write buffer) is held
 * until its end, then its temporary file is created, written and closed by
 * the batch I/O worker in one message (batch-io.ts) instead of three round
 * trips to the thread pool; a larger one creates the file once this much is
 * queued and writes as it comes.
 */
export const SMALL_UPLOAD_MAX = 64 * 1024;

/**
 * Adaptive write queues. A write per socket chunk (64 KiB) costs a thread-pool
 * round trip each: an upload whose queue may hold more writes what arrived
 * during the previous write with one writev. 256 KiB queues gave 1.4x the
 * throughput of 64 KiB ones (692 against 477 MB/s for 1 GiB in
 * bench/http-transfer). 1 MiB gives 869 against 636 MB/s (512 MiB, same
 * machine, one after the other) and 1 GiB FTP STORs take 1.1-1.2 s instead
 * of 1.6 (the writev calls alone took 37 us each of the event loop), with the
 * 4 GiB upload's peak RSS at 143 against 140 MB, within the run-to-run noise.
 * Memory stays bounded: an upload grows past the default only while the
 * queues of every upload of the process hold less than the budget, so all of
 * them together hold at most the budget plus one default buffer and one chunk
 * each.
 */
export const GROWN_WRITE_QUEUE = 1024 * 1024;
export const WRITE_QUEUE_BUDGET = 16 * 1024 * 1024;
/** Bytes queued by every upload of the process, not yet written. */
const writeQueues = { total: 0 };
/** Bytes queued by every upload of the process (for tests and metrics). */
export function queuedUploadBytes(): number {
  return writeQueues.total;
}

type Replaced = NonNullable<WriteResult['replaced']>;
const NOTHING: Replaced = { size: 0, existed: false };
/** Filesystems without hard links answer link() with one of these; overwrite:false then falls back to a checked rename. */
const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS'];

type State = 'open' | 'finalizing' | 'published' | 'failed';

/**
 * One upload: bytes go to `<tmpDir>/<uuid>.upload` (created once the first
 * SMALL_UPLOAD_MAX bytes are queued, or at the end); only when the writer ends
 * the stream is the file published (beforePublish, mtime, then an atomic
 * rename onto the destination). A write that fails or is aborted in any way
 * removes its temporary data and never touches the destination.
 *
 * Ownership of the temporary file: while 'open', whoever fails first (a write
 * error, destroy(), abort(), the signal) discards it. While 'finalizing',
 * finalize() owns it: an abort only raises a flag that finalize() checks
 * before each step, up to the rename, which is the commit point.
 *
 * Publication runs in the stream's `_final`, so 'finish' (and a `pipeline`
 * into the stream) completes only once the file is visible; `done` is the
 * authoritative outcome.
 */
export class AtomicUpload {
  readonly handle: WriteHandle;
  private state: State = 'open';
  /** What publication replaced at the destination, looked at just before (reported by `done`). */
  private replaced?: Replaced;
  /** Bytes received from the writer (reported by `done`). */
  private received = 0;
  /** Bytes stored in the temporary file (what beforePublish sees as pending.size). */
  private bytes = 0;
  private abortError?: Error;
  private fh?: FileHandle;
  /** The temporary file exists (created by this upload, or adopted). */
  private created = false;
  /** The hidden copy beside the destination, while a cross-device publication is writing it. */
  private hiddenTmp?: HiddenTmp;
  /** Stored bytes waiting for the pump, and their total (including the batch being written). */
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  /** Sets queuedBytes, keeping the process's total in line. */
  private setQueued(n: number): void {
    writeQueues.total += n - this.queuedBytes;
    this.queuedBytes = n;
  }
  /** How much may be queued before the writer is held back. */
  private queueLimit(): number {
    const base = this.target.writeBufferSize;
    return this.target.adaptiveWrites && writeQueues.total < WRITE_QUEUE_BUDGET ? Math.max(base, GROWN_WRITE_QUEUE) : base;
  }
  /** The pump writing the queue, while it runs. */
  private pumping?: Promise<void>;
  private writeError?: Error;
  /** The writer's callback, held back while the queue is over the buffer size. */
  private waiting?: (err?: Error | null) => void;
  private finalizing?: Promise<void>;
  private discarded?: Promise<void>;
  private settle!: { resolve(r: WriteResult): void; reject(e: unknown): void };
  private readonly stream: Writable;
  private stopListening: () => void = () => undefined;
  private readonly copyAbort = new AbortController();

  private constructor(
    private readonly target: AtomicUploadTarget,
    private readonly opts: WriteOptions,
    private tmp: string,
    private readonly encoder?: WriteEncoder,
  ) {
    const done = handled(
      new Promise<WriteResult>((resolve, reject) => {
        this.settle = { resolve, reject };
      }),
    );
    this.stream = new Writable({
      highWaterMark: target.writeBufferSize,
      write: (chunk: Buffer, _enc, cb) => this.accept(chunk, cb),
      final: (cb) => {
        this.finalizing = this.finalize();
        this.finalizing.then(() => cb(), cb);
      },
      destroy: (err, cb) => {
        // (a published upload's stream is destroyed too, once finished: nothing to do, no error to build)
        this.fail(err ?? undefined).then(() => cb(err));
      },
    });
    // Failures are reported through `done`; a writer that only awaits it must not crash on 'error'.
    this.stream.on('error', () => undefined);
    this.stopListening = onAbort(opts.signal, (reason) => void this.abort(reason));
    this.handle = { stream: this.stream, done, abort: (reason) => this.abort(reason), adopt: (file) => this.adopt(file) };
  }

  /** An upload to `target` (its temporary file is created when the first bytes are stored). */
  static start(target: AtomicUploadTarget, opts: WriteOptions, encoder?: WriteEncoder): AtomicUpload {
    return new AtomicUpload(target, opts, path.join(target.tmpDir, `${randomUUID()}.upload`), encoder);
  }

  /** Runs `make` (which creates the temporary file); once more after remaking the temporary directory when that was missing. */
  private async creating<T>(make: () => Promise<T>): Promise<T> {
    try {
      return await make();
    } catch (err) {
      // (an ENOENT of a putReplace's rename is the destination's, not the temporary directory's)
      if (!hasNodeCode(err, 'ENOENT') || (err as { step?: string }).step === 'replace' || !this.target.remakeTmpDir) throw err;
      await this.target.remakeTmpDir();
      return make();
    }
  }

  /** Creates the temporary file and opens it for the pump. */
  private async createTmp(): Promise<void> {
    this.fh = await this.creating(() => open(this.tmp, 'wx', 0o666));
    this.created = true;
  }

  /** Holds the stored bytes back (no temporary file yet): the upload may end small (see SMALL_UPLOAD_MAX). */
  private holding(): boolean {
    return !this.created && this.queuedBytes < Math.min(SMALL_UPLOAD_MAX, this.target.writeBufferSize);
  }

  /** WriteHandle.abort(): cancels the upload unless it is already published. */
  async abort(reason?: unknown): Promise<void> {
    if (this.state === 'open') {
      const err = FsError.aborted(this.target.vpath);
      if (reason !== undefined) Object.defineProperty(err, 'cause', { value: reason, configurable: true });
      this.stream.destroy(err);
      await this.fail(err);
    } else if (this.state === 'finalizing') {
      await this.fail(FsError.aborted(this.target.vpath));
    }
    await this.discarded;
  }

  /**
   * WriteHandle.adopt(): `file` (a completed resumable upload of the same
   * server) becomes the temporary file, with the mode a new one gets, so
   * publication renames it into place rather than the bytes being copied
   * (a file on another device than the temp area stays where it is and
   * becomes the temporary file there; publish() copies it once if the
   * destination is on another device still). Only while nothing was written, and never with an encoder: the
   * stored bytes would have to be the encoded ones.
   */
  private async adopt(file: string): Promise<boolean> {
    if (this.state !== 'open' || this.encoder || this.received > 0) return false;
    if (!this.fh) await this.createTmp().catch((err: unknown) => Promise.reject(this.mapped(err)));
    const fh = this.fh;
    if (!fh || this.state !== 'open') return false;
    const [own, theirs] = await Promise.all([fh.stat(), stat(file)]);
    if (!theirs.isFile() || this.state !== 'open' || this.received > 0) return false;
    await chmod(file, own.mode & 0o777);
    try {
      // onto the empty temporary file (its descriptor stays open until finalize() or discard() closes it)
      await rename(file, this.tmp);
    } catch (err) {
      if (!hasNodeCode(err, 'EXDEV')) throw this.mapped(err);
      // on another device: it stays where it is, publish() copies it once
      const empty = this.tmp;
      this.tmp = file;
      await unlink(empty).catch(() => undefined);
    }
    this.received = theirs.size;
    this.bytes = theirs.size;
    return true;
  }

  private mapped(err: unknown): Error {
    return fsErrorFromNode(err, this.target.vpath);
  }

  /**
   * Takes one chunk from the writer: encodes it at once (CPU) and queues the
   * stored bytes for the pump (I/O), so the next chunk is encoded while the
   * previous batch is being written. The writer's callback is held back only
   * while more than the buffer size is queued.
   */
  private accept(chunk: Buffer, cb: (err?: Error | null) => void): void {
    if (this.state !== 'open') return cb(this.abortError ?? FsError.aborted(this.target.vpath));
    if (this.writeError) return cb(this.writeError);
    let stored: Buffer[];
    try {
      stored = this.encoder ? this.encoder.encode(chunk) : [chunk];
    } catch (err) {
      return cb(err as Error);
    }
    this.received += chunk.length;
    this.enqueue(stored);
    if (this.queuedBytes < this.queueLimit()) cb();
    else this.waiting = cb;
  }

  private enqueue(stored: Buffer[]): void {
    for (const b of stored) {
      if (b.length === 0) continue;
      this.queue.push(b);
      this.setQueued(this.queuedBytes + b.length);
    }
    // (an encoder may return nothing for a chunk: no pump is needed then; a small upload's bytes wait)
    if (!this.pumping && this.queue.length > 0 && !this.holding()) this.pumping = this.pump();
  }

  /** Writes whatever is queued, one writev per batch, until the queue is empty. */
  private async pump(): Promise<void> {
    // The caller stores this promise in `pumping` once pump() returns, and the `finally` below
    // clears it: yield first, so the clearing can never come before the storing (a pump that
    // ended synchronously left a settled promise in `pumping` for good: no pump ever started
    // again, the stored bytes stayed queued, the writer was held back and drained() spun).
    await Promise.resolve();
    try {
      if (!this.created && this.state !== 'failed') await this.createTmp();
      while (this.queue.length > 0 && this.state !== 'failed') {
        const batch = this.queue;
        this.queue = [];
        let size = 0;
        for (const b of batch) size += b.length;
        await this.store(batch);
        // written: a front-end's lent read buffer is read into again (the SDK's leaseUploadBuffers; an encoder's output is its own)
        if (!this.encoder) for (const b of batch) chunkStored(b);
        this.setQueued(this.queuedBytes - size);
        const cb = this.waiting;
        if (cb && this.queuedBytes < this.queueLimit()) {
          this.waiting = undefined;
          cb();
        }
      }
    } catch (err) {
      this.writeError = this.mapped(err);
      const cb = this.waiting;
      this.waiting = undefined;
      if (cb) cb(this.writeError);
      else this.stream.destroy(this.writeError);
    } finally {
      this.pumping = undefined;
    }
  }

  /** Resolves once everything queued is written; rejects if a write failed. */
  private async drained(): Promise<void> {
    while (this.pumping) await this.pumping;
    if (this.writeError) throw this.writeError;
  }

  /** Writes stored bytes to the temporary file, looping over short writes. */
  private async store(chunks: Buffer[]): Promise<void> {
    if (!this.fh) throw this.abortError ?? FsError.aborted(this.target.vpath);
    let pending = chunks;
    while (pending.length) {
      const { bytesWritten } = await this.fh.writev(pending);
      this.bytes += bytesWritten;
      let skip = bytesWritten;
      let i = 0;
      while (i < pending.length && skip >= pending[i]!.length) skip -= pending[i++]!.length;
      pending = pending.slice(i);
      if (skip > 0) pending[0] = pending[0]!.subarray(skip);
    }
  }

  /** A failure reported from outside (destroy, abort, signal); undefined: aborted. */
  private fail(err: unknown): Promise<void> {
    if (this.state === 'finalizing') {
      this.abortError ??= err instanceof Error ? err : FsError.aborted(this.target.vpath);
      this.copyAbort.abort();
      return (this.finalizing ?? Promise.resolve()).then(
        () => undefined,
        () => undefined,
      );
    }
    if (this.state === 'published') return Promise.resolve();
    return this.discard(err ?? FsError.aborted(this.target.vpath));
  }

  /** Rejects `done` and removes the temporary data (idempotent). */
  private discard(err: unknown): Promise<void> {
    this.discarded ??= (async () => {
      this.state = 'failed';
      this.stopListening();
      this.settle.reject(err);
      this.queue = [];
      const cb = this.waiting;
      this.waiting = undefined;
      cb?.(err instanceof Error ? err : FsError.aborted(this.target.vpath));
      while (this.pumping) await this.pumping;
      this.setQueued(0);
      await this.fh?.close().catch(() => undefined);
      this.fh = undefined;
      if (this.created) await unlink(this.tmp).catch(() => undefined);
      if (this.hiddenTmp) {
        await unlink(this.hiddenTmp.path).catch(() => undefined);
        this.hiddenTmp.release();
        this.hiddenTmp = undefined;
      }
      await this.target.release?.();
    })();
    return this.discarded;
  }

  private checkAborted(): void {
    if (this.abortError) throw this.abortError;
  }

  private async finalize(): Promise<void> {
    if (this.state !== 'open') throw this.abortError ?? FsError.aborted(this.target.vpath);
    this.state = 'finalizing';
    try {
      await this.drained();
      if (this.encoder) {
        this.enqueue(this.encoder.finish());
        await this.drained();
      }
      if (this.created) {
        const fh = this.fh!;
        this.fh = undefined;
        await fh.close().catch((err: unknown) => {
          throw this.mapped(err);
        });
      } else {
        // a small upload: its bytes stay held until publication, which puts and renames them in one message
        for (const c of this.queue) this.bytes += c.length;
      }
      this.checkAborted();
      // The hook's own error is passed on untouched: `done` rejects with exactly what it threw.
      if (this.opts.beforePublish) await this.opts.beforePublish(this.pending());
      this.checkAborted();
      if (this.opts.mtime) {
        if (!this.created) await this.putSmall();
        await utimes(this.tmp, this.opts.mtime, this.opts.mtime).catch((e: unknown) => {
          throw this.mapped(e);
        });
      }
      this.checkAborted();
      await this.publish();
    } catch (err) {
      const e = this.abortError ?? err;
      await this.discard(e);
      throw e;
    }
    this.state = 'published';
    this.stopListening();
    await this.target.release?.();
    this.settle.resolve(this.replaced ? { size: this.received, replaced: this.replaced } : { size: this.received });
  }

  /** A small upload's held bytes into its temporary file, created, written and closed in one message to the batch I/O worker. */
  private async putSmall(): Promise<void> {
    const chunks = this.queue;
    this.queue = [];
    // (set first: whatever a failed message left behind, discard() removes)
    this.created = true;
    await this.creating(() => batchIo.put(this.tmp, chunks)).catch((err: unknown) => Promise.reject(this.mapped(err)));
    this.setQueued(0);
  }

  /** putSmall() and the rename onto `dest` in one message. */
  private async putPlaced(dest: string): Promise<void> {
    const chunks = this.queue;
    this.queue = [];
    this.created = true;
    const size = await this.creating(() => batchIo.putReplace(this.tmp, chunks, dest));
    this.setQueued(0);
    this.replaced = this.replacedOf(size);
  }

  /** What a rename replaced: the size of the regular file the worker found there (stored bytes), or nothing. */
  private replacedOf(size: number | undefined): Replaced {
    return size === undefined ? NOTHING : { size: this.target.reportedSize(size), existed: true };
  }

  private pending(): PendingUpload {
    const { tmp } = this;
    if (!this.created) {
      // held, not yet in a file: read from memory
      const held = [...this.queue];
      return { size: this.bytes, openRead: async () => Readable.from(held, { objectMode: false }) };
    }
    const highWaterMark = this.target.readBufferSize;
    return { size: this.bytes, openRead: async () => createReadStream(tmp, { highWaterMark }) };
  }

  /** Moves the temporary file onto the destination: the only step that makes anything visible. */
  private async publish(): Promise<void> {
    const { dest } = this.target;
    // a small upload still held is put and renamed in one message, unless it must not replace (link() below)
    if (!this.created && this.opts.overwrite === false) await this.putSmall();
    try {
      if (this.created) await this.place(this.tmp, dest);
      else await this.putPlaced(dest);
      return;
    } catch (err) {
      if (!hasNodeCode(err, 'EXDEV')) throw this.mapped(err);
    }
    // The temp area is on another device: copy into a hidden file beside the
    // destination, then rename that (same device, so still atomic). A crash
    // during the copy leaves the hidden file behind: listings and quota scans
    // skip it; it is recorded in the temp area, so a restart removes it at
    // once (LocalFs also sweeps unrecorded ones later, see temp-area.ts).
    const hidden = claimHiddenTmp(path.dirname(dest));
    this.hiddenTmp = hidden;
    try {
      if (this.target.destDir) await hidden.record(this.target.tmpDir, this.target.destDir);
      await pipeline(
        createReadStream(this.tmp, { highWaterMark: this.target.readBufferSize }),
        createWriteStream(hidden.path, { flags: 'wx', mode: 0o666, highWaterMark: this.target.writeBufferSize }),
        { signal: this.copyAbort.signal },
      );
      this.checkAborted();
      if (this.opts.mtime) await utimes(hidden.path, this.opts.mtime, this.opts.mtime);
      await this.place(hidden.path, dest);
    } catch (err) {
      throw this.mapped(err);
    }
    this.hiddenTmp = undefined;
    hidden.release();
    await unlink(this.tmp).catch(() => undefined);
  }

  /** A rename that looks at what it replaces (one batch I/O message), or link()+unlink() when overwrite is false (nothing replaced). */
  private async place(from: string, to: string): Promise<void> {
    if (this.opts.overwrite !== false) {
      this.replaced = this.replacedOf(await batchIo.replace(from, to));
      return;
    }
    this.replaced = NOTHING;
    try {
      await link(from, to);
    } catch (err) {
      if (hasNodeCode(err, 'EEXIST')) throw FsError.exists(this.target.vpath, err);
      if (!hasNodeCode(err, ...NO_HARD_LINKS)) throw err;
      // No hard links here: a checked rename (a narrow race with a concurrent writer remains).
      const exists = await lstat(to).then(
        () => true,
        () => false,
      );
      if (exists) throw FsError.exists(this.target.vpath);
      await rename(from, to);
      return;
    }
    await unlink(from).catch(() => undefined);
  }
}

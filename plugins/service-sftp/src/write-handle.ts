import type { Readable, Writable } from 'node:stream';
import type { FileSession, SessionWrite, UploadBuffers } from '@ferry/core';
import { STATUS, SftpStatusError } from './status.js';

/**
 * Bytes a file being written may hold ahead of its backend (gathered, out
 * of order, or queued in the session's write): below it a WRITE is
 * acknowledged as soon as it is taken; above it, once the backend caught up.
 */
export const WRITE_AHEAD = 4 * 1024 * 1024;
/** WRITEs are gathered into writes of the session of about this size. */
export const GATHER_SIZE = 256 * 1024;
/** A WRITE at least this large, with nothing gathered before it, goes to the backend as it is (no copy). */
const DIRECT_SIZE = 64 * 1024;
/** Gathered bytes go to the backend after this long without a WRITE (a client that keeps its handle open). */
const IDLE_FLUSH_MS = 20;

/** WRITE data in a pooled buffer (write-packets.ts), and the lease the buffer goes back to. */
const pooled = new WeakMap<Buffer, UploadBuffers>();

/** `data`, a WRITE's data, is a view of a buffer of `lease`: lent to the storage writer when written as it is, else given back once copied or dropped. */
export function pooledWrite(data: Buffer, lease: UploadBuffers): void {
  pooled.set(data, lease);
}

/** `data` is about to be written to the session's upload as it is: a pooled buffer comes back once the storage wrote it (the SDK's chunkStored). */
function lend(data: Buffer): void {
  const lease = pooled.get(data);
  if (!lease) return;
  pooled.delete(data);
  lease.lend(data);
}

/** `data`'s bytes were copied elsewhere or dropped: a pooled buffer is read into again. */
function giveBack(data: Buffer): void {
  const lease = pooled.get(data);
  if (!lease) return;
  pooled.delete(data);
  lease.giveBack(data);
}

/** How a file opened for writing is written. */
export type WriteMode =
  /** A new file or a truncated one: one upload, begun at OPEN. */
  | { kind: 'upload' }
  /** An existing file without TRUNC: a write at the offset of the first WRITE (resume), or at its end for APPEND. */
  | { kind: 'offset'; size: number; append: boolean };

/**
 * A file opened for writing: sequential WRITEs gathered into large writes of
 * one session write, each acknowledged once taken (WRITE_AHEAD bounds what
 * is held). SFTP's meaning is kept: a failure of the backend (quota, I/O,
 * refusal) answers the next WRITE and the CLOSE, and CLOSE answers once the
 * file is committed, so every error reaches the client at the latest then.
 * The upload's quota and transfer counters are stored with those of the
 * session's next uploads (SessionWriteOptions.deferCounters): a `put -r`
 * pays one database commit per 100 ms, not one per file.
 *
 * WRITEs that arrive out of order within WRITE_AHEAD of the next expected
 * offset are held until the bytes before them came (a gap still open at
 * CLOSE is an OP_UNSUPPORTED failure). Elsewhere: a write at an offset (an
 * existing file opened without TRUNC) commits what was written and goes on
 * at the new offset, anywhere up to the end of the file; a new upload
 * refuses it (OP_UNSUPPORTED) and leaves nothing.
 */
export class WriteHandle {
  readonly kind = 'write';
  private write: SessionWrite | null = null;
  /** The offset the next gathered byte belongs at. */
  private next = 0;
  /** The size of the file the current session write is writing onto (offset mode: grows with each committed write). */
  private base: number;
  private gathered: Buffer[] = [];
  private gatheredBytes = 0;
  /** WRITEs that came before the bytes in front of them, by offset. */
  private readonly ahead = new Map<number, Buffer>();
  private aheadBytes = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The first failure: every later WRITE and the CLOSE answer it. */
  private error: unknown = null;
  /** A modification time set while writing: applied once the file is committed. */
  mtime: Date | null = null;
  /** Resolves on the first failure (a WRITE waiting for the upload to drain stops waiting). */
  private readonly failed: Promise<void>;
  private signalFailed!: () => void;

  constructor(
    private readonly session: FileSession,
    readonly path: string,
    private readonly mode: WriteMode,
  ) {
    this.failed = new Promise((resolve) => (this.signalFailed = resolve));
    this.base = mode.kind === 'offset' ? mode.size : 0;
  }

  /** `early`: answered before the storage is asked where the session allows it (SessionWriteOptions.early). */
  async open(early = false): Promise<void> {
    if (this.mode.kind === 'upload') this.begin(await this.session.openWrite(this.path, { deferCounters: true, early }));
  }

  /** The size the file has with what was written so far (FSTAT of a file being written). */
  get size(): number {
    let end = this.write === null ? this.base : Math.max(this.next, this.mode.kind === 'offset' ? this.base : 0);
    for (const [offset, data] of this.ahead) end = Math.max(end, offset + data.length);
    return end;
  }

  async writeAt(offset: number, data: Buffer): Promise<void> {
    if (this.error) throw this.error;
    const mode = this.mode;
    if (mode.kind === 'offset') {
      if (mode.append) offset = this.write === null ? this.base : this.next;
      if (this.write !== null && !this.fits(offset, data.length)) {
        // elsewhere in the file: what was written so far is committed first
        await this.commit();
      }
      if (this.write === null) {
        if (offset > this.base) throw new SftpStatusError(STATUS.OP_UNSUPPORTED, `cannot write at ${offset}, past the end of the file (${this.base} bytes)`);
        this.begin(await this.session.openWrite(this.path, { offset, deferCounters: true }));
        this.next = offset;
      }
    } else if (!this.fits(offset, data.length)) {
      this.fail(new SftpStatusError(STATUS.OP_UNSUPPORTED, `write at offset ${offset} where ${this.next} was expected: only sequential writes are supported`));
      throw this.error;
    }
    if (data.length === 0) return;
    if (offset === this.next) {
      this.take(data);
      // the WRITEs that came early and follow on now
      for (let early = this.ahead.get(this.next); early; early = this.ahead.get(this.next)) {
        this.ahead.delete(this.next);
        this.aheadBytes -= early.length;
        this.take(early);
      }
    } else {
      this.ahead.set(offset, data);
      this.aheadBytes += data.length;
    }
    this.scheduleFlush();
    await this.room();
    if (this.error) throw this.error;
  }

  /** True when a WRITE at `offset` of `length` bytes can be taken in order or held until the bytes before it come. */
  private fits(offset: number, length: number): boolean {
    if (offset === this.next) return true;
    if (offset < this.next || offset + length - this.next > WRITE_AHEAD - this.gatheredBytes) return false;
    // a write at an offset jumping ahead within the file: no gap, the bytes between stay as they are
    if (this.mode.kind === 'offset' && offset <= this.base) return false;
    // no overlap with a WRITE held already
    for (const [at, held] of this.ahead) if (offset < at + held.length && at < offset + length) return false;
    return true;
  }

  /** Gathers bytes at `next`; hands them to the session's write once there are enough. */
  private take(data: Buffer): void {
    this.next += data.length;
    if (this.error || !this.write) return giveBack(data);
    if (this.gatheredBytes === 0 && data.length >= DIRECT_SIZE) {
      lend(data);
      return void this.write.stream.write(data);
    }
    this.gathered.push(data);
    this.gatheredBytes += data.length;
    if (this.gatheredBytes >= GATHER_SIZE) this.handOver();
  }

  /** Hands the gathered bytes to the session's write. */
  private handOver(): void {
    if (this.gatheredBytes === 0) return;
    const gathered = this.gathered;
    // one piece goes as it is; several are copied into one, and their pooled buffers go back at once
    const data = gathered.length === 1 ? gathered[0]! : Buffer.concat(gathered, this.gatheredBytes);
    if (gathered.length > 1) for (const piece of gathered) giveBack(piece);
    this.gathered = [];
    this.gatheredBytes = 0;
    if (this.error || !this.write) return giveBack(data);
    lend(data);
    this.write.stream.write(data);
  }

  private scheduleFlush(): void {
    if (this.gatheredBytes === 0 || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.handOver();
    }, IDLE_FLUSH_MS);
    this.idleTimer.unref();
  }

  private clearTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /**
   * Waits while more than WRITE_AHEAD bytes are held ahead of the backend
   * (or until the write failed). What is gathered or held out of order is
   * bounded by fits(); the rest is queued in the session's write.
   */
  private async room(): Promise<void> {
    for (let w = this.write; !this.error && w && w.stream.writableNeedDrain && this.held() > WRITE_AHEAD; w = this.write) {
      await drained(w.stream, this.failed);
    }
  }

  private held(): number {
    return this.gatheredBytes + this.aheadBytes + (this.write?.stream.writableLength ?? 0);
  }

  /** Commits the current session write (offset mode, before writing elsewhere), or throws its failure. */
  private async commit(): Promise<void> {
    this.clearTimer();
    const write = this.write;
    if (!write) return;
    if (this.ahead.size > 0) this.fail(this.gap());
    this.handOver();
    if (this.error) throw this.error;
    this.write = null;
    write.stream.end();
    await write.done.catch((err: unknown) => {
      this.fail(err);
      throw err;
    });
    this.base = Math.max(this.base, this.next);
  }

  /** Commits the write (or undoes it after a failure) and rethrows the failure. */
  async close(): Promise<void> {
    this.clearTimer();
    const write = this.write;
    if (!write) {
      if (this.error) throw this.error;
      return;
    }
    if (this.ahead.size > 0) this.fail(this.gap());
    this.handOver();
    this.write = null;
    if (this.error) {
      write.abort(this.error);
      await write.done.catch(() => undefined);
      throw this.error;
    }
    write.stream.end();
    await write.done;
    if (this.mtime) await this.session.setMtime(this.path, this.mtime).catch(() => undefined);
  }

  /**
   * fsync@openssh.com: resolves once every byte of the WRITEs taken so far
   * in order has been handed to the session's upload (counted by the
   * transfer and the quota, on its way to the backend), or rethrows the
   * failure. The file itself is published at CLOSE, as always.
   */
  async flush(): Promise<void> {
    if (this.error) throw this.error;
    this.clearTimer();
    this.handOver();
    const stream = this.write?.stream;
    if (stream) await handedOver(stream, this.failed);
    if (this.error) throw this.error;
  }

  /** A new upload with nothing written yet: copy-data may fill it by a copy instead. */
  get untouched(): boolean {
    return this.mode.kind === 'upload' && this.write !== null && this.next === 0 && this.ahead.size === 0 && this.error === null;
  }

  /** Drops the upload begun at OPEN (nothing of it is left) and waits until it is over. */
  async discard(): Promise<void> {
    this.clearTimer();
    const write = this.write;
    this.write = null;
    if (!write) return;
    write.abort(new Error('replaced by a copy'));
    await write.done.catch(() => undefined);
  }

  /** The client went away: a whole upload leaves nothing. */
  abort(): void {
    this.clearTimer();
    const write = this.write;
    this.write = null;
    this.dropHeld();
    write?.abort(new Error('the client closed the channel'));
  }

  private gap(): SftpStatusError {
    const first = Math.min(...this.ahead.keys());
    return new SftpStatusError(STATUS.OP_UNSUPPORTED, `the bytes from ${this.next} to ${first} were never written: only sequential writes are supported`);
  }

  private begin(write: SessionWrite): void {
    this.write = write;
    write.stream.on('error', (err: unknown) => this.fail(err));
    write.done.catch((err: unknown) => this.fail(err));
  }

  private fail(err: unknown): void {
    if (this.error) return;
    this.error = err;
    this.signalFailed();
    this.dropHeld();
    this.write?.abort(err);
  }

  /** What is gathered or held out of order is dropped (its pooled buffers given back). */
  private dropHeld(): void {
    for (const piece of this.gathered) giveBack(piece);
    for (const piece of this.ahead.values()) giveBack(piece);
    this.gathered = [];
    this.gatheredBytes = 0;
    this.ahead.clear();
    this.aheadBytes = 0;
  }
}

/** Resolves once `stream` drained, failed or closed, or `failed` resolved. */
function drained(stream: Writable, failed: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    if (!stream.writableNeedDrain) return done();
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
    void failed.then(done);
  });
}

/** Bytes a stream still holds: its writable side's, and its readable side's for a duplex (the session's PassThrough). */
const readSide = (stream: Writable) => stream as unknown as Partial<Pick<Readable, 'readableLength' | 'readableFlowing'>>;
const heldBy = (stream: Writable) => stream.writableLength + (readSide(stream).readableLength ?? 0);

/** Resolves once `stream` holds no byte (its consumer took them all), failed or closed, or `failed` resolved. */
function handedOver(stream: Writable, failed: Promise<void>): Promise<void> {
  if (heldBy(stream) === 0 || stream.destroyed) return Promise.resolve();
  // a 'data' listener on a stream nobody reads yet would start it: then only the other events tell
  const readable = 'readableFlowing' in stream && readSide(stream).readableFlowing !== null;
  return new Promise((resolve) => {
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      if (readable) stream.off('data', check);
      stream.off('drain', check);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    // 'data' (after the consumer's own listener took the chunk) and 'drain' say bytes moved on
    function check() {
      if (heldBy(stream) === 0) done();
    }
    if (readable) stream.on('data', check);
    stream.on('drain', check);
    stream.on('error', done);
    stream.on('close', done);
    void failed.then(done);
  });
}

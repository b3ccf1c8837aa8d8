import { Readable, Writable } from 'node:stream';
import type { SFTPWrapper } from 'ssh2';
import { mapSftpError } from './sftp-errors.js';

/**
 * ssh2's own SFTP streams keep a single request in flight, so on anything but
 * a zero-latency link they wait one round trip per 64 KB. These keep a window
 * of requests in flight instead (as `fastGet`/`fastPut` do for local files).
 */
export interface TransferTuning {
  /** Bytes per READ/WRITE request. */
  chunkSize: number;
  /** Bytes kept in flight. */
  window: number;
  /** Read requests in flight at most (1 = strictly sequential reads). */
  readConcurrency: number;
}

interface Slot {
  pos: number;
  len: number;
  got: number;
  parts: Buffer[];
  done: boolean;
  eof: boolean;
  err?: Error;
}

export interface ReaderOptions {
  /** First byte. */
  start: number;
  /** Last byte, inclusive (Infinity: to the end of the file). */
  end: number;
  /** Called once, when the stream is destroyed (after the handle is closed). */
  onClose: () => void;
}

/** Reads [start, end] of an open remote file with pipelined READ requests, in order. */
export class SftpReader extends Readable {
  private next: number;
  private slots: Slot[] = [];
  private wanted = false;
  private finished = false;

  constructor(
    private readonly sftp: SFTPWrapper,
    private readonly handle: Buffer,
    private readonly path: string,
    private readonly tuning: TransferTuning,
    private readonly o: ReaderOptions,
  ) {
    super({ highWaterMark: tuning.chunkSize * 4 });
    this.next = o.start;
  }

  override _read(): void {
    this.wanted = true;
    this.pump();
  }

  /**
   * Hands completed requests to the consumer in file order while it wants
   * data, and keeps up to `window` bytes of requests in flight. Completed
   * requests wait in `slots` while the consumer is slow, so memory stays
   * bounded by window + highWaterMark.
   */
  private pump(): void {
    while (this.wanted && this.slots.length > 0 && this.slots[0]!.done && !this.finished) {
      const slot = this.slots.shift()!;
      if (slot.err) {
        this.destroy(slot.err);
        return;
      }
      const data = slot.parts.length === 1 ? slot.parts[0]! : Buffer.concat(slot.parts);
      if (data.length > 0 && !this.push(data)) this.wanted = false;
      if (slot.eof) this.finish();
    }
    if (this.finished) return;
    if (this.next > this.o.end && this.slots.length === 0) return this.finish();
    const maxSlots = Math.max(1, Math.min(this.tuning.readConcurrency, Math.floor(this.tuning.window / this.tuning.chunkSize)));
    while (this.next <= this.o.end && this.slots.length < maxSlots) {
      const len = Math.min(this.tuning.chunkSize, this.o.end - this.next + 1);
      const slot: Slot = { pos: this.next, len, got: 0, parts: [], done: false, eof: false };
      this.next += len;
      this.slots.push(slot);
      this.request(slot);
    }
  }

  private finish(): void {
    this.finished = true;
    this.slots = [];
    this.push(null);
  }

  private request(slot: Slot): void {
    const want = slot.len - slot.got;
    const buf = Buffer.allocUnsafe(want);
    try {
      if (!channelOpen(this.sftp)) throw channelClosedError();
      this.sftp.read(this.handle, buf, 0, want, slot.pos + slot.got, (err, nb) => {
        if (this.destroyed || this.finished) return;
        if (err) {
          slot.err = mapSftpError(err, 'read', this.path);
          slot.done = true;
        } else if (!nb) {
          slot.eof = true; // a short read followed by nothing: end of file
          slot.done = true;
        } else {
          slot.parts.push(nb === want ? buf : buf.subarray(0, nb));
          slot.got += nb;
          if (slot.got < slot.len) return this.request(slot);
          slot.done = true;
        }
        this.pump();
      });
    } catch (err) {
      slot.err = mapSftpError(err, 'read', this.path);
      slot.done = true;
      queueMicrotask(() => this.pump());
    }
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.finished = true;
    closeHandle(this.sftp, this.handle).finally(() => {
      this.o.onClose();
      cb(err);
    });
  }
}

/**
 * Writes sequentially to an open remote file, keeping up to `window` bytes of
 * WRITE requests in flight. `bytes` counts acknowledged bytes; the stream
 * finishes only once every request is acknowledged, and fails with the first
 * failed request.
 */
export class SftpWriter extends Writable {
  bytes = 0;
  private pos = 0;
  private inflight = 0;
  private failure: Error | undefined;
  private waiting: ((err?: Error | null) => void) | undefined;
  private flushing: ((err?: Error | null) => void) | undefined;

  constructor(
    private readonly sftp: SFTPWrapper,
    private readonly handle: Buffer,
    private readonly path: string,
    private readonly tuning: TransferTuning,
    /** Where the first byte goes in the remote file (a write at an offset: Fs.writeAt). */
    start = 0,
  ) {
    super({ highWaterMark: tuning.chunkSize });
    this.pos = start;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.failure) return cb(this.failure);
    for (let off = 0; off < chunk.length; off += this.tuning.chunkSize) {
      this.send(chunk.subarray(off, off + this.tuning.chunkSize));
      if (this.failure) return cb(this.failure);
    }
    if (this.inflight < this.tuning.window) cb();
    else this.waiting = cb;
  }

  private send(piece: Buffer): void {
    const pos = this.pos;
    this.pos += piece.length;
    this.inflight += piece.length;
    try {
      if (!channelOpen(this.sftp)) throw channelClosedError();
      this.sftp.write(this.handle, piece, 0, piece.length, pos, (err) => {
        this.inflight -= piece.length;
        if (err) this.failure ??= mapSftpError(err, 'write', this.path);
        else this.bytes += piece.length;
        this.wake();
      });
    } catch (err) {
      this.inflight -= piece.length;
      this.failure ??= mapSftpError(err, 'write', this.path);
    }
  }

  private wake(): void {
    if (this.waiting && (this.failure || this.inflight < this.tuning.window)) {
      const cb = this.waiting;
      this.waiting = undefined;
      cb(this.failure);
    }
    if (this.flushing && (this.failure || this.inflight === 0)) {
      const cb = this.flushing;
      this.flushing = undefined;
      cb(this.failure);
    }
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.failure || this.inflight === 0) return cb(this.failure);
    this.flushing = cb;
  }
}

/**
 * False once the SFTP channel is closed: ssh2 then queues new requests
 * forever instead of failing them, so callers check before sending.
 */
export function channelOpen(sftp: SFTPWrapper): boolean {
  const state = (sftp as unknown as { outgoing?: { state?: string } }).outgoing?.state;
  return state === undefined || state === 'open';
}

/** Fails like ssh2 does for requests cut off by a dropped connection. */
export function channelClosedError(): Error {
  return new Error('No response from server (SFTP channel closed)');
}

/** Closes a remote handle, ignoring errors (the connection may be gone). */
export function closeHandle(sftp: SFTPWrapper, handle: Buffer): Promise<void> {
  if (!channelOpen(sftp)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 10_000);
    try {
      sftp.close(handle, () => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

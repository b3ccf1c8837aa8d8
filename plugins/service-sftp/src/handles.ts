import type { Readable, Writable } from 'node:stream';
import type { FileInfo, FileSession, SessionRead, SessionWrite } from '@ferry/core';
import type { CopiedHandle } from './copied-handle.js';
import { STATUS, SftpStatusError } from './status.js';

/** Largest READ answered at once (OpenSSH's own limit: 256 KiB packets). */
export const MAX_READ = 255 * 1024;

/**
 * A file opened for reading: one download of the session at a time, read
 * in order; a READ at another offset than the next one reopens it with a
 * range (random access).
 */
export class ReadHandle {
  readonly kind = 'read';
  private read: SessionRead | null = null;
  private chunks: AsyncIterator<Buffer> | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private pos = 0;
  private ended = false;

  constructor(
    private readonly session: FileSession,
    readonly path: string,
    readonly info: FileInfo,
  ) {}

  /** Opens the download from the start (checks the permissions and that the file exists). */
  async open(): Promise<void> {
    await this.reopen(0);
  }

  /** Up to `length` bytes from `offset`, or null at the end of the file. */
  async readAt(offset: number, length: number): Promise<Buffer | null> {
    if (offset !== this.pos || this.read === null) {
      if (offset >= this.info.size) return null;
      await this.reopen(offset);
    }
    const want = Math.min(length, MAX_READ);
    while (this.pendingBytes < want && !this.ended) {
      const next = await this.chunks!.next();
      if (next.done) this.ended = true;
      else {
        this.pending.push(next.value);
        this.pendingBytes += next.value.length;
      }
    }
    if (this.pendingBytes === 0) return null;
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    const out = all.subarray(0, want);
    const rest = all.subarray(out.length);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    this.pos += out.length;
    return out;
  }

  private async reopen(offset: number): Promise<void> {
    await this.close();
    this.read = await this.session.openRead(this.path, offset > 0 ? { start: offset } : {});
    this.chunks = (this.read.stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    this.pos = offset;
    this.ended = false;
  }

  async close(): Promise<void> {
    const read = this.read;
    this.read = null;
    this.chunks = null;
    this.pending = [];
    this.pendingBytes = 0;
    if (!read) return;
    read.stream.destroy();
    await read.done;
  }
}

/** How a file opened for writing is written. */
export type WriteMode =
  /** A new file or a truncated one: one upload, begun at OPEN. */
  | { kind: 'upload' }
  /** An existing file without TRUNC: a write at the offset of the first WRITE (resume), or at its end for APPEND. */
  | { kind: 'offset'; size: number; append: boolean };

/**
 * A file opened for writing: sequential WRITEs streamed into one write of
 * the session; CLOSE answers once it is committed, so a refusal (quota,
 * hook) reaches the client at the latest then.
 */
export class WriteHandle {
  readonly kind = 'write';
  private write: SessionWrite | null = null;
  private next = 0;
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
  }

  async open(): Promise<void> {
    if (this.mode.kind === 'upload') this.begin(await this.session.openWrite(this.path));
  }

  /** Bytes written so far (FSTAT of a file being written). */
  get size(): number {
    return this.mode.kind === 'offset' && this.write === null ? this.mode.size : this.next;
  }

  async writeAt(offset: number, data: Buffer): Promise<void> {
    if (this.error) throw this.error;
    if (this.write === null && this.mode.kind === 'offset') {
      const at = this.mode.append ? this.mode.size : offset;
      if (at > this.mode.size) throw new SftpStatusError(STATUS.OP_UNSUPPORTED, `cannot write at ${at}, past the end of the file (${this.mode.size} bytes)`);
      this.begin(await this.session.openWrite(this.path, { offset: at }));
      this.next = at;
    }
    if (this.mode.kind === 'offset' && this.mode.append) offset = this.next;
    if (offset !== this.next) {
      this.fail(new SftpStatusError(STATUS.OP_UNSUPPORTED, `write at offset ${offset} where ${this.next} was expected: only sequential writes are supported`));
      throw this.error;
    }
    const stream = this.write!.stream;
    this.next += data.length;
    if (!stream.write(data)) await drained(stream, this.failed);
    if (this.error) throw this.error;
  }

  /** Commits the write (or undoes it after a failure) and rethrows the failure. */
  async close(): Promise<void> {
    const write = this.write;
    this.write = null;
    if (!write) {
      if (this.error) throw this.error;
      return;
    }
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
   * fsync@openssh.com: resolves once every byte of the WRITEs answered so
   * far has been handed to the session's upload (counted by the transfer
   * and the quota, on its way to the backend), or rethrows the failure.
   * The file itself is published at CLOSE, as always.
   */
  async flush(): Promise<void> {
    if (this.error) throw this.error;
    const stream = this.write?.stream;
    if (stream) await handedOver(stream, this.failed);
    if (this.error) throw this.error;
  }

  /** A new upload with nothing written yet: copy-data may fill it by a copy instead. */
  get untouched(): boolean {
    return this.mode.kind === 'upload' && this.write !== null && this.next === 0 && this.error === null;
  }

  /** Drops the upload begun at OPEN (nothing of it is left) and waits until it is over. */
  async discard(): Promise<void> {
    const write = this.write;
    this.write = null;
    if (!write) return;
    write.abort(new Error('replaced by a copy'));
    await write.done.catch(() => undefined);
  }

  /** The client went away: a whole upload leaves nothing. */
  abort(): void {
    const write = this.write;
    this.write = null;
    write?.abort(new Error('the client closed the channel'));
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
    this.write?.abort(err);
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
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
    void failed.then(done);
  });
}

/** Bytes a stream still holds: its writable side's, and its readable side's for a duplex (the session's PassThrough). */
const readSide = (stream: Writable) => stream as unknown as Partial<Pick<Readable, 'readableLength' | 'readableFlowing'>>;
const held = (stream: Writable) => stream.writableLength + (readSide(stream).readableLength ?? 0);

/** Resolves once `stream` holds no byte (its consumer took them all), failed or closed, or `failed` resolved. */
function handedOver(stream: Writable, failed: Promise<void>): Promise<void> {
  if (held(stream) === 0 || stream.destroyed) return Promise.resolve();
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
      if (held(stream) === 0) done();
    }
    if (readable) stream.on('data', check);
    stream.on('drain', check);
    stream.on('error', done);
    stream.on('close', done);
    void failed.then(done);
  });
}

/** Entries answered by one READDIR (small enough for one SFTP packet). */
const NAMES_PER_READDIR = 128;

/** A directory opened for listing: the session's pages, handed out a few entries per READDIR. */
export class DirHandle {
  readonly kind = 'dir';
  private pending: FileInfo[] = [];
  private pages: AsyncIterator<FileInfo[]> | null = null;
  private ended = false;

  constructor(
    private readonly session: FileSession,
    readonly path: string,
  ) {}

  async open(): Promise<void> {
    this.pages = (await this.session.list(this.path))[Symbol.asyncIterator]();
  }

  /** The next entries, or null once every entry was handed out. */
  async next(): Promise<FileInfo[] | null> {
    while (this.pending.length === 0) {
      if (this.ended || !this.pages) return null;
      const page = await this.pages.next();
      if (page.done) this.ended = true;
      else this.pending = page.value;
    }
    return this.pending.splice(0, NAMES_PER_READDIR);
  }

  async close(): Promise<void> {
    const pages = this.pages;
    this.pages = null;
    this.pending = [];
    await pages?.return?.();
  }
}

export type Handle = ReadHandle | WriteHandle | DirHandle | CopiedHandle;

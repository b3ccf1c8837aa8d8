import { Writable, pipeline } from 'node:stream';
import type { FileInfo, FileSession, SessionRead } from '@ferry/core';
import type { CopiedHandle } from './copied-handle.js';
import type { WriteHandle } from './write-handle.js';

export { WriteHandle, type WriteMode } from './write-handle.js';

/** Largest READ answered at once (OpenSSH's own limit: 256 KiB packets). */
export const MAX_READ = 255 * 1024;

/**
 * A file opened for reading: one download of the session at a time, read
 * in order; a READ at another offset than the next one reopens it with a
 * range (random access).
 *
 * The download reads into buffers of core's pool (SessionReadOptions.recycle)
 * and writes them to this handle (SessionRead.writeTo): a READ is answered
 * with a view of the chunk at hand, and the chunk is given back once every
 * byte of it was answered and sent (an answer the channel's window has no
 * room for waits in ssh2 as a view: the `sent` of the constructor). One
 * chunk is held at a time; a READ across two chunks is answered from a copy
 * in the handle's reused buffer. Without writeTo (a bandwidth limit), the
 * download's stream is read the same way.
 */
export class ReadHandle {
  readonly kind = 'read';
  private read: SessionRead | null = null;
  private sink: Writable | null = null;
  /** The chunk being answered from, how far, and what gives it back. */
  private chunk: Buffer | null = null;
  private chunkPos = 0;
  private release: ((err?: Error | null) => void) | null = null;
  private ended = false;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;
  private pos = 0;
  /** An answer still holds a view of the current chunk (its `send` answered true). */
  private chunkHeld = false;
  /** See takeScratch(); `scratchHeld`: an answer may still hold a view of it. */
  private scratch: Buffer | null = null;
  private scratchHeld = false;

  constructor(
    private readonly session: FileSession,
    readonly path: string,
    readonly info: FileInfo,
    /** Resolves once no answer holds a view of `memory` any more; without it, `send` must not hold views. */
    private readonly sent?: (memory: ArrayBufferLike) => Promise<void>,
  ) {}

  /** Opens the download from the start (checks the permissions and that the file exists). */
  async open(): Promise<void> {
    await this.reopen(0);
  }

  /**
   * Answers up to `length` bytes from `offset`: calls `send` with them and
   * resolves true, or resolves false at the end of the file. `data` is valid
   * during the call, or until `sent(data.buffer)` resolves when `send`
   * answers true (it holds the view: the chunk is given back only then).
   */
  async readAt(offset: number, length: number, send: (data: Buffer) => boolean | void): Promise<boolean> {
    if (offset !== this.pos || this.read === null) {
      if (offset >= this.info.size) return false;
      await this.reopen(offset);
    }
    const want = Math.min(length, MAX_READ);
    let out: Buffer | null = null;
    let filled = 0;
    while (filled < want) {
      const chunk = this.chunk ?? (await this.nextChunk());
      if (!chunk) break;
      const n = Math.min(chunk.length - this.chunkPos, want - filled);
      if (filled === 0 && n === want) {
        if (send(chunk.subarray(this.chunkPos, this.chunkPos + n)) === true) this.chunkHeld = true;
        filled = n;
      } else {
        out ??= await this.takeScratch(want);
        chunk.copy(out, filled, this.chunkPos, this.chunkPos + n);
        filled += n;
      }
      this.chunkPos += n;
      if (this.chunkPos === chunk.length) this.giveBack();
    }
    if (filled === 0) return false;
    if (out && send(filled === want ? out : out.subarray(0, filled)) === true) this.scratchHeld = true;
    this.pos += filled;
    return true;
  }

  /** The next chunk of the download, or null at its end (rejects with its failure). */
  private async nextChunk(): Promise<Buffer | null> {
    while (!this.chunk && !this.ended && !this.failure) await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.failure) throw this.failure;
    return this.chunk;
  }

  /**
   * The buffer a READ across two chunks is put together in: one per handle,
   * reused (a READ across chunks comes every few READs: with OpenSSH's 255
   * KiB READs and 1 MiB chunks, one in four), taken again once no answer
   * holds a view of it.
   */
  private async takeScratch(size: number): Promise<Buffer> {
    if (this.scratch && this.scratchHeld && this.sent) await this.sent(this.scratch.buffer);
    this.scratchHeld = false;
    if (!this.scratch || this.scratch.length < size) this.scratch = Buffer.allocUnsafeSlow(Math.max(size, MAX_READ));
    return this.scratch.subarray(0, size);
  }

  /** The current chunk was answered: the download may write the next one (once no answer holds a view of it). */
  private giveBack(): void {
    const release = this.release;
    const held = this.chunkHeld ? this.chunk : null;
    this.chunk = null;
    this.chunkPos = 0;
    this.release = null;
    this.chunkHeld = false;
    if (held && this.sent) void this.sent(held.buffer).then(() => release?.());
    else release?.();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async reopen(offset: number): Promise<void> {
    await this.close();
    const read = await this.session.openRead(this.path, { ...(offset > 0 ? { start: offset } : {}), recycle: true });
    const sink = new Writable({
      highWaterMark: 0,
      write: (chunk: Buffer, _encoding, callback) => {
        if (chunk.length === 0) return callback();
        this.chunk = chunk;
        this.chunkPos = 0;
        this.release = callback;
        this.notify();
      },
      final: (callback) => {
        this.ended = true;
        this.notify();
        callback();
      },
      destroy: (err, callback) => {
        if (!this.ended) this.failure = err ?? new Error('the download stopped');
        this.notify();
        callback(err);
      },
    });
    sink.on('error', () => undefined); // the failure answers the READ that waits
    this.read = read;
    this.sink = sink;
    this.pos = offset;
    this.ended = false;
    this.failure = null;
    if (read.writeTo) read.writeTo(sink);
    else pipeline(read.stream, sink, () => undefined);
  }

  async close(): Promise<void> {
    const read = this.read;
    const sink = this.sink;
    this.read = null;
    this.sink = null;
    // the chunk held is dropped (not given back: the download is stopped)
    this.chunk = null;
    this.release = null;
    this.chunkPos = 0;
    this.chunkHeld = false;
    if (!read) return;
    // ended by the caller: no failure to answer
    this.ended = true;
    sink?.destroy();
    read.stream.destroy();
    await read.done;
  }
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

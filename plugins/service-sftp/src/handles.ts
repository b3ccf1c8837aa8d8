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

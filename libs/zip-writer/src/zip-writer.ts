import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { crc32 } from '@ferry/crc';
import {
  SIG_LOCAL,
  SIG_CENTRAL,
  SIG_DESCRIPTOR,
  SIG_END,
  SIG_ZIP64_END,
  SIG_ZIP64_LOCATOR,
  FLAG_DESCRIPTOR,
  FLAG_UTF8,
  MAX32,
  MAX16,
  ZIP64_HINT,
  VERSION_DEFAULT,
  VERSION_ZIP64,
  MADE_BY,
  EXTRA_TIME_ID,
  EXTRA_ZIP64_ID,
  METHOD_STORE,
  METHOD_DEFLATE,
  type Entry,
  writeU64,
  dosDateTime,
  windowBitsFor,
  BlockList,
} from './zip-records.js';

export interface EntryOptions {
  /** Modification time (default: now). Written as a DOS time (local time, 2 s steps) and as a UTC Unix time. */
  mtime?: Date;
  /** Unix permission bits (default 0o644 for files, 0o755 for directories). */
  mode?: number;
}

export interface StreamEntryOptions extends EntryOptions {
  /**
   * Expected size in bytes, when known. Without it, or from 4 GiB minus a
   * margin, the entry's local header carries a Zip64 field (the sizes are
   * only known at its end). The entry's real size is what the source yields.
   */
  size?: number;
}

export interface ZipWriterOptions {
  /** Deflate level 1 (fastest, the default) to 9; 0 stores every entry uncompressed. */
  level?: number;
  /** Readable high-water mark in bytes (default 256 KiB). */
  highWaterMark?: number;
  /**
   * Small outputs (headers, small entries) are gathered into chunks of about
   * this many bytes before they are pushed (default 64 KiB)...
   */
  chunkSize?: number;
  /** ...or once they have waited this long (ms, default 20), so a slow producer still streams. */
  flushDelayMs?: number;
}

/** Entries up to this size given as a Buffer are compressed in one call; larger ones are streamed. */
export const ONE_SHOT_MAX = 64 * 1024;

/**
 * A zip archive as a Readable stream. Entries are added one after the other
 * (calls are queued in order; each returns a promise that settles once the
 * entry is written or refused), then {@link ZipWriter.finalize} writes the
 * central directory. Memory stays bounded: an entry's bytes are pushed as
 * they are produced (with back-pressure), only the central directory
 * (about 60 bytes plus the name per entry) is held until the end.
 *
 * Entries given as a Buffer of up to {@link ONE_SHOT_MAX} bytes are
 * deflated in one call and written with their sizes in the local header
 * (stored instead when deflate does not make them smaller); streamed
 * entries are deflated as they come and end with a data descriptor
 * (general purpose bit 3). Names are UTF-8 (bit 11). Zip64 records are
 * written when sizes, offsets or the entry count need them.
 *
 * When a streamed entry's source fails, {@link ZipWriter.addStream}
 * rejects with its error and the entry is left out of the central
 * directory: the archive stays valid (its bytes remain, unreferenced) and
 * more entries may follow. Destroying the writer destroys the source being
 * read and rejects every pending call.
 */
export class ZipWriter extends Readable {
  private readonly level: number;
  private readonly chunkSize: number;
  private readonly flushDelayMs: number;
  private readonly central = new BlockList();
  private count = 0;
  private offset = 0;
  private tail: Promise<unknown> = Promise.resolve();
  private finalizing = false;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private waiter: { resolve: () => void; reject: (err: Error) => void } | undefined;
  private current: AbortController | undefined;

  constructor(o: ZipWriterOptions = {}) {
    super({ highWaterMark: o.highWaterMark ?? 256 * 1024 });
    const level = o.level ?? 1;
    if (!Number.isInteger(level) || level < 0 || level > 9) throw new RangeError(`zip level must be 0 to 9, got ${level}`);
    this.level = level;
    this.chunkSize = o.chunkSize ?? 64 * 1024;
    this.flushDelayMs = o.flushDelayMs ?? 20;
  }

  /** Entries written so far (those left out not counted). */
  get entries(): number {
    return this.count;
  }

  /** Bytes of the archive produced so far. */
  get bytesWritten(): number {
    return this.offset;
  }

  /** Adds a directory entry (a trailing `/` is added to the name when missing). */
  addDirectory(name: string, o: EntryOptions = {}): Promise<void> {
    const dirName = name.endsWith('/') ? name : `${name}/`;
    return this.enqueue(async () => {
      const e = this.entry(dirName, o, 0o040000 | (o.mode ?? 0o755), 0x10);
      await this.known(e, METHOD_STORE, null, 0, 0);
    });
  }

  /**
   * Adds a file whose bytes are all in `data` (kept by reference until
   * written: do not change it before the promise settles). Up to
   * {@link ONE_SHOT_MAX} bytes it is deflated in one call; beyond, streamed.
   */
  addBuffer(name: string, data: Uint8Array, o: EntryOptions = {}): Promise<void> {
    return this.enqueue(async () => {
      if (data.length > ONE_SHOT_MAX && this.level > 0) {
        return this.streamed(name, Readable.from([data], { objectMode: false }), { ...o, size: data.length });
      }
      const e = this.entry(name, o, 0o100000 | (o.mode ?? 0o644), 0);
      const crc = crc32(data);
      if (data.length > 0 && this.level > 0) {
        // an output buffer of the input's size (zlib's default is 16 KiB per call, garbage once written: 160 MB for 10,000 small files)
        const packed = zlib.deflateRawSync(data, { level: this.level, windowBits: windowBitsFor(data.length), chunkSize: Math.max(64, data.length) });
        if (packed.length < data.length) return this.known(e, METHOD_DEFLATE, packed, crc, data.length);
      }
      return this.known(e, METHOD_STORE, Buffer.from(data.buffer, data.byteOffset, data.length), crc, data.length);
    });
  }

  /**
   * Adds a file read from `source` (a Readable or any async iterable of
   * bytes), deflated as it comes, with back-pressure on the source. Resolves
   * once the entry is complete; rejects with the source's error (the entry
   * is then left out, see the class comment).
   */
  addStream(name: string, source: Readable | AsyncIterable<Uint8Array>, o: StreamEntryOptions = {}): Promise<void> {
    return this.enqueue(() => this.streamed(name, source, o));
  }

  /** Writes the central directory and the end records, then ends the stream. Resolves once all is pushed. */
  finalize(): Promise<void> {
    const done = this.enqueue(() => this.writeEnd());
    this.finalizing = true;
    return done;
  }

  override _read(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    clearTimeout(this.timer);
    this.pending = [];
    const reason = err ?? new Error('the zip writer was destroyed');
    this.current?.abort(reason);
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(reason);
    cb(err);
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    if (this.finalizing) return Promise.reject(new Error('the zip writer is finalized: no more entries'));
    const run = this.tail.then(() => {
      this.throwIfDestroyed();
      return op();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private throwIfDestroyed(): void {
    if (this.destroyed) throw this.errored ?? new Error('the zip writer was destroyed');
  }

  private entry(name: string, o: EntryOptions, unixMode: number, dosAttrs: number): Entry {
    // entry names separate with '/' only (APPNOTE 4.4.17): readers on Windows would take a '\\' for one anyway
    const nameBytes = Buffer.from(name.replace(/\\/g, '/'), 'utf8');
    if (nameBytes.length > MAX16) throw new RangeError(`zip entry name longer than ${MAX16} bytes`);
    let mtime = o.mtime ?? new Date();
    if (Number.isNaN(mtime.getTime())) mtime = new Date();
    const { time, date } = dosDateTime(mtime);
    const secs = Math.floor(mtime.getTime() / 1000);
    return {
      name: nameBytes,
      flags: FLAG_UTF8,
      method: METHOD_STORE,
      time,
      date,
      unixTime: secs >= -0x80000000 && secs <= 0x7fffffff ? secs : null,
      externalAttrs: (((unixMode & 0xffff) << 16) | dosAttrs) >>> 0,
      crc: 0,
      csize: 0,
      usize: 0,
      offset: 0,
      zip64Local: false,
    };
  }

  /** An entry whose bytes and sizes are known: sizes in the local header, no data descriptor. */
  private async known(e: Entry, method: number, body: Buffer | null, crc: number, usize: number): Promise<void> {
    e.method = method;
    e.crc = crc;
    e.usize = usize;
    e.csize = body?.length ?? 0;
    e.zip64Local = e.usize >= MAX32 || e.csize >= MAX32;
    e.offset = this.offset;
    await this.out(this.localHeader(e));
    if (body && body.length > 0) await this.out(body);
    this.addCentral(e);
  }

  private async streamed(name: string, source: Readable | AsyncIterable<Uint8Array>, o: StreamEntryOptions): Promise<void> {
    const e = this.entry(name, o, 0o100000 | (o.mode ?? 0o644), 0);
    e.flags |= FLAG_DESCRIPTOR;
    e.method = this.level > 0 ? METHOD_DEFLATE : METHOD_STORE;
    e.zip64Local = o.size === undefined || o.size >= ZIP64_HINT;
    e.offset = this.offset;
    const ac = new AbortController();
    this.current = ac;
    try {
      await this.out(this.localHeader(e));
      let crc = 0;
      let usize = 0;
      let csize = 0;
      const count = async function* (src: AsyncIterable<Uint8Array>) {
        for await (const chunk of src) {
          crc = crc32(chunk, crc);
          usize += chunk.length;
          yield chunk;
        }
      };
      const sink = async (src: AsyncIterable<Uint8Array>) => {
        for await (const chunk of src) {
          csize += chunk.length;
          await this.out(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
        }
      };
      if (e.method === METHOD_DEFLATE) await pipeline(source, count, zlib.createDeflateRaw({ level: this.level }), sink, { signal: ac.signal });
      else await pipeline(source, count, sink, { signal: ac.signal });
      e.crc = crc;
      e.usize = usize;
      e.csize = csize;
    } catch (err) {
      if (this.destroyed) throw this.errored ?? err;
      throw err;
    } finally {
      if (this.current === ac) this.current = undefined;
      if (!readableDone(source)) (source as Readable).destroy();
    }
    const zip64 = e.zip64Local || e.usize >= MAX32 || e.csize >= MAX32;
    const d = Buffer.allocUnsafe(zip64 ? 24 : 16);
    d.writeUInt32LE(SIG_DESCRIPTOR, 0);
    d.writeUInt32LE(e.crc, 4);
    if (zip64) {
      writeU64(d, e.csize, 8);
      writeU64(d, e.usize, 16);
    } else {
      d.writeUInt32LE(e.csize, 8);
      d.writeUInt32LE(e.usize, 12);
    }
    await this.out(d);
    this.addCentral(e);
  }

  private localHeader(e: Entry): Buffer {
    const timeLen = e.unixTime === null ? 0 : 9;
    const zip64Len = e.zip64Local ? 20 : 0;
    const h = Buffer.allocUnsafe(30 + e.name.length + timeLen + zip64Len);
    const descriptor = (e.flags & FLAG_DESCRIPTOR) !== 0;
    h.writeUInt32LE(SIG_LOCAL, 0);
    h.writeUInt16LE(e.zip64Local ? VERSION_ZIP64 : VERSION_DEFAULT, 4);
    h.writeUInt16LE(e.flags, 6);
    h.writeUInt16LE(e.method, 8);
    h.writeUInt16LE(e.time, 10);
    h.writeUInt16LE(e.date, 12);
    h.writeUInt32LE(descriptor ? 0 : e.crc, 14);
    h.writeUInt32LE(e.zip64Local ? MAX32 : descriptor ? 0 : e.csize, 18);
    h.writeUInt32LE(e.zip64Local ? MAX32 : descriptor ? 0 : e.usize, 22);
    h.writeUInt16LE(e.name.length, 26);
    h.writeUInt16LE(timeLen + zip64Len, 28);
    e.name.copy(h, 30);
    let p = 30 + e.name.length;
    if (e.unixTime !== null) {
      h.writeUInt16LE(EXTRA_TIME_ID, p);
      h.writeUInt16LE(5, p + 2);
      h.writeUInt8(1, p + 4); // modification time present
      h.writeInt32LE(e.unixTime, p + 5);
      p += 9;
    }
    if (e.zip64Local) {
      h.writeUInt16LE(EXTRA_ZIP64_ID, p);
      h.writeUInt16LE(16, p + 2);
      writeU64(h, descriptor ? 0 : e.usize, p + 4);
      writeU64(h, descriptor ? 0 : e.csize, p + 12);
    }
    return h;
  }

  private addCentral(e: Entry): void {
    const bigU = e.usize >= MAX32;
    const bigC = e.csize >= MAX32;
    const bigO = e.offset >= MAX32;
    const zip64Fields = (bigU ? 1 : 0) + (bigC ? 1 : 0) + (bigO ? 1 : 0);
    const zip64Len = zip64Fields > 0 ? 4 + 8 * zip64Fields : 0;
    const timeLen = e.unixTime === null ? 0 : 9;
    const c = this.central.take(46 + e.name.length + timeLen + zip64Len);
    c.writeUInt32LE(SIG_CENTRAL, 0);
    c.writeUInt16LE(MADE_BY, 4);
    c.writeUInt16LE(e.zip64Local || zip64Fields > 0 ? VERSION_ZIP64 : VERSION_DEFAULT, 6);
    c.writeUInt16LE(e.flags, 8);
    c.writeUInt16LE(e.method, 10);
    c.writeUInt16LE(e.time, 12);
    c.writeUInt16LE(e.date, 14);
    c.writeUInt32LE(e.crc, 16);
    c.writeUInt32LE(bigC ? MAX32 : e.csize, 20);
    c.writeUInt32LE(bigU ? MAX32 : e.usize, 24);
    c.writeUInt16LE(e.name.length, 28);
    c.writeUInt16LE(timeLen + zip64Len, 30);
    c.writeUInt16LE(0, 32); // comment length
    c.writeUInt16LE(0, 34); // disk number
    c.writeUInt16LE(0, 36); // internal attributes
    c.writeUInt32LE(e.externalAttrs, 38);
    c.writeUInt32LE(bigO ? MAX32 : e.offset, 42);
    e.name.copy(c, 46);
    let p = 46 + e.name.length;
    if (e.unixTime !== null) {
      c.writeUInt16LE(EXTRA_TIME_ID, p);
      c.writeUInt16LE(5, p + 2);
      c.writeUInt8(1, p + 4);
      c.writeInt32LE(e.unixTime, p + 5);
      p += 9;
    }
    if (zip64Fields > 0) {
      c.writeUInt16LE(EXTRA_ZIP64_ID, p);
      c.writeUInt16LE(8 * zip64Fields, p + 2);
      p += 4;
      for (const [big, v] of [
        [bigU, e.usize],
        [bigC, e.csize],
        [bigO, e.offset],
      ] as const) {
        if (!big) continue;
        writeU64(c, v, p);
        p += 8;
      }
    }
    this.count++;
  }

  private async writeEnd(): Promise<void> {
    const cdOffset = this.offset;
    this.central.close();
    for (const block of this.central.blocks.splice(0)) await this.out(block);
    const cdSize = this.offset - cdOffset;
    const n = this.count;
    if (n >= MAX16 || cdOffset >= MAX32 || cdSize >= MAX32) {
      const z = Buffer.alloc(56 + 20);
      const at = this.offset;
      z.writeUInt32LE(SIG_ZIP64_END, 0);
      writeU64(z, 44, 4);
      z.writeUInt16LE(MADE_BY, 12);
      z.writeUInt16LE(VERSION_ZIP64, 14);
      writeU64(z, n, 24);
      writeU64(z, n, 32);
      writeU64(z, cdSize, 40);
      writeU64(z, cdOffset, 48);
      z.writeUInt32LE(SIG_ZIP64_LOCATOR, 56);
      writeU64(z, at, 64);
      z.writeUInt32LE(1, 72);
      await this.out(z);
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(SIG_END, 0);
    end.writeUInt16LE(Math.min(n, MAX16), 8);
    end.writeUInt16LE(Math.min(n, MAX16), 10);
    end.writeUInt32LE(Math.min(cdSize, MAX32), 12);
    end.writeUInt32LE(Math.min(cdOffset, MAX32), 16);
    await this.out(end);
    await this.flush();
    this.push(null);
  }

  /** Queues bytes of the archive; pushes them in chunks of about chunkSize, waiting when the reader is behind. */
  private async out(buf: Buffer): Promise<void> {
    this.throwIfDestroyed();
    this.offset += buf.length;
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= this.chunkSize) await this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (!this.destroyed) this.pushPending();
      }, this.flushDelayMs);
    }
  }

  /** Pushes what is pending; false when the reader is behind. */
  private pushPending(): boolean {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pendingBytes === 0) return true;
    const chunk = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    return this.push(chunk);
  }

  private async flush(): Promise<void> {
    if (this.pushPending()) return;
    await new Promise<void>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
    this.throwIfDestroyed();
  }
}

function readableDone(source: Readable | AsyncIterable<Uint8Array>): boolean {
  return !(source instanceof Readable) || source.destroyed;
}

/** The records of the zip format (APPNOTE 6.3): signatures, flags, field helpers and the central directory's buffer. */

export const SIG_LOCAL = 0x04034b50;
export const SIG_CENTRAL = 0x02014b50;
export const SIG_DESCRIPTOR = 0x08074b50;
export const SIG_END = 0x06054b50;
export const SIG_ZIP64_END = 0x06064b50;
export const SIG_ZIP64_LOCATOR = 0x07064b50;
export const FLAG_DESCRIPTOR = 0x0008;
export const FLAG_UTF8 = 0x0800;
export const MAX32 = 0xffffffff;
export const MAX16 = 0xffff;
/** A stream entry expected at or above this size gets a Zip64 local header (deflate may grow data a little). */
export const ZIP64_HINT = 0xf0000000;
export const VERSION_DEFAULT = 20;
export const VERSION_ZIP64 = 45;
/** Made by: Unix (3), specification 4.5. */
export const MADE_BY = (3 << 8) | VERSION_ZIP64;
export const EXTRA_TIME_ID = 0x5455;
export const EXTRA_ZIP64_ID = 0x0001;
export const METHOD_STORE = 0;
export const METHOD_DEFLATE = 8;

export interface Entry {
  name: Buffer;
  flags: number;
  method: number;
  time: number;
  date: number;
  /** Unix seconds for the extended timestamp field, or null when out of its range. */
  unixTime: number | null;
  externalAttrs: number;
  crc: number;
  csize: number;
  usize: number;
  offset: number;
  zip64Local: boolean;
}

export function writeU64(b: Buffer, n: number, at: number): void {
  b.writeUInt32LE(n % 0x100000000, at);
  b.writeUInt32LE(Math.floor(n / 0x100000000), at + 4);
}

/** DOS time and date (local time, 2-second steps), clamped to 1980..2107. */
export function dosDateTime(d: Date): { time: number; date: number } {
  const year = d.getFullYear();
  if (year < 1980) return { time: 0, date: (1 << 5) | 1 };
  if (year > 2107) return { time: (23 << 11) | (59 << 5) | 29, date: (127 << 9) | (12 << 5) | 31 };
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

/** The smallest deflate window that holds the whole input (less memory to set up for small entries). */
export function windowBitsFor(n: number): number {
  return Math.max(9, Math.min(15, Math.ceil(Math.log2(n + 262))));
}

/** Appends records into 64 KiB blocks (the central directory, held until the end). */
export class BlockList {
  readonly blocks: Buffer[] = [];
  private cur = Buffer.alloc(0);
  private pos = 0;
  bytes = 0;
  /** A view of `n` fresh bytes to fill. */
  take(n: number): Buffer {
    if (this.pos + n > this.cur.length) {
      this.close();
      this.cur = Buffer.allocUnsafe(Math.max(64 * 1024, n));
      this.pos = 0;
    }
    const view = this.cur.subarray(this.pos, this.pos + n);
    this.pos += n;
    this.bytes += n;
    return view;
  }
  close(): void {
    if (this.pos > 0) this.blocks.push(this.cur.subarray(0, this.pos));
    this.cur = Buffer.alloc(0);
    this.pos = 0;
  }
}

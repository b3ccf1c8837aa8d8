import { STATUS, SftpStatusError } from './status.js';

/** Reads the fields of an extended request's data (after its name), refusing a short or overlong packet. */
export class RequestReader {
  private p = 0;

  constructor(private readonly data: Buffer) {}

  private need(n: number): void {
    if (this.p + n > this.data.length) throw new SftpStatusError(STATUS.BAD_MESSAGE, 'malformed request');
  }

  bytes(): Buffer {
    this.need(4);
    const len = this.data.readUInt32BE(this.p);
    this.need(4 + len);
    const out = this.data.subarray(this.p + 4, this.p + 4 + len);
    this.p += 4 + len;
    return out;
  }

  string(): string {
    return this.bytes().toString('utf8');
  }

  u32(): number {
    this.need(4);
    const v = this.data.readUInt32BE(this.p);
    this.p += 4;
    return v;
  }

  /** A uint64 (past 2^53 - 1: refused, no file is that large). */
  u64(): number {
    this.need(8);
    const v = this.data.readBigUInt64BE(this.p);
    this.p += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new SftpStatusError(STATUS.FAILURE, 'offset or length out of range');
    return Number(v);
  }
}

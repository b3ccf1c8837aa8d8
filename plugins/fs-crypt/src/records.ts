import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { WriteEncoder } from '@ferry/fs-local';
import { FsCryptError } from './errors.js';
import { CHUNK_SIZE, MAX_RECORDS, RECORD_SIZE, TAG_SIZE, type Header } from './format.js';

function nonce(header: Header, index: number): Buffer {
  const n = Buffer.alloc(12);
  header.noncePrefix.copy(n, 0);
  n.writeUInt32BE(index, 8);
  return n;
}

/** AAD of non-final and final records: the header, then the final flag. */
function aads(header: Header): [Buffer, Buffer] {
  return [Buffer.concat([header.bytes, Buffer.from([0])]), Buffer.concat([header.bytes, Buffer.from([1])])];
}

/**
 * Plaintext in, header and sealed records out (a `WriteEncoder` for
 * LocalFs's upload writer, so no extra stream layer sits between the writer
 * and the file). A full 64 KiB chunk is sealed as soon as it is complete,
 * never as final; the remainder, 0 to 64 KiB - 1 bytes, is sealed as the
 * final record by `finish()`. Output buffers are handed over as they come
 * from the cipher (ciphertext, then tag): copying them together costs more
 * than writing them with one writev.
 */
export class RecordEncoder implements WriteEncoder {
  /** Plaintext bytes consumed so far. */
  plainBytes = 0;
  /**
   * Plaintext of the record being filled: grown as bytes come, up to one
   * chunk, so a small file (most files of a multipart upload) costs a small
   * buffer from Node's pool rather than 64 KiB of its own.
   */
  private staging = Buffer.alloc(0);
  private fill = 0;
  private index = 0;
  private headerSent = false;
  private finished = false;
  private readonly aad: [Buffer, Buffer];

  constructor(
    private readonly key: Buffer,
    private readonly header: Header,
  ) {
    this.aad = aads(header);
  }

  private seal(plain: Buffer, final: boolean, out: Buffer[]): void {
    if (this.index >= MAX_RECORDS) throw new Error('fs-crypt: file too large for the 32-bit record counter');
    // the header goes out with the first record: a small file is stored with one write, not two
    if (!this.headerSent) {
      this.headerSent = true;
      out.push(this.header.bytes);
    }
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce(this.header, this.index), { authTagLength: TAG_SIZE });
    cipher.setAAD(this.aad[final ? 1 : 0]);
    const sealed = cipher.update(plain);
    cipher.final();
    if (sealed.length) out.push(sealed);
    out.push(cipher.getAuthTag());
    this.index++;
  }

  encode(chunk: Buffer): Buffer[] {
    if (this.finished) throw new Error('fs-crypt: write after the final record');
    const out: Buffer[] = [];
    this.plainBytes += chunk.length;
    let off = 0;
    while (off < chunk.length) {
      if (this.fill === 0 && chunk.length - off >= CHUNK_SIZE) {
        this.seal(chunk.subarray(off, off + CHUNK_SIZE), false, out);
        off += CHUNK_SIZE;
        continue;
      }
      const n = Math.min(CHUNK_SIZE - this.fill, chunk.length - off);
      this.reserve(this.fill + n);
      chunk.copy(this.staging, this.fill, off, off + n);
      this.fill += n;
      off += n;
      if (this.fill === CHUNK_SIZE) {
        this.seal(this.staging, false, out);
        this.fill = 0;
      }
    }
    return out;
  }

  /** Makes room for `size` bytes of staged plaintext (at most one chunk), keeping what is staged. */
  private reserve(size: number): void {
    if (size <= this.staging.length) return;
    const grown = Buffer.allocUnsafe(Math.min(CHUNK_SIZE, Math.max(size, this.staging.length * 2)));
    this.staging.copy(grown, 0, 0, this.fill);
    this.staging = grown;
  }

  finish(): Buffer[] {
    if (this.finished) return [];
    this.finished = true;
    const out: Buffer[] = [];
    this.seal(this.staging.subarray(0, this.fill), true, out);
    return out;
  }
}

/** Which records of a file a read covers, and which plaintext bytes of them it returns. */
export interface RecordSpan {
  key: Buffer;
  header: Header;
  /** File path, for error messages. */
  path: string;
  /** First and last record read. */
  firstIndex: number;
  lastIndex: number;
  /** Index of the file's final record, and its stored length. */
  finalIndex: number;
  finalRecordLength: number;
  /** Plaintext bytes to drop from the first record (range start inside it). */
  skip?: number;
  /** Plaintext bytes to return in total. */
  length: number;
}

/**
 * Authenticates records one after the other (from `firstIndex`) and trims
 * their plaintext to the requested range. A record's plaintext is released
 * only after its tag verified; a failure names the record.
 */
export class RecordDecoder {
  /** Index of the next record expected. */
  index: number;
  private skip: number;
  private remaining: number;
  private readonly aad: [Buffer, Buffer];

  constructor(readonly span: RecordSpan) {
    this.index = span.firstIndex;
    this.skip = span.skip ?? 0;
    this.remaining = span.length;
    this.aad = aads(span.header);
  }

  get done(): boolean {
    return this.index > this.span.lastIndex;
  }

  /** Stored length of record `index`. */
  recordLength(index = this.index): number {
    return index === this.span.finalIndex ? this.span.finalRecordLength : RECORD_SIZE;
  }

  /** Opens the next record; returns the plaintext bytes it contributes (possibly empty). */
  open(record: Buffer): Buffer {
    const final = this.index === this.span.finalIndex;
    const decipher = createDecipheriv('aes-256-gcm', this.span.key, nonce(this.span.header, this.index), {
      authTagLength: TAG_SIZE,
    });
    decipher.setAAD(this.aad[final ? 1 : 0]);
    decipher.setAuthTag(record.subarray(record.length - TAG_SIZE));
    let plain = decipher.update(record.subarray(0, record.length - TAG_SIZE));
    try {
      decipher.final();
    } catch {
      throw FsCryptError.integrity(this.span.path, `chunk ${this.index}${final ? ' (final)' : ''} does not authenticate`);
    }
    this.index++;
    if (this.skip > 0) {
      plain = plain.subarray(Math.min(this.skip, plain.length));
      this.skip = 0;
    }
    if (plain.length > this.remaining) plain = plain.subarray(0, this.remaining);
    this.remaining -= plain.length;
    return plain;
  }

  truncated(): FsCryptError {
    return FsCryptError.integrity(this.span.path, `the file ends inside chunk ${this.index} (truncated)`);
  }
}

export { CHUNK_SIZE };

import type { FileHandle } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { FsCryptError } from './errors.js';
import { HEADER_SIZE, RECORD_SIZE } from './format.js';
import { RecordDecoder, type RecordSpan } from './records.js';

/** Readable-side buffer: room for a batch of 16 records. */
const STREAM_BUFFER = 16 * RECORD_SIZE;

/**
 * Reads records straight from an open stored file and pushes verified
 * plaintext: one stream layer, batches of `recordsPerRead` records per read
 * into one reused buffer (the plaintext comes out of the decipher as new
 * buffers, so the read buffer is free again once a batch is decoded). Owns
 * `fh` and closes it when it ends or is destroyed.
 */
export class DecryptingReader extends Readable {
  private readonly decoder: RecordDecoder;
  private readonly buffer: Buffer;
  private position: number;
  private reading = false;

  constructor(
    private readonly fh: FileHandle,
    span: RecordSpan,
    private readonly recordsPerRead: number,
  ) {
    super({ highWaterMark: STREAM_BUFFER });
    this.decoder = new RecordDecoder(span);
    this.buffer = Buffer.allocUnsafe(recordsPerRead * RECORD_SIZE);
    this.position = HEADER_SIZE + span.firstIndex * RECORD_SIZE;
  }

  override _read(): void {
    if (this.reading) return;
    this.reading = true;
    this.readBatch().then(
      () => {
        this.reading = false;
      },
      (err: unknown) => this.destroy(err as Error),
    );
  }

  /** Reads and decodes batches until something was pushed (Node calls _read again only after a push). */
  private async readBatch(): Promise<void> {
    const d = this.decoder;
    for (;;) {
      if (d.done) {
        this.push(null);
        return;
      }
      const lengths: number[] = [];
      let want = 0;
      for (let i = d.index; i <= d.span.lastIndex && lengths.length < this.recordsPerRead; i++) {
        lengths.push(d.recordLength(i));
        want += d.recordLength(i);
      }
      let got = 0;
      while (got < want) {
        const { bytesRead } = await this.fh.read(this.buffer, got, want - got, this.position + got);
        if (bytesRead === 0) throw d.truncated();
        got += bytesRead;
      }
      this.position += want;
      let pushed = false;
      let off = 0;
      for (const len of lengths) {
        const plain = d.open(this.buffer.subarray(off, off + len));
        off += len;
        if (plain.length) pushed = this.push(plain) || true;
      }
      if (d.done) {
        this.push(null);
        return;
      }
      if (pushed) return;
    }
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.fh.close().then(
      () => cb(err),
      () => cb(err),
    );
  }
}

/**
 * Stored bytes in (from any stream), verified plaintext out. Used where the
 * stored bytes only come as a stream, e.g. a pending upload handed to a
 * beforePublish hook.
 */
export class DecryptStream extends Transform {
  private readonly decoder: RecordDecoder;
  private leftover: Buffer = Buffer.alloc(0);
  private discard: number;

  /** `discard`: input bytes to drop before the first record (the header, when reading a whole stored file). */
  constructor(span: RecordSpan, discard = 0) {
    super({ readableHighWaterMark: STREAM_BUFFER });
    this.decoder = new RecordDecoder(span);
    this.discard = discard;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      const d = this.decoder;
      let data = chunk;
      if (this.discard > 0) {
        const n = Math.min(this.discard, data.length);
        this.discard -= n;
        data = data.subarray(n);
      }
      if (this.leftover.length) data = Buffer.concat([this.leftover, data]);
      let off = 0;
      while (!d.done && data.length - off >= d.recordLength()) {
        const len = d.recordLength();
        const plain = d.open(data.subarray(off, off + len));
        off += len;
        if (plain.length) this.push(plain);
      }
      if (d.done && off < data.length) throw FsCryptError.integrity(d.span.path, 'data after the last expected chunk');
      this.leftover = off < data.length ? data.subarray(off) : Buffer.alloc(0);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    if (!this.decoder.done || this.leftover.length) return cb(this.decoder.truncated());
    cb();
  }
}

import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';

/**
 * Counts the bytes flowing through and fails with the given error once more
 * than `limit` bytes passed (limit < 0: no limit).
 */
export class ByteCounter extends Transform {
  bytes = 0;
  constructor(
    private readonly limit = -1,
    private readonly onLimit: () => Error = () => new Error('size limit exceeded'),
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.limit >= 0 && this.bytes > this.limit) return cb(this.onLimit());
    cb(null, chunk);
  }
}

/** Resolves once a readable has been fully consumed, rejects on its error. */
export function drain(stream: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.on('error', reject);
    stream.on('end', resolve);
    stream.resume();
  });
}

/** An empty readable stream. */
export function emptyReadable(): Readable {
  const p = new PassThrough();
  p.end();
  return p;
}

/**
 * A stream of one buffer already in memory (a small file read whole): the
 * buffer is pushed on the first read, then the end. Lighter than
 * Readable.from([buf]), which runs an async iterator per stream.
 */
export function bufferReadable(data: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        if (data.length > 0) this.push(data);
      }
      this.push(null);
    },
  });
}

/** Rejects with an AbortError-like error when the signal is already aborted. */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) {
    const err = new Error('operation aborted');
    err.name = 'AbortError';
    throw err;
  }
}

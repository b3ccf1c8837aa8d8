import { createCipheriv, createHash } from 'node:crypto';
import { Readable } from 'node:stream';

const DEFAULT_CHUNK = 64 * 1024;

function keystream(seed: string | number): (bytes: Buffer) => Buffer {
  const key = createHash('sha256')
    .update(`ferry-testkit:${String(seed)}`)
    .digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return (zeros) => cipher.update(zeros);
}

/**
 * A readable of `size` pseudo-random bytes, generated on the fly (AES-256-CTR
 * keystream keyed by `seed`), so a test can stream gigabytes without holding
 * them. The same size and seed always produce the same bytes, and a shorter
 * stream with the same seed is a prefix of a longer one.
 */
export function randomStream(size: number, seed: string | number = 0, chunkSize = DEFAULT_CHUNK): Readable {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`randomStream: bad size ${size}`);
  const next = keystream(seed);
  const zeros = Buffer.alloc(chunkSize);
  let left = size;
  return new Readable({
    highWaterMark: chunkSize,
    read() {
      if (left === 0) {
        this.push(null);
        return;
      }
      const n = Math.min(chunkSize, left);
      left -= n;
      this.push(next(n === chunkSize ? zeros : zeros.subarray(0, n)));
    },
  });
}

/** The bytes randomStream(size, seed) produces, as one buffer (small sizes only). */
export function randomBytesSeeded(size: number, seed: string | number = 0): Buffer {
  return keystream(seed)(Buffer.alloc(size));
}

/** Digest and length of everything a readable yields; rejects if the stream errors. */
export async function sha256Stream(stream: Readable): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    hash.update(buf);
  }
  return { sha256: hash.digest('hex'), size };
}

/** sha256 of bytes [start, end] (inclusive) of randomStream(size, seed), computed by streaming. */
export async function randomSliceSha256(size: number, seed: string | number, start: number, end: number): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let pos = 0;
  for await (const chunk of randomStream(Math.min(size, end + 1), seed)) {
    const buf = chunk as Buffer;
    const from = Math.max(0, start - pos);
    if (from < buf.length) hash.update(buf.subarray(from));
    pos += buf.length;
  }
  return { sha256: hash.digest('hex'), size: Math.max(0, Math.min(end, size - 1) - start + 1) };
}

/**
 * A readable that yields `bytesBeforeError` pseudo-random bytes and then fails
 * with `error`: a client connection dropping mid-upload.
 */
export function failingStream(bytesBeforeError: number, error: Error, seed: string | number = 'failing'): Readable {
  const next = keystream(seed);
  const zeros = Buffer.alloc(DEFAULT_CHUNK);
  let left = bytesBeforeError;
  return new Readable({
    read() {
      if (left === 0) {
        // Fail asynchronously, after the consumer had a chance to write what came before.
        setImmediate(() => this.destroy(error));
        return;
      }
      const n = Math.min(DEFAULT_CHUNK, left);
      left -= n;
      this.push(next(zeros.subarray(0, n)));
    },
  });
}

/**
 * Reads a stream that is expected to fail: resolves with its error (an
 * `Error('ended')` when it ended instead) and the bytes received before.
 */
export function readUntilError(stream: Readable): Promise<{ error: unknown; received: number }> {
  let received = 0;
  return new Promise((resolve) => {
    stream.on('data', (c: Buffer) => (received += c.length));
    stream.on('error', (error) => resolve({ error, received }));
    stream.on('end', () => resolve({ error: new Error('ended'), received }));
  });
}

import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { FsError, FsErrorCode } from '../fs/fs-error.js';
import type { FileSession } from './file-session.js';

/** The algorithms services may offer for file hashes (node's names) and their digest lengths in bytes. */
export const FILE_HASH_ALGORITHMS: Readonly<Record<string, number>> = {
  md5: 16,
  sha1: 20,
  sha224: 28,
  sha256: 32,
  sha384: 48,
  sha512: 64,
  crc32: 4,
};

/** An incremental hash: node:crypto's, or CRC-32 (IEEE, as zlib and cksum -a crc32b compute it; its digest is 4 bytes big-endian). */
export interface FileHasher {
  update(chunk: Buffer): void;
  digest(): Buffer;
}

/** A new incremental hash of one of FILE_HASH_ALGORITHMS; FsError NOT_SUPPORTED for another name. */
export function createFileHasher(algorithm: string): FileHasher {
  if (!Object.hasOwn(FILE_HASH_ALGORITHMS, algorithm)) throw new FsError(FsErrorCode.NotSupported, `unknown hash algorithm ${algorithm}`);
  if (algorithm !== 'crc32') return createHash(algorithm);
  let value = 0;
  return {
    update: (chunk) => void (value = crc32(chunk, value)),
    digest: () => {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(value >>> 0);
      return out;
    },
  };
}

export interface FileHashRange {
  /** One of FILE_HASH_ALGORITHMS. */
  algorithm: string;
  /** First byte. */
  start: number;
  /** Bytes from `start` (0: to the end of the file). */
  length: number;
  /** 0: one hash over the range; otherwise one hash per block of this many bytes. */
  blockSize: number;
  /** Called with the number of hashes once the file's size is known, before anything is read: throw to refuse. */
  check?: (hashes: number) => void;
  signal?: AbortSignal;
}

export interface FileHashResult {
  hashes: Buffer[];
  /** The range hashed: `start` and the offset after its last byte (start-end, end exclusive; equal when nothing was hashed). */
  start: number;
  end: number;
}

/**
 * The hashes of a byte range of a file of the session, streamed from a
 * download of that range: download permission, file patterns, bandwidth
 * and the download event apply as to any download. One hash over the
 * range, or one per block (the last one short). A range past the end is
 * clamped to the file; an empty range has one hash of nothing (none in
 * blocks). A directory fails with FsError IS_DIR.
 */
export async function hashFileRange(session: FileSession, path: string, o: FileHashRange): Promise<FileHashResult> {
  createFileHasher(o.algorithm);
  for (const [name, v] of [
    ['start', o.start],
    ['length', o.length],
    ['block size', o.blockSize],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new FsError(FsErrorCode.Invalid, `${path}: the hash ${name} must be a non-negative integer`, { path });
  }
  const signal = o.signal ? { signal: o.signal } : {};
  const info = await session.stat(path, signal);
  if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
  const start = Math.min(o.start, info.size);
  const end = o.length === 0 ? info.size : Math.min(info.size, start + o.length);
  const total = end - start;
  const blocks = o.blockSize === 0 ? 1 : Math.ceil(total / o.blockSize);
  o.check?.(blocks);
  if (total === 0) return { hashes: o.blockSize === 0 ? [createFileHasher(o.algorithm).digest()] : [], start, end };
  const hashes: Buffer[] = [];
  let hash = createFileHasher(o.algorithm);
  let inBlock = 0;
  const read = await session.openRead(path, { ...signal, start, end: end - 1 });
  try {
    for await (const chunk of read.stream as AsyncIterable<Buffer>) {
      if (o.blockSize === 0) {
        hash.update(chunk);
        continue;
      }
      for (let p = 0; p < chunk.length;) {
        const n = Math.min(chunk.length - p, o.blockSize - inBlock);
        hash.update(chunk.subarray(p, p + n));
        inBlock += n;
        p += n;
        if (inBlock === o.blockSize) {
          hashes.push(hash.digest());
          hash = createFileHasher(o.algorithm);
          inBlock = 0;
        }
      }
    }
  } finally {
    read.stream.destroy();
    await read.done;
  }
  if (o.blockSize === 0 || inBlock > 0) hashes.push(hash.digest());
  return { hashes, start, end };
}

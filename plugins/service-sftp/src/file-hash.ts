import { createHash } from 'node:crypto';
import { FsError, FsErrorCode, type FileSession } from '@ferry/core';
import { STATUS, SftpStatusError } from './status.js';

/** The hash algorithms of check-file (the draft's names, node's names alike) and their digest lengths. */
export const CHECK_FILE_ALGORITHMS: Readonly<Record<string, number>> = { md5: 16, sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64 };

export interface HashRange {
  algorithm: string;
  /** First byte. */
  start: number;
  /** Bytes from `start` (0: to the end of the file). */
  length: number;
  /** 0: one hash over the range; otherwise one hash per block of this size (at least 256). */
  blockSize: number;
  /** The largest answer (bytes of hashes) the caller can send. */
  maxBytes: number;
}

/**
 * The hashes of a byte range of a file of the session, streamed from a
 * download of that range (download permission, patterns, bandwidth and the
 * download event apply): one over the range, or one per block.
 */
export async function hashRange(session: FileSession, path: string, o: HashRange): Promise<Buffer[]> {
  const digestLength = CHECK_FILE_ALGORITHMS[o.algorithm];
  if (!digestLength) throw new SftpStatusError(STATUS.OP_UNSUPPORTED, `unknown hash algorithm ${o.algorithm}`);
  if (o.blockSize !== 0 && o.blockSize < 256) throw new SftpStatusError(STATUS.FAILURE, 'block-size must be 0 or at least 256');
  const info = await session.stat(path);
  if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
  const end = o.length === 0 ? info.size : Math.min(info.size, o.start + o.length);
  const total = Math.max(0, end - o.start);
  const blocks = o.blockSize === 0 ? 1 : Math.ceil(total / o.blockSize);
  if (blocks * digestLength > o.maxBytes) {
    throw new SftpStatusError(STATUS.FAILURE, `${blocks} hashes do not fit in one answer: ask for larger blocks or a shorter range`);
  }
  if (total === 0) return o.blockSize === 0 ? [createHash(o.algorithm).digest()] : [];
  const out: Buffer[] = [];
  let hash = createHash(o.algorithm);
  let inBlock = 0;
  const read = await session.openRead(path, { start: o.start, end: end - 1 });
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
          out.push(hash.digest());
          hash = createHash(o.algorithm);
          inBlock = 0;
        }
      }
    }
  } finally {
    read.stream.destroy();
    await read.done;
  }
  if (o.blockSize === 0 || inBlock > 0) out.push(hash.digest());
  return out;
}

import { FILE_HASH_ALGORITHMS, hashFileRange, type FileSession } from '@ferry/core';
import { STATUS, SftpStatusError } from './status.js';

/** The hash algorithms of check-file (the draft's names, node's names alike) and their digest lengths. */
export const CHECK_FILE_ALGORITHMS: Readonly<Record<string, number>> = Object.fromEntries(
  ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'].map((a) => [a, FILE_HASH_ALGORITHMS[a]!]),
);

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
 * check-file's hashes of a byte range (the SDK's hashFileRange, a download of
 * that range) with the draft's rules: its algorithms, blocks of at least 256
 * bytes, an answer that fits in one reply.
 */
export async function hashRange(session: FileSession, path: string, o: HashRange): Promise<Buffer[]> {
  const digestLength = CHECK_FILE_ALGORITHMS[o.algorithm];
  if (!digestLength) throw new SftpStatusError(STATUS.OP_UNSUPPORTED, `unknown hash algorithm ${o.algorithm}`);
  if (o.blockSize !== 0 && o.blockSize < 256) throw new SftpStatusError(STATUS.FAILURE, 'block-size must be 0 or at least 256');
  const check = (blocks: number) => {
    if (blocks * digestLength > o.maxBytes) {
      throw new SftpStatusError(STATUS.FAILURE, `${blocks} hashes do not fit in one answer: ask for larger blocks or a shorter range`);
    }
  };
  return (await hashFileRange(session, path, { algorithm: o.algorithm, start: o.start, length: o.length, blockSize: o.blockSize, check })).hashes;
}

import { FsCryptError } from './errors.js';

/**
 * fs-crypt file format, version 1 (see the README for the rationale).
 *
 *   header (72 bytes)
 *     0  8  magic "FERRYCRY"
 *     8  1  format version (1)
 *     9  1  log2 of the chunk size (16: 64 KiB)
 *    10  1  scrypt log2 N     11  1  scrypt r     12  1  scrypt p
 *    13  3  reserved, zero
 *    16 32  salt (HKDF salt, random per file)
 *    48  8  nonce prefix (random per file)
 *    56 16  key check (HKDF output, tells a wrong passphrase from damage)
 *   records, one per plaintext chunk
 *     AES-256-GCM(ciphertext of up to 64 KiB) || 16-byte tag
 *     nonce = prefix || uint32be(index); AAD = header || final flag (0 or 1)
 *
 * Every record but the last holds exactly 64 KiB of plaintext; the last one,
 * flagged final, holds 0 to 64 KiB - 1 bytes (a file whose size is a multiple
 * of 64 KiB ends with an empty final record). So the plaintext size follows
 * from the file size alone, a cut at any point is detected (the record that
 * ends up last was not sealed as final, or the size is impossible) and so is
 * reordering (the index is part of the nonce).
 */
export const MAGIC = Buffer.from('FERRYCRY', 'ascii');
export const FORMAT_VERSION = 1;
export const CHUNK_LOG2 = 16;
export const CHUNK_SIZE = 1 << CHUNK_LOG2;
export const TAG_SIZE = 16;
export const RECORD_SIZE = CHUNK_SIZE + TAG_SIZE;
export const HEADER_SIZE = 72;
export const SALT_SIZE = 32;
export const NONCE_PREFIX_SIZE = 8;
export const KEY_CHECK_SIZE = 16;
/** The record index is a 32-bit counter. */
export const MAX_RECORDS = 2 ** 32;

export interface ScryptParams {
  logN: number;
  r: number;
  p: number;
}

/** scrypt cost for new files: N = 2^15, r = 8, p = 1 (32 MiB, ~0.1 s once per Fs instance). */
export const DEFAULT_SCRYPT: ScryptParams = { logN: 15, r: 8, p: 1 };

/** Bounds accepted when reading a header, so a crafted one cannot ask for absurd memory or time. */
const SCRYPT_LIMITS = { logN: [10, 20], r: [1, 32], p: [1, 16] } as const;

export interface Header {
  /** The 72 header bytes as stored (they are the AAD prefix of every record). */
  bytes: Buffer;
  scrypt: ScryptParams;
  salt: Buffer;
  noncePrefix: Buffer;
  keyCheck: Buffer;
}

export function encodeHeader(scrypt: ScryptParams, salt: Buffer, noncePrefix: Buffer, keyCheck: Buffer): Header {
  const bytes = Buffer.alloc(HEADER_SIZE);
  MAGIC.copy(bytes, 0);
  bytes[8] = FORMAT_VERSION;
  bytes[9] = CHUNK_LOG2;
  bytes[10] = scrypt.logN;
  bytes[11] = scrypt.r;
  bytes[12] = scrypt.p;
  salt.copy(bytes, 16);
  noncePrefix.copy(bytes, 48);
  keyCheck.copy(bytes, 56);
  return decodeHeader(bytes, '');
}

export function decodeHeader(bytes: Buffer, path: string): Header {
  if (bytes.length < HEADER_SIZE) throw FsCryptError.format(path, `shorter than the ${HEADER_SIZE}-byte header`);
  if (!bytes.subarray(0, 8).equals(MAGIC)) throw FsCryptError.format(path, 'no FERRYCRY magic');
  if (bytes[8] !== FORMAT_VERSION) throw FsCryptError.format(path, `unsupported format version ${bytes[8]}`);
  if (bytes[9] !== CHUNK_LOG2) throw FsCryptError.format(path, `unsupported chunk size 2^${bytes[9]}`);
  const scrypt = { logN: bytes[10]!, r: bytes[11]!, p: bytes[12]! };
  for (const k of ['logN', 'r', 'p'] as const) {
    const [lo, hi] = SCRYPT_LIMITS[k];
    if (scrypt[k] < lo || scrypt[k] > hi) throw FsCryptError.format(path, `scrypt ${k} ${scrypt[k]} is out of range`);
  }
  if (bytes[13] !== 0 || bytes[14] !== 0 || bytes[15] !== 0) throw FsCryptError.format(path, 'reserved header bytes are set');
  const copy = Buffer.from(bytes.subarray(0, HEADER_SIZE));
  return {
    bytes: copy,
    scrypt,
    salt: copy.subarray(16, 48),
    noncePrefix: copy.subarray(48, 56),
    keyCheck: copy.subarray(56, 72),
  };
}

/** Stored size of a plaintext of `plainSize` bytes. */
export function cipherSize(plainSize: number): number {
  return HEADER_SIZE + plainSize + TAG_SIZE * (Math.floor(plainSize / CHUNK_SIZE) + 1);
}

export interface Layout {
  plainSize: number;
  /** Index of the final record (there are finalIndex + 1 records). */
  finalIndex: number;
  /** Stored length of the final record (its plaintext plus the tag). */
  finalRecordLength: number;
}

/** The record layout of a stored file, or undefined when no plaintext size yields `storedSize`. */
export function layoutOf(storedSize: number): Layout | undefined {
  const body = storedSize - HEADER_SIZE - TAG_SIZE;
  if (body < 0) return undefined;
  const finalIndex = Math.floor(body / RECORD_SIZE);
  const rest = body - finalIndex * RECORD_SIZE;
  if (rest >= CHUNK_SIZE) return undefined;
  return { plainSize: finalIndex * CHUNK_SIZE + rest, finalIndex, finalRecordLength: rest + TAG_SIZE };
}

/** Best-effort plaintext size for listings, also for a damaged file (never negative). */
export function reportedPlainSize(storedSize: number): number {
  const layout = layoutOf(storedSize);
  if (layout) return layout.plainSize;
  const body = Math.max(0, storedSize - HEADER_SIZE);
  return Math.max(0, body - TAG_SIZE * (Math.floor(body / RECORD_SIZE) + 1));
}

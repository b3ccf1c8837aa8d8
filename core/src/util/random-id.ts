import crypto from 'node:crypto';

/** Random bytes drawn ahead, so an ID costs a copy rather than a call into the CSPRNG each time. */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `bytes` random bytes (from the CSPRNG, drawn POOL_SIZE at a time) as hex:
 * identifiers made for every request (connection IDs), not secrets.
 */
export function randomHexId(bytes: number): string {
  if (offset + bytes > pool.length) {
    pool = crypto.randomBytes(Math.max(POOL_SIZE, bytes));
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return id;
}

import { configurePool, hash as argon2Hash, verify as argon2Verify } from '@ferry/argon2-pool';
import crypto from 'node:crypto';
import os from 'node:os';

/**
 * argon2 runs on libuv's thread pool (UV_THREADPOOL_SIZE threads, 4 by
 * default), the pool that also serves file system calls, DNS lookups and
 * zlib. A login storm with a hash on every thread would hold each file read of
 * every transfer, and each request needing the pool, behind a ~100 ms hash, and
 * would give the event loop's thread a fifth of the CPU on a small machine. So
 * at most HASHING_SLOTS hashes or verifications run at once (half the pool, no
 * more than the cores, at least 1); the others wait their turn in order. On 2
 * cores two hashes at once already use both, so the rate of logins is the same.
 */
export const HASHING_SLOTS = Math.max(1, Math.min(Math.floor((Number(process.env.UV_THREADPOOL_SIZE) || 4) / 2), os.availableParallelism()));
/**
 * Each hash needs 19 MiB of working memory. The launcher's fixed mmap
 * threshold (core/bin/ferry) makes glibc map such a block for every hash and
 * give it back at once, and faulting it in again 4 KiB at a time cost more
 * than the hash itself (docs/performance-history.md). @ferry/argon2-pool keeps one
 * block per slot while logins follow each other and frees them once no hash
 * has run for POOL_IDLE_MS, so memory returns to where it was a second after
 * the last login.
 */
const POOL_IDLE_MS = 1000;
configurePool({ blocks: HASHING_SLOTS, idleMs: POOL_IDLE_MS });

let hashing = 0;
const waiting: (() => void)[] = [];

/** Runs `fn` in one of the HASHING_SLOTS slots (a freed slot goes to the first waiter). */
async function inSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (hashing < HASHING_SLOTS) hashing++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else hashing--;
  }
}

/** Hashes running and waiting for a slot (for tests and metrics). */
export function hashingLoad(): { running: number; waiting: number } {
  return { running: hashing, waiting: waiting.length };
}

/** argon2id hashing for passwords (never stored or returned in clear). */
export async function hashPassword(password: string): Promise<string> {
  return inSlot(() => argon2Hash(password, { type: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 }));
}

/** True for a stored argon2 hash (as backups carry them), which is kept as is rather than hashed again. */
export function isPasswordHash(value: string): boolean {
  return /^\$argon2(id|i|d)\$/.test(value);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  if (!hash) return false;
  try {
    return await inSlot(() => argon2Verify(hash, password));
  } catch {
    return false;
  }
}

/** A dummy hash, verified against when an account does not exist, so timing does not reveal it. */
let dummy: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummy ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  await verifyPassword(await dummy, password);
}

/** A strong random password (used for the generated first admin). */
export function generatePassword(): string {
  return crypto.randomBytes(18).toString('base64url');
}

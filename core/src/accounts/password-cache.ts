import crypto from 'node:crypto';
import { inject, Lifecycle, scoped } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { AuthCacheConfig, FerryConfig } from '../config/schema.js';
import { verifyPassword } from './password.js';

/** What a verified password unlocked: a share, an admin or a user account. */
export type PasswordSubject = 'share' | 'admin' | 'user';

/**
 * Remembers, for `auth_cache.ttl` seconds, that a password matched a stored
 * argon2 hash, so that the requests following a successful one (each chunk of
 * a TUS upload, each file of a share, token requests in a loop) skip the
 * 100+ ms of argon2 verification.
 *
 * Safe by construction:
 * - nothing secret is kept: an entry is the HMAC-SHA256, under a random key
 *   drawn at start-up and never stored, of (subject kind, id, stored hash,
 *   password); knowing the memory gives neither the password nor a way to test
 *   guesses faster than argon2;
 * - only successes are cached: a wrong password is always verified with argon2
 *   (brute force stays slow, and is scored by the defender as before);
 * - the stored hash is part of the key: a changed password (a new hash, even
 *   for the same password) or a deleted and re-created share or account never
 *   matches an old entry; callers still load the share or account on every
 *   request, so expiration, status and use counts are checked each time;
 * - entries expire `ttl` seconds after the verification (not extended by use),
 *   and at most `max_entries` are kept (least recently used dropped first).
 *
 * Per node and in memory: another node verifies once itself.
 */
@scoped(Lifecycle.ContainerScoped)
export class PasswordCache {
  clock: () => number = Date.now;
  private readonly key = crypto.randomBytes(32);
  private readonly entries = new Map<string, number>();
  private readonly cfg: AuthCacheConfig;
  /** argon2 verifications done (hits skip them): for tests and benchmarks. */
  verifications = 0;

  constructor(@inject(TOKENS.Config) config: FerryConfig) {
    this.cfg = config.auth_cache;
  }

  private id(kind: PasswordSubject, subject: string, hash: string, password: string): string {
    const h = crypto.createHmac('sha256', this.key);
    for (const part of [kind, subject, hash, password]) {
      // length-prefixed parts: no two different tuples give the same input
      h.update(`${Buffer.byteLength(part)}:`).update(part);
    }
    return h.digest('base64url');
  }

  /**
   * Whether `password` matches `hash` (argon2), the stored hash of `subject`:
   * from the cache when the same password was verified for the same subject
   * and hash within the TTL, else verified and remembered on success.
   */
  async verify(kind: PasswordSubject, subject: string, hash: string, password: string): Promise<boolean> {
    if (!hash) return false;
    if (this.cfg.ttl <= 0) {
      this.verifications++;
      return verifyPassword(hash, password);
    }
    const id = this.id(kind, subject, hash, password);
    const now = this.clock();
    const until = this.entries.get(id);
    if (until !== undefined) {
      this.entries.delete(id);
      if (until > now) {
        this.entries.set(id, until);
        return true;
      }
    }
    this.verifications++;
    if (!(await verifyPassword(hash, password))) return false;
    while (this.entries.size >= this.cfg.max_entries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(id, now + this.cfg.ttl * 1000);
    return true;
  }

  /** Entries held now (expired ones included until met or pushed out). */
  get size(): number {
    return this.entries.size;
  }
}

import { createHmac, randomBytes } from 'node:crypto';

/**
 * The logins verified lately, so a client sending its credentials with
 * every request (as WebDAV clients do) is not checked with argon2 each time.
 * Keyed by an HMAC of username and password under a key of this process:
 * no password or plain hash of one is kept. An entry lives `ttl` seconds
 * from its login, and is dropped at once when the account changes on any
 * node (the SDK's account changes: see dropUser / clear). A login verified
 * while a change arrived is not kept (stamp / add), and nothing is kept nor
 * answered while the change feed is not trusted (`trusted`).
 */
export class LoginCache {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, { username: string; expires: number }>();

  private generation = 0;

  constructor(
    private readonly ttlSeconds: number,
    private readonly maxEntries = 10_000,
    /** Whether every account change reaches this process now (false: the cache is bypassed). */
    private readonly trusted: () => boolean = () => true,
  ) {}

  /** Taken before a login is verified; given back to add(). */
  stamp(): number {
    return this.generation;
  }

  keyOf(username: string, password: string): string {
    return createHmac('sha256', this.key).update(username).update('\0').update(password).digest('base64url');
  }

  /** The username of a verified login still fresh, or null. */
  get(key: string): string | null {
    const e = this.entries.get(key);
    if (!e) return null;
    if (!this.trusted()) {
      this.entries.clear();
      return null;
    }
    if (e.expires <= Date.now()) {
      this.entries.delete(key);
      return null;
    }
    return e.username;
  }

  /** When the entry of `key` expires (Unix ms, 0 for none). */
  expiry(key: string): number {
    return this.entries.get(key)?.expires ?? 0;
  }

  /** Keeps a login verified since `stamp` (not when an account changed meanwhile or changes may be missed). */
  add(key: string, username: string, stamp: number): void {
    if (this.ttlSeconds <= 0 || stamp !== this.generation || !this.trusted()) return;
    if (this.entries.size >= this.maxEntries) {
      const now = Date.now();
      for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
      // still full: the oldest entry goes (Map keeps insertion order)
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, { username, expires: Date.now() + this.ttlSeconds * 1000 });
  }

  /** Drops the entries of an account (changed or deleted). */
  dropUser(username: string): void {
    this.generation++;
    for (const [k, e] of this.entries) if (e.username === username) this.entries.delete(k);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

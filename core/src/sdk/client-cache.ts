import { createHash } from 'node:crypto';

/** A client lent by a {@link ClientCache}: give it back with release() once done (Fs.close()). */
export interface ClientLease<C> {
  readonly client: C;
  /** Gives the client back; the first call counts, later ones do nothing. */
  release(): void;
}

export interface ClientCacheOptions<C> {
  /** How long a client nobody holds is kept for the next user (ms). Default 60 s. */
  idleMs?: number;
  /** Frees a client no longer kept (its sockets, timers). */
  destroy(client: C): void;
}

interface Entry<C> {
  client: C;
  holders: number;
  timer?: NodeJS.Timeout;
}

/**
 * The remote-storage clients of a plugin, one per identity (endpoint,
 * credentials, options), shared by every Fs using that identity: an Fs is
 * created for each session (each HTTP request of the file API), and a client
 * of its own would open new connections and resolve its configuration every
 * time. A client is destroyed once nobody has held it for `idleMs`.
 *
 * Identities are kept as SHA-256 digests, so no secret that is part of one
 * stays in the cache's keys.
 */
export class ClientCache<C> {
  private readonly entries = new Map<string, Entry<C>>();
  private readonly idleMs: number;

  constructor(private readonly o: ClientCacheOptions<C>) {
    this.idleMs = o.idleMs ?? 60_000;
  }

  /** The client of `identity` (its parts joined unambiguously), created with `create` when none is kept. */
  acquire(identity: readonly unknown[], create: () => C): ClientLease<C> {
    const key = createHash('sha256').update(JSON.stringify(identity)).digest('base64');
    let e = this.entries.get(key);
    if (!e) {
      e = { client: create(), holders: 0 };
      this.entries.set(key, e);
    }
    const entry = e;
    if (entry.timer) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
    }
    entry.holders++;
    let released = false;
    return {
      client: entry.client,
      release: () => {
        if (released) return;
        released = true;
        if (--entry.holders > 0) return;
        if (this.entries.get(key) !== entry) return void this.o.destroy(entry.client); // forgotten by clear()
        entry.timer = setTimeout(() => this.drop(key, entry), this.idleMs);
        entry.timer.unref();
      },
    };
  }

  /** Clients kept (held or idle). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Forgets every client (plugin teardown, tests): idle ones are destroyed
   * now, held ones once their last holder releases them (another app of the
   * same process may still be using them), and none is handed out again.
   */
  clear(): void {
    for (const [key, e] of this.entries) {
      this.entries.delete(key);
      if (e.timer) clearTimeout(e.timer);
      if (e.holders === 0) this.o.destroy(e.client);
    }
  }

  private drop(key: string, e: Entry<C>): void {
    if (e.holders > 0 || this.entries.get(key) !== e) return;
    this.entries.delete(key);
    this.o.destroy(e.client);
  }
}

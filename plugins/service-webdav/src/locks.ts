import { randomUUID } from 'node:crypto';

/** A WebDAV write lock (RFC 4918 section 6). */
export interface DavLock {
  /** `opaquelocktoken:<uuid>`. */
  token: string;
  /** The account whose tree the lock is in. */
  username: string;
  /** The virtual path locked (its root). */
  path: string;
  depth: 0 | 'infinity';
  scope: 'exclusive' | 'shared';
  /** The owner element sent by the client, as XML ('' for none). */
  owner: string;
  /** Seconds granted. */
  timeout: number;
  /** Unix ms. */
  expires: number;
}

const within = (path: string, root: string) => path === root || root === '/' || path.startsWith(root + '/');

/**
 * The locks of this node, in memory: they do not survive a restart and are
 * not shared between the nodes of a cluster (a client holding a lock on one
 * node is not seen by another). Expired locks are dropped as they are met.
 */
export class LockStore {
  private readonly locks = new Map<string, DavLock>();

  private live(): DavLock[] {
    const now = Date.now();
    const out: DavLock[] = [];
    for (const l of this.locks.values()) {
      if (l.expires <= now) this.locks.delete(l.token);
      else out.push(l);
    }
    return out;
  }

  get(token: string): DavLock | undefined {
    return this.live().find((l) => l.token === token);
  }

  /** The locks that apply to `path`: on it, or on an ancestor with depth infinity. */
  covering(username: string, path: string): DavLock[] {
    return this.live().filter((l) => l.username === username && (l.path === path || (l.depth === 'infinity' && within(path, l.path))));
  }

  /** The locks whose root is `path` or below it. */
  under(username: string, path: string): DavLock[] {
    return this.live().filter((l) => l.username === username && within(l.path, path));
  }

  /** The locks that would conflict with a new lock (null: none). */
  conflicts(username: string, path: string, depth: 0 | 'infinity', scope: 'exclusive' | 'shared'): DavLock[] {
    const found = new Set(this.covering(username, path));
    if (depth === 'infinity') for (const l of this.under(username, path)) found.add(l);
    return [...found].filter((l) => scope === 'exclusive' || l.scope === 'exclusive');
  }

  create(o: Omit<DavLock, 'token' | 'expires'>): DavLock {
    const lock: DavLock = { ...o, token: `opaquelocktoken:${randomUUID()}`, expires: Date.now() + o.timeout * 1000 };
    this.locks.set(lock.token, lock);
    return lock;
  }

  refresh(lock: DavLock, timeout: number): DavLock {
    lock.timeout = timeout;
    lock.expires = Date.now() + timeout * 1000;
    return lock;
  }

  remove(token: string): boolean {
    return this.locks.delete(token);
  }

  /** Drops the locks at `path` and below (the resources were deleted or moved away). */
  removeUnder(username: string, path: string): void {
    for (const l of this.under(username, path)) this.locks.delete(l.token);
  }
}

import { randomUUID } from 'node:crypto';
import type { PluginDatabase } from '@ferry/core';
import type { LockRow } from './tables.js';

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
const TABLE = 'webdav_locks';

/** The locks of `locks` that apply to `path`: on it, or on an ancestor with depth infinity. */
export const coveringIn = (locks: DavLock[], path: string): DavLock[] =>
  locks.filter((l) => l.path === path || (l.depth === 'infinity' && within(path, l.path)));

const fromRow = (r: LockRow): DavLock => ({
  token: r.token,
  username: r.username,
  path: r.path,
  depth: Number(r.depth) === 0 ? 0 : 'infinity',
  scope: r.scope === 'shared' ? 'shared' : 'exclusive',
  owner: r.owner,
  timeout: Number(r.timeout),
  expires: Number(r.expires),
});

/**
 * The locks, in the core database (table webdav_locks): every node of a
 * cluster sees the same locks, and they survive a restart. An account
 * holds few locks, so its live locks are read whole and matched here.
 * Expired rows are deleted as locks are created.
 */
export class LockStore {
  constructor(private readonly db: PluginDatabase) {}

  private knex() {
    return this.db.em().getKnex();
  }

  /** The live locks of an account. */
  async live(username: string): Promise<DavLock[]> {
    const rows = (await this.knex()(TABLE).where('username', username).andWhere('expires', '>', Date.now())) as LockRow[];
    return rows.map(fromRow);
  }

  async get(token: string): Promise<DavLock | undefined> {
    const row = (await this.knex()(TABLE).where('token', token).andWhere('expires', '>', Date.now()).first()) as LockRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The locks that apply to `path`: on it, or on an ancestor with depth infinity. */
  async covering(username: string, path: string): Promise<DavLock[]> {
    return coveringIn(await this.live(username), path);
  }

  /** The locks whose root is `path` or below it. */
  async under(username: string, path: string): Promise<DavLock[]> {
    return (await this.live(username)).filter((l) => within(l.path, path));
  }

  /** The locks a new lock would conflict with. */
  async conflicts(username: string, path: string, depth: 0 | 'infinity', scope: 'exclusive' | 'shared'): Promise<DavLock[]> {
    const found = new Map((await this.covering(username, path)).map((l) => [l.token, l]));
    if (depth === 'infinity') for (const l of await this.under(username, path)) found.set(l.token, l);
    return [...found.values()].filter((l) => scope === 'exclusive' || l.scope === 'exclusive');
  }

  async create(o: Omit<DavLock, 'token' | 'expires'>): Promise<DavLock> {
    const now = Date.now();
    await this.knex()(TABLE).where('expires', '<=', now).del();
    const lock: DavLock = { ...o, token: `opaquelocktoken:${randomUUID()}`, expires: now + o.timeout * 1000 };
    const row: LockRow = { ...lock, depth: lock.depth === 0 ? 0 : 1 };
    await this.knex()(TABLE).insert(row);
    return lock;
  }

  async refresh(lock: DavLock, timeout: number): Promise<DavLock> {
    const expires = Date.now() + timeout * 1000;
    await this.knex()(TABLE).where('token', lock.token).update({ timeout, expires });
    return { ...lock, timeout, expires };
  }

  async remove(token: string): Promise<void> {
    await this.knex()(TABLE).where('token', token).del();
  }

  /** Drops the locks at `path` and below (the resources were deleted or moved away). */
  async removeUnder(username: string, path: string): Promise<void> {
    const tokens = (await this.under(username, path)).map((l) => l.token);
    if (tokens.length) await this.knex()(TABLE).whereIn('token', tokens).del();
  }
}

import { inject, Lifecycle, scoped } from 'tsyringe';
import { ChangeFeed, type Change } from '../data/change-feed.js';
import type { EffectiveUser } from './effective-user.js';
import type { UserWithMappings } from './user-rows.js';

/** Users kept at most (the oldest read goes first). */
const MAX_USERS = 10_000;
/** Token ids known not to be revoked, kept at most. */
const MAX_TOKENS = 50_000;

/** A user as read with its role and mappings, and its effective views once computed. */
export interface CachedUser {
  mappings: UserWithMappings;
  /** Login view: groups merged, no virtual folders. */
  view?: EffectiveUser;
  /** With the virtual folders (what file sessions use). */
  full?: EffectiveUser;
}

/**
 * Users (with groups and folders merged) and live token ids held in memory,
 * so a request does not read its account from the database, under one
 * rule: a change made on any node drops the copies of every node before it
 * matters (data/change-feed.ts; docs/cluster.md). Provider events (an
 * account, group, folder or role added, updated or deleted) and token
 * revocations are published on the feed; a user's change drops that user,
 * a group, folder or role change drops every user. While the feed is not
 * trusted (the PostgreSQL listening connection is down) nothing is answered
 * from memory nor kept.
 *
 * A read that raced a change must not be kept: callers take a stamp()
 * before reading the database and give it back when storing; a change
 * since then refuses the store.
 *
 * The used quota and transfer counters in a cached user are as read: quota
 * checks read the stored counters themselves (vfs/quota-tracker.ts).
 */
@scoped(Lifecycle.ContainerScoped)
export class AccountCache {
  private readonly users = new Map<string, CachedUser>();
  private readonly liveTokens = new Map<string, number>();
  private generation = 0;

  constructor(@inject(ChangeFeed) private readonly feed: ChangeFeed) {
    feed.subscribe((c) => this.drop(c));
  }

  /** Taken before a database read whose result may be stored. */
  stamp(): number {
    return this.generation;
  }

  user(username: string): CachedUser | undefined {
    if (!this.feed.trusted) return undefined;
    return this.users.get(username);
  }

  /** Keeps a user read since `stamp`; returns the entry kept (or a fresh one, not kept, when a change came meanwhile). */
  storeUser(username: string, mappings: UserWithMappings, stamp: number): CachedUser {
    const entry: CachedUser = { mappings };
    if (stamp !== this.generation || !this.feed.trusted) return entry;
    this.users.delete(username);
    this.users.set(username, entry);
    if (this.users.size > MAX_USERS) this.users.delete(this.users.keys().next().value!);
    return entry;
  }

  /** Whether the token id is known not to be revoked (it expires at `exp`, seconds). */
  tokenLive(jti: string): boolean {
    if (!this.feed.trusted) return false;
    const exp = this.liveTokens.get(jti);
    if (exp === undefined) return false;
    if (exp * 1000 > Date.now()) return true;
    this.liveTokens.delete(jti);
    return false;
  }

  storeLiveToken(jti: string, exp: number, stamp: number): void {
    if (stamp !== this.generation || !this.feed.trusted) return;
    this.liveTokens.set(jti, exp);
    if (this.liveTokens.size > MAX_TOKENS) this.liveTokens.delete(this.liveTokens.keys().next().value!);
  }

  /** Publishes a change (this node drops its copies at once, the others when the notification arrives). */
  changed(c: Change): void {
    this.feed.publish(c);
  }

  private drop(c: Change): void {
    this.generation++;
    switch (c.type) {
      case 'user':
        this.users.delete(c.name);
        break;
      case 'jti':
        this.liveTokens.delete(c.name);
        break;
      case 'group':
      case 'folder':
      case 'role':
        this.users.clear();
        break;
      case 'all':
        this.users.clear();
        this.liveTokens.clear();
        break;
      default:
        // admins, API keys, shares...: not kept here
        break;
    }
  }
}

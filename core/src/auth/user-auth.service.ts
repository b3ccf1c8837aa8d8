import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { User, Role } from '../data/entities/index.js';
import type { UserIdentity } from './credentials.js';
import { accountRefusal, type AccessState } from '../accounts/account-access.js';
import { burnPasswordCheck } from '../accounts/password.js';
import { PasswordCache } from '../accounts/password-cache.js';
import { UserService } from '../accounts/user.service.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { selectUserForToken, selectUserWithMappings } from '../accounts/user-rows.js';
import { AccountCache, type CachedUser } from '../accounts/account-cache.js';
import { runStatement } from '../data/bound-sql.js';
import type { Protocol } from '../sdk/protocols.js';

/** What login checks read: a User, or better its EffectiveUser (groups' filters and expiration merged). */
export type LoginState = AccessState;

/** Why a user may not log in now over `protocol` (checked as its login protocol), or null when it may. */
export function loginRefusal(user: LoginState, ip: string, protocol: Protocol, now = Date.now()): string | null {
  return accountRefusal(user, ip, protocol, { verb: 'login', now });
}

/** Password and state checks for user logins (the user CRUD lives in UserService). */
@injectable()
export class UserAuthService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(UserService) private readonly users: UserService,
    @inject(PasswordCache) private readonly passwords: PasswordCache,
    @inject(AccountCache) private readonly cache: AccountCache,
  ) {}

  /** The user merged with its groups (filters, limits, expiration) without virtual folders: what login checks apply to. */
  async loginView(user: User): Promise<EffectiveUser> {
    return this.users.effectiveOf(user, { folders: false });
  }

  /**
   * For a bearer token of `username` (expiring at `exp`, seconds): whether
   * its `jti` is revoked, the user (read-only, null when it no longer
   * exists), its login view (see loginView) and the cache entry holding
   * them (its effective view with folders is kept there too). From memory
   * when both the token and the user are known (AccountCache: a change on
   * any node drops them first), else one statement reads them.
   */
  async findForToken(
    username: string,
    jti: string,
    exp: number,
  ): Promise<{ revoked: boolean; user: User | null; view: EffectiveUser | null; entry: CachedUser | null }> {
    const cached = this.cache.user(username);
    if (cached && this.cache.tokenLive(jti)) {
      cached.view ??= await this.users.effectiveOfMappings(cached.mappings, { folders: false });
      return { revoked: false, user: cached.mappings.user, view: cached.view, entry: cached };
    }
    const em = this.orm.em;
    const stamp = this.cache.stamp();
    const r = await selectUserForToken(em, username, jti);
    if (r.revoked || !r.user) return { revoked: r.revoked, user: null, view: null, entry: null };
    this.cache.storeLiveToken(jti, exp, stamp);
    const entry = this.cache.storeUser(username, r.user, stamp);
    entry.view ??= await this.users.effectiveOfMappings(r.user, { folders: false }, em);
    return { revoked: false, user: r.user.user, view: entry.view, entry };
  }

  /**
   * The user of a web session (http/web-session.ts) with its login view and
   * the cache entry holding them (AccountCache: a change on any node drops
   * them first), or null when the account no longer exists.
   */
  async findForSession(username: string): Promise<{ user: User; view: EffectiveUser; entry: CachedUser } | null> {
    const em = this.orm.em;
    let entry = this.cache.user(username);
    if (!entry) {
      const stamp = this.cache.stamp();
      const r = await selectUserWithMappings(em, username);
      if (!r) return null;
      entry = this.cache.storeUser(username, r, stamp);
    }
    entry.view ??= await this.users.effectiveOfMappings(entry.mappings, { folders: false }, em);
    return { user: entry.mappings.user, view: entry.view, entry };
  }

  async findByUsername(username: string): Promise<User | null> {
    return this.orm.em.fork().findOne(User, { username }, { populate: ['role'] });
  }

  /**
   * A password login: the user (read-only, with its role) and its login view
   * (see loginView) when the password is right, else null. One statement
   * reads the user with its groups (plain SQL: a login pays the hash, not an
   * entity hydration); unknown usernames pay a hash too, so timing does not
   * reveal them.
   */
  async checkLogin(username: string, password: string): Promise<{ user: User; view: EffectiveUser } | null> {
    const em = this.orm.em;
    let entry = this.cache.user(username);
    if (!entry) {
      const stamp = this.cache.stamp();
      const r = await selectUserWithMappings(em, username);
      if (r) entry = this.cache.storeUser(username, r, stamp);
    }
    const r = entry?.mappings;
    if (!entry || !r || !r.user.password_hash) {
      await burnPasswordCheck(password);
      return null;
    }
    // repeated logins with the same password within auth_cache.ttl are not hashed again (accounts/password-cache.ts)
    if (!(await this.passwords.verify('user', String(r.user.id), r.user.password_hash, password))) return null;
    entry.view ??= await this.users.effectiveOfMappings(r, { folders: false }, em);
    return { user: r.user, view: entry.view };
  }

  async touchLogin(id: number): Promise<void> {
    await runStatement(this.orm.em, 'update users set last_login = ? where id = ?', [Date.now(), id]);
  }

  identity(user: User): UserIdentity {
    return { id: user.id, username: user.username, role: user.role ? (user.role as Role).name : '' };
  }
}

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
import { selectUserForToken, type UserWithMappings } from '../accounts/user-rows.js';

/** What login checks read: a User, or better its EffectiveUser (groups' filters and expiration merged). */
export type LoginState = AccessState;

/** Why a user may not log in now, or null when it may. */
export function loginRefusal(user: LoginState, ip: string, protocol = 'HTTP', now = Date.now()): string | null {
  return accountRefusal(user, ip, protocol, { verb: 'login', now });
}

/** Password and state checks for user logins (the user CRUD lives in UserService). */
@injectable()
export class UserAuthService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(UserService) private readonly users: UserService,
    @inject(PasswordCache) private readonly passwords: PasswordCache,
  ) {}

  /** The user merged with its groups (filters, limits, expiration) without virtual folders: what login checks apply to. */
  async loginView(user: User): Promise<EffectiveUser> {
    return this.users.effectiveOf(user, { folders: false });
  }

  /**
   * For a bearer token of `username`, in one statement: whether its `jti` is
   * revoked, the user (read-only, null when it no longer exists) and its
   * login view (see loginView). Read fresh on every request.
   */
  async findForToken(
    username: string,
    jti: string,
  ): Promise<{ revoked: boolean; user: User | null; view: EffectiveUser | null; mappings: UserWithMappings | null }> {
    const em = this.orm.em;
    const r = await selectUserForToken(em, username, jti);
    if (r.revoked || !r.user) return { revoked: r.revoked, user: null, view: null, mappings: null };
    return { revoked: false, user: r.user.user, view: await this.users.effectiveOfMappings(r.user, { folders: false }, em), mappings: r.user };
  }

  async findByUsername(username: string): Promise<User | null> {
    return this.orm.em.fork().findOne(User, { username }, { populate: ['role'] });
  }

  async checkPassword(username: string, password: string): Promise<User | null> {
    const user = await this.findByUsername(username);
    if (!user || !user.password_hash) {
      await burnPasswordCheck(password);
      return null;
    }
    // repeated logins with the same password within auth_cache.ttl are not hashed again (accounts/password-cache.ts)
    return (await this.passwords.verify('user', String(user.id), user.password_hash, password)) ? user : null;
  }

  async touchLogin(id: number): Promise<void> {
    await this.orm.em.fork().nativeUpdate(User, { id }, { last_login: Date.now() });
  }

  identity(user: User): UserIdentity {
    return { id: user.id, username: user.username, role: user.role ? (user.role as Role).name : '' };
  }
}

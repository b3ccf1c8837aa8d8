import { ForbiddenError, InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { User } from '../data/entities/index.js';
import { hashPassword, verifyPassword } from './password.js';
import { passwordStrengthProblem } from './password-policy.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { UserService } from './user.service.js';

export interface UserProfile {
  email: string;
  description: string;
  allow_api_key_auth: boolean;
  public_keys: string[];
}

/**
 * What GET /api/v2/user/profile answers besides the profile (an addition to
 * v2.7, for the web client): the account's effective web client options
 * (groups merged) and its two-factor state, so a client can offer only what
 * the server accepts.
 */
export interface UserProfileView extends UserProfile {
  web_client: string[];
  two_factor: { enabled: boolean; config_name: string; protocols: string[]; required_protocols: string[] };
}

/** A user's self-service settings (profile, password), limited by the web client options of the account. */
@injectable()
export class UserProfileService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(UserService) private readonly users: UserService,
  ) {}

  private async restrictions(username: string): Promise<Set<string>> {
    const eff = await this.users.findEffectiveUser(username);
    return new Set((eff?.filters.web_client as string[] | undefined) ?? []);
  }

  private async load(username: string) {
    const em = this.orm.em.fork();
    const user = await em.findOne(User, { username });
    if (!user) throw new NotFoundError(`user "${username}" not found`);
    return { em, user };
  }

  async get(username: string): Promise<UserProfileView> {
    const { user } = await this.load(username);
    const eff = await this.users.findEffectiveUser(username, { folders: false });
    const f = user.filters as { allow_api_key_auth?: boolean };
    // the stored TOTP configuration (auth/two-factor.service.ts writes it; read here without importing auth, which imports accounts)
    const totp = (user.filters as { totp_config?: { enabled?: boolean; config_name: string; protocols?: string[] } }).totp_config;
    const enabled = !!totp?.enabled;
    return {
      email: user.email,
      description: user.description ?? '',
      allow_api_key_auth: f.allow_api_key_auth ?? false,
      public_keys: user.public_keys ?? [],
      web_client: [...((eff?.filters.web_client as string[] | undefined) ?? [])],
      two_factor: {
        enabled,
        config_name: enabled ? totp!.config_name : '',
        // a configuration stored without protocols applies to the REST API only (two-factor.service.ts)
        protocols: enabled ? [...(totp!.protocols ?? ['HTTP'])] : [],
        required_protocols: [...((eff?.filters.two_factor_protocols as string[] | undefined) ?? [])],
      },
    };
  }

  /**
   * Updates the profile. Fields the account may not change (web client
   * options info-change-disabled, api-key-auth-change-disabled,
   * publickey-change-disabled) are left as they are; when none may change
   * the update is refused.
   */
  async update(username: string, p: Partial<UserProfile>, actor: Actor): Promise<void> {
    const wc = await this.restrictions(username);
    const canInfo = !wc.has('info-change-disabled');
    const canKeys = !wc.has('publickey-change-disabled');
    const canApiKey = !wc.has('api-key-auth-change-disabled');
    if (!canInfo && !canKeys && !canApiKey) throw new ForbiddenError('this account is not allowed to change its profile');
    const { em, user } = await this.load(username);
    if (canInfo && p.email !== undefined) user.email = p.email;
    if (canInfo && p.description !== undefined) user.description = p.description;
    if (canKeys && p.public_keys !== undefined) user.public_keys = p.public_keys;
    if (canApiKey && p.allow_api_key_auth !== undefined) user.filters = { ...user.filters, allow_api_key_auth: p.allow_api_key_auth };
    user.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'user', username, { username, email: user.email, public_keys: user.public_keys }, actor);
  }

  async changePassword(username: string, current: string, next: string, actor: Actor): Promise<void> {
    const wc = await this.restrictions(username);
    if (wc.has('password-change-disabled')) throw new ForbiddenError('this account is not allowed to change its password');
    const { em, user } = await this.load(username);
    if (!(await verifyPassword(user.password_hash, current))) throw new ForbiddenError('the current password does not match');
    if (current === next) throw new InvalidError('the new password must differ from the current one');
    // the same strength policy as a password reset (filters.password_strength, groups merged)
    const eff = await this.users.findEffectiveUser(username, { folders: false });
    const weak = passwordStrengthProblem(next, eff?.filters.password_strength as number | undefined);
    if (weak) throw new InvalidError(`"new_password": ${weak}`);
    user.password_hash = await hashPassword(next);
    user.last_password_change = Date.now();
    user.filters = { ...user.filters, require_password_change: false };
    user.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'user', username, { username }, actor);
  }
}

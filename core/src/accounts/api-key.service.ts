import { ForbiddenError, InvalidError, NotFoundError } from '../errors.js';
import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { MikroORM, EntityManager } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Admin, ApiKey, User } from '../data/entities/index.js';
import type { ListQuery } from '../util/common.input.js';
import type { AdminIdentity } from '../auth/credentials.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';

export interface ApiKeyInput {
  name: string;
  scope: 1 | 2;
  description: string;
  expires_at: number;
  user: string;
  admin: string;
}

export const API_KEY_SCOPE = { Admin: 1, User: 2 } as const;

function hashSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex');
}

/** The parts of an X-SERVICE-API-KEY header: `<id>.<secret>` or `<id>.<secret>.<username>`. */
export function parseApiKeyHeader(value: string): { id: string; secret: string; username?: string } | null {
  const first = value.indexOf('.');
  if (first <= 0) return null;
  const second = value.indexOf('.', first + 1);
  const id = value.slice(0, first);
  const secret = second < 0 ? value.slice(first + 1) : value.slice(first + 1, second);
  const username = second < 0 ? undefined : value.slice(second + 1);
  if (!/^[A-Za-z0-9_-]{8,64}$/.test(id) || !/^[A-Za-z0-9_-]{16,128}$/.test(secret)) return null;
  if (username !== undefined && username === '') return null;
  return { id, secret, username };
}

/**
 * API keys: only a hash of the secret part is stored; the key is shown once at creation.
 *
 * An admin holding a role sees and manages only keys bound to a user or an admin of
 * that role, and cannot create unbound keys: an unbound key acts as any account of its
 * scope (`<key>.<username>`), which would let it escape the role.
 */
@injectable()
export class ApiKeyService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
  ) {}

  render(k: ApiKey): Record<string, unknown> {
    return {
      id: k.key_id,
      name: k.name,
      scope: k.scope,
      description: k.description,
      created_at: k.created_at,
      updated_at: k.updated_at,
      last_use_at: k.last_use_at,
      expires_at: k.expires_at,
      user: k.user ? (k.user as User).username : '',
      admin: k.admin ? (k.admin as Admin).username : '',
    };
  }

  /** The keys `caller` may see: all for admins without a role, keys bound to accounts of the role otherwise. */
  private visibleTo(caller: AdminIdentity): Record<string, unknown> {
    if (!caller.role) return {};
    return { $or: [{ admin: { role: { name: caller.role } } }, { user: { role: { name: caller.role } } }] };
  }

  async list(q: ListQuery, caller: AdminIdentity): Promise<ApiKey[]> {
    return this.orm.em.fork().find(ApiKey, this.visibleTo(caller), {
      orderBy: { key_id: q.order },
      offset: q.offset,
      limit: q.limit,
      populate: ['user', 'admin'],
    });
  }

  async get(id: string, caller: AdminIdentity, em: EntityManager = this.orm.em.fork()): Promise<ApiKey> {
    const k = await em.findOne(ApiKey, { key_id: id, ...this.visibleTo(caller) }, { populate: ['user', 'admin'] });
    if (!k) throw new NotFoundError(`API key "${id}" not found`);
    return k;
  }

  /**
   * The account a key is bound to. A role admin must bind every key to an account of
   * its role; accounts elsewhere get the same answer whether they exist or not.
   */
  private async binding(em: EntityManager, input: ApiKeyInput, caller: AdminIdentity): Promise<{ user: User | null; admin: Admin | null }> {
    const isAdminKey = input.scope === API_KEY_SCOPE.Admin;
    if (isAdminKey && input.user) throw new InvalidError('an admin-scoped API key cannot be bound to a user');
    if (!isAdminKey && input.admin) throw new InvalidError('a user-scoped API key cannot be bound to an admin');
    const kind = isAdminKey ? 'admin' : 'user';
    const username = isAdminKey ? input.admin : input.user;
    if (!username) {
      if (caller.role) {
        throw new ForbiddenError(
          `an admin with role "${caller.role}" cannot manage unbound API keys: set "${kind}" to ${isAdminKey ? 'an admin' : 'a user'} of that role`,
        );
      }
      return { user: null, admin: null };
    }
    const where = { username, ...(caller.role ? { role: { name: caller.role } } : {}) };
    const account = isAdminKey ? await em.findOne(Admin, where) : await em.findOne(User, where);
    if (!account) {
      if (caller.role)
        throw new ForbiddenError(`an admin with role "${caller.role}" can only bind API keys to ${kind}s of that role, and "${username}" is not one`);
      throw new InvalidError(`${kind} "${username}" does not exist`);
    }
    return isAdminKey ? { user: null, admin: account as Admin } : { user: account as User, admin: null };
  }

  async create(input: ApiKeyInput, caller: AdminIdentity, actor: Actor): Promise<{ key: ApiKey; plain: string }> {
    const em = this.orm.em.fork();
    if (input.expires_at && input.expires_at <= Date.now()) throw new InvalidError('"expires_at" must be in the future');
    const { user, admin } = await this.binding(em, input, caller);
    return this.insert(em, input, user, admin, actor);
  }

  /** Stores a new key (only a hash of its secret) and answers it with the key to show once. */
  private async insert(
    em: EntityManager,
    input: Pick<ApiKeyInput, 'name' | 'scope' | 'description' | 'expires_at'>,
    user: User | null,
    admin: Admin | null,
    actor: Actor,
  ): Promise<{ key: ApiKey; plain: string }> {
    const id = crypto.randomBytes(12).toString('base64url');
    const secret = crypto.randomBytes(32).toString('base64url');
    const now = Date.now();
    const key = em.create(ApiKey, {
      key_id: id,
      name: input.name,
      key_hash: hashSecret(secret),
      scope: input.scope,
      description: input.description,
      user,
      admin,
      created_at: now,
      updated_at: now,
      last_use_at: 0,
      expires_at: input.expires_at,
    });
    await em.flush();
    this.events.emit('add', 'api_key', id, this.render(key), actor);
    return { key, plain: `${id}.${secret}` };
  }

  /** Updates name, description, scope binding and expiry; an expiry may be shortened, never extended. */
  async update(id: string, input: ApiKeyInput, caller: AdminIdentity, actor: Actor): Promise<void> {
    const em = this.orm.em.fork();
    const key = await this.get(id, caller, em);
    if (input.scope !== key.scope) throw new InvalidError('the scope of an API key cannot be changed');
    if (key.expires_at) {
      if (!input.expires_at || input.expires_at > key.expires_at) {
        throw new InvalidError('the expiration of an API key can only be shortened, never extended or removed');
      }
    }
    const { user, admin } = await this.binding(em, input, caller);
    key.name = input.name;
    key.description = input.description;
    key.expires_at = input.expires_at;
    key.user = user;
    key.admin = admin;
    key.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'api_key', id, this.render(key), actor);
  }

  async delete(id: string, caller: AdminIdentity, actor: Actor): Promise<void> {
    const em = this.orm.em.fork();
    const key = await this.get(id, caller, em);
    const data = this.render(key);
    await em.removeAndFlush(key);
    this.events.emit('delete', 'api_key', id, data, actor);
  }

  // ---- a user's own keys (GET/POST /api/v2/user/apikeys, DELETE /api/v2/user/apikeys/{id}: an addition to v2.7) ----

  /** The user-scoped keys bound to `username`, oldest first. */
  async listOwn(username: string): Promise<ApiKey[]> {
    return this.orm.em.fork().find(ApiKey, { user: { username }, scope: API_KEY_SCOPE.User }, { orderBy: { created_at: 'asc' }, populate: ['user'] });
  }

  /** A new user-scoped key bound to `username`; refused while the account's API key login (filters.allow_api_key_auth) is off. */
  async createOwn(username: string, input: Pick<ApiKeyInput, 'name' | 'description' | 'expires_at'>, actor: Actor): Promise<{ key: ApiKey; plain: string }> {
    const em = this.orm.em.fork();
    const user = await em.findOne(User, { username });
    if (!user) throw new NotFoundError(`user "${username}" not found`);
    if (!(user.filters as { allow_api_key_auth?: boolean }).allow_api_key_auth) {
      throw new ForbiddenError('API key login is off for this account (allow_api_key_auth): a key could not sign in, none is created');
    }
    if (input.expires_at && input.expires_at <= Date.now()) throw new InvalidError('"expires_at" must be in the future');
    return this.insert(em, { ...input, scope: API_KEY_SCOPE.User }, user, null, actor);
  }

  /** Deletes one of `username`'s own keys (another's key is not found). */
  async deleteOwn(username: string, id: string, actor: Actor): Promise<void> {
    const em = this.orm.em.fork();
    const key = await em.findOne(ApiKey, { key_id: id, user: { username }, scope: API_KEY_SCOPE.User }, { populate: ['user'] });
    if (!key) throw new NotFoundError(`API key "${id}" not found`);
    const data = this.render(key);
    await em.removeAndFlush(key);
    this.events.emit('delete', 'api_key', id, data, actor);
  }

  /**
   * Resolves a header value to a key, checking the secret and expiry. The
   * caller checks scope and the account's own API-key setting.
   */
  async authenticate(header: string): Promise<{ key: ApiKey; username?: string } | null> {
    const parsed = parseApiKeyHeader(header);
    if (!parsed) return null;
    const em = this.orm.em.fork();
    const key = await em.findOne(ApiKey, { key_id: parsed.id }, { populate: ['user', 'admin'] });
    if (!key) return null;
    const a = Buffer.from(key.key_hash, 'hex');
    const b = Buffer.from(hashSecret(parsed.secret), 'hex');
    if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) return null;
    if (key.expires_at && key.expires_at <= Date.now()) return null;
    await em.nativeUpdate(ApiKey, { key_id: key.key_id }, { last_use_at: Date.now() });
    return { key, username: parsed.username };
  }
}

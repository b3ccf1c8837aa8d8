import { ForbiddenError, InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { MikroORM, EntityManager } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Admin, AdminGroup, Group, Role } from '../data/entities/index.js';
import type { ListQuery } from '../util/common.input.js';
import type { AdminInput } from './admin.input.js';
import type { AdminIdentity } from '../auth/credentials.js';
import { isSuperAdmin } from './permissions.js';
import { hashPassword, verifyPassword, burnPasswordCheck } from './password.js';
import { PasswordCache } from './password-cache.js';
import { passwordStrengthProblem } from './password-policy.js';
import type { FerryConfig } from '../config/schema.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { REVOKED_JTI_SQL, revokedValue } from '../data/revoked-tokens.js';
import { runStatement, selectFirstRow } from '../data/bound-sql.js';

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
/** JSON columns: text on SQLite, already parsed on PostgreSQL. */
const json = <T>(v: unknown, dflt: T): T => (v === null || v === undefined ? dflt : ((typeof v === 'string' ? JSON.parse(v) : v) as T));

/** An admins row (with `role_name` from the roles join) as a read-only Admin. */
function mapAdminRow(r: Record<string, unknown>): Admin {
  return {
    id: num(r.id),
    username: String(r.username),
    password_hash: (r.password_hash as string | null) ?? '',
    email: (r.email as string | null) ?? '',
    status: num(r.status),
    description: (r.description as string | null) ?? '',
    additional_info: (r.additional_info as string | null) ?? '',
    permissions: json<string[]>(r.permissions, []),
    filters: json(r.filters, {}),
    role: r.role_name ? ({ id: num(r.role_id), name: String(r.role_name) } as Role) : null,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
    last_login: num(r.last_login),
    totp_last_step: num(r.totp_last_step),
    tokens_valid_after: num(r.tokens_valid_after),
  } as Admin;
}

/** Admin accounts: CRUD with role scoping, self-service profile and password. */
@injectable()
export class AdminService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(PasswordCache) private readonly passwords: PasswordCache,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
  ) {}

  /**
   * The admins' password strength rule (admin_password_policy.min_entropy):
   * an InvalidError naming `field` and the rule when `password` is weaker.
   */
  assertPasswordPolicy(password: string, field = 'password'): void {
    const min = this.config.admin_password_policy?.min_entropy ?? 0;
    const weak = passwordStrengthProblem(password, min);
    if (weak) throw new InvalidError(`"${field}": ${weak} (admin_password_policy.min_entropy)`);
  }

  em(): EntityManager {
    return this.orm.em.fork();
  }

  async render(admin: Admin, em: EntityManager = this.em()): Promise<Record<string, unknown>> {
    const groups = await em.find(AdminGroup, { admin: admin.id }, { populate: ['group'] });
    const f = admin.filters ?? {};
    const totp = (f.totp_config ?? {}) as Record<string, unknown>;
    return {
      id: admin.id,
      status: admin.status,
      username: admin.username,
      email: admin.email,
      description: admin.description,
      permissions: admin.permissions,
      filters: {
        allow_list: f.allow_list ?? [],
        allow_api_key_auth: f.allow_api_key_auth ?? false,
        require_two_factor: f.require_two_factor ?? false,
        require_password_change: f.require_password_change ?? false,
        disable_password_auth: f.disable_password_auth ?? false,
        totp_config: { enabled: Boolean(totp.enabled), config_name: totp.config_name ?? '' },
        preferences: f.preferences ?? {},
      },
      additional_info: admin.additional_info,
      groups: groups.map((g) => ({ name: g.group.name, options: { add_to_users_as: g.add_to_users_as } })).sort((a, b) => a.name.localeCompare(b.name)),
      created_at: admin.created_at,
      updated_at: admin.updated_at,
      last_login: admin.last_login,
      role: admin.role ? (admin.role as Role).name : '',
    };
  }

  /** Admins the caller may see: everyone for global admins, their role's admins otherwise. */
  private scope(caller: AdminIdentity): Record<string, unknown> {
    return caller.role ? { role: { name: caller.role } } : {};
  }

  async list(q: ListQuery, caller: AdminIdentity): Promise<Admin[]> {
    return this.em().find(Admin, this.scope(caller), {
      orderBy: { username: q.order },
      offset: q.offset,
      limit: q.limit,
      populate: ['role'],
    });
  }

  async findByUsername(username: string, em: EntityManager = this.em()): Promise<Admin | null> {
    return em.findOne(Admin, { username }, { populate: ['role'] });
  }

  /**
   * The admin (with its role's name) as a read-only object, for the checks of
   * every authenticated request (token, API key): one indexed query in plain
   * SQL, read fresh on each call, without hydrating entities. Never flush it.
   */
  async findForAuth(username: string): Promise<Admin | null> {
    const row = await selectFirstRow(this.orm.em, 'select a.*, r.name as role_name from admins a left join roles r on r.id = a.role_id where a.username = ?', [
      username,
    ]);
    return row ? mapAdminRow(row) : null;
  }

  /**
   * What a bearer request of an admin checks, in one query: whether its token
   * `jti` is revoked, and the admin as findForAuth reads it (null when there is
   * none). Both are read fresh on each call: a revocation or a change of the
   * admin on any node applies to the next request.
   */
  async findForToken(username: string, jti: string): Promise<{ revoked: boolean; admin: Admin | null }> {
    const row = await selectFirstRow(
      this.orm.em,
      `select t.revoked, a.*, r.name as role_name from (select ${REVOKED_JTI_SQL} as revoked) t left join admins a on a.username = ? left join roles r on r.id = a.role_id`,
      [jti, username],
    );
    if (!row) return { revoked: false, admin: null };
    return { revoked: revokedValue(row.revoked), admin: row.id === null || row.id === undefined ? null : mapAdminRow(row) };
  }

  async get(username: string, caller: AdminIdentity, em: EntityManager = this.em()): Promise<Admin> {
    const admin = await em.findOne(Admin, { username, ...this.scope(caller) }, { populate: ['role'] });
    if (!admin) throw new NotFoundError(`admin "${username}" not found`);
    return admin;
  }

  private async resolveRole(em: EntityManager, name: string, caller: AdminIdentity | null): Promise<Role | null> {
    if (caller?.role) {
      if (name && name !== caller.role) throw new ForbiddenError(`an admin with role "${caller.role}" can only assign that role`);
      name = caller.role;
    }
    if (!name) return null;
    const role = await em.findOne(Role, { name });
    if (!role) throw new InvalidError(`role "${name}" does not exist`);
    return role;
  }

  private async setGroups(em: EntityManager, admin: Admin, groups: AdminInput['groups']): Promise<void> {
    const existing = await em.find(AdminGroup, { admin: admin.id });
    for (const g of existing) em.remove(g);
    for (const g of groups) {
      const group = await em.findOne(Group, { name: g.name });
      if (!group) throw new InvalidError(`group "${g.name}" does not exist`);
      em.create(AdminGroup, { admin, group, add_to_users_as: g.options.add_to_users_as });
    }
  }

  private checkGrant(input: AdminInput, caller: AdminIdentity | null): void {
    if (caller && !isSuperAdmin(caller) && input.permissions.includes('*') && !caller.permissions.includes('*')) {
      throw new ForbiddenError('you cannot grant permissions you do not hold');
    }
  }

  async create(input: AdminInput, caller: AdminIdentity | null, actor: Actor): Promise<Admin> {
    const em = this.em();
    if (await em.count(Admin, { username: input.username })) {
      throw new InvalidError(`admin "${input.username}" already exists`);
    }
    if (!input.password && !input.filters.disable_password_auth) {
      throw new InvalidError('"password" is required unless password login is disabled (filters.disable_password_auth)');
    }
    this.checkGrant(input, caller);
    // the first admin made at startup (no caller) takes the configured or generated password as it is
    if (input.password && caller) this.assertPasswordPolicy(input.password);
    const now = Date.now();
    const password_hash = input.password ? await hashPassword(input.password) : '';
    // one transaction: an unknown group refuses the create with nothing stored
    const admin = await em.transactional(async (tem) => {
      const created = tem.create(Admin, {
        username: input.username,
        password_hash,
        email: input.email,
        status: input.status,
        description: input.description,
        additional_info: input.additional_info,
        permissions: input.permissions,
        filters: { ...input.filters },
        role: await this.resolveRole(tem, input.role, caller),
        created_at: now,
        updated_at: now,
        last_login: 0,
      });
      await tem.flush();
      await this.setGroups(tem, created, input.groups);
      await tem.flush();
      return created;
    });
    this.events.emit('add', 'admin', admin.username, await this.render(admin, em), actor);
    return admin;
  }

  async update(username: string, input: AdminInput, caller: AdminIdentity, actor: Actor, viaApiKeyOf?: string): Promise<void> {
    const em = this.em();
    const admin = await this.get(username, caller, em);
    if (viaApiKeyOf === username) throw new ForbiddenError('the admin impersonated through an API key cannot be updated with that key');
    if (input.username !== username) throw new InvalidError('an admin cannot be renamed: the username in the body must match the path');
    this.checkGrant(input, caller);
    if (caller.username === username) {
      const samePerms = [...input.permissions].sort().join() === [...admin.permissions].sort().join();
      if (!samePerms) throw new InvalidError('you cannot change your own permissions');
      if (input.status !== admin.status) throw new InvalidError('you cannot disable yourself');
      const currentRole = admin.role ? (admin.role as Role).name : '';
      if ((input.role || '') !== currentRole) throw new InvalidError('you cannot change your own role');
    }
    const keepTotp = { totp_config: admin.filters.totp_config, recovery_codes: admin.filters.recovery_codes };
    if (input.password) {
      this.assertPasswordPolicy(input.password);
      admin.password_hash = await hashPassword(input.password);
    }
    if (!admin.password_hash && !input.filters.disable_password_auth) {
      throw new InvalidError('"password" is required unless password login is disabled (filters.disable_password_auth)');
    }
    admin.email = input.email;
    admin.status = input.status;
    admin.description = input.description;
    admin.additional_info = input.additional_info;
    admin.permissions = input.permissions;
    admin.filters = { ...input.filters, ...keepTotp };
    admin.role = await this.resolveRole(em, input.role, caller);
    admin.updated_at = Date.now();
    await this.setGroups(em, admin, input.groups);
    await em.flush();
    this.events.emit('update', 'admin', admin.username, await this.render(admin, em), actor);
  }

  async delete(username: string, caller: AdminIdentity, actor: Actor): Promise<void> {
    const em = this.em();
    const admin = await this.get(username, caller, em);
    if (caller.username === username) throw new InvalidError('you cannot delete yourself');
    const data = await this.render(admin, em);
    await em.nativeDelete(AdminGroup, { admin: admin.id });
    await em.removeAndFlush(admin);
    this.events.emit('delete', 'admin', username, data, actor);
  }

  /**
   * Checks an admin's password login. Returns the admin or null; the same
   * work is done for unknown usernames so timing does not reveal them.
   */
  async checkPassword(username: string, password: string): Promise<Admin | null> {
    // read-only (findForAuth: one plain statement); the caller only checks and names it
    const admin = await this.findForAuth(username);
    if (!admin || !admin.password_hash) {
      await burnPasswordCheck(password);
      return null;
    }
    // repeated logins with the same password within auth_cache.ttl are not hashed again (password-cache.ts)
    return (await this.passwords.verify('admin', String(admin.id), admin.password_hash, password)) ? admin : null;
  }

  async changePassword(username: string, current: string, next: string, actor: Actor): Promise<void> {
    const em = this.em();
    const admin = await this.findByUsername(username, em);
    if (!admin) throw new NotFoundError(`admin "${username}" not found`);
    if (!(await verifyPassword(admin.password_hash, current))) throw new ForbiddenError('the current password does not match');
    if (current === next) throw new InvalidError('the new password must differ from the current one');
    this.assertPasswordPolicy(next, 'new_password');
    admin.password_hash = await hashPassword(next);
    admin.filters = { ...admin.filters, require_password_change: false };
    admin.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'admin', username, await this.render(admin, em), actor);
  }

  async updateProfile(username: string, p: { email?: string; description?: string; allow_api_key_auth?: boolean }, actor: Actor): Promise<void> {
    const em = this.em();
    const admin = await this.findByUsername(username, em);
    if (!admin) throw new NotFoundError(`admin "${username}" not found`);
    if (p.email !== undefined) admin.email = p.email;
    if (p.description !== undefined) admin.description = p.description;
    if (p.allow_api_key_auth !== undefined) admin.filters = { ...admin.filters, allow_api_key_auth: p.allow_api_key_auth };
    admin.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'admin', username, await this.render(admin, em), actor);
  }

  async touchLogin(id: number): Promise<void> {
    await runStatement(this.orm.em, 'update admins set last_login = ? where id = ?', [Date.now(), id]);
  }

  async count(): Promise<number> {
    return this.em().count(Admin, {});
  }

  identity(admin: Admin): AdminIdentity {
    return {
      id: admin.id,
      username: admin.username,
      permissions: admin.permissions,
      role: admin.role ? (admin.role as Role).name : '',
    };
  }
}

import { ForbiddenError, InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import { UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { AdminGroup, ApiKey, Folder, Group, Role, Share, User, UserFolder, UserGroup } from '../data/entities/index.js';
import type { ListQuery, UserListQuery } from '../util/common.input.js';
import type { UserInput } from './user.input.js';
import type { AdminIdentity } from '../auth/credentials.js';
import type { PluginRegistry } from '../plugins/registry.js';
import { hashPassword } from './password.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { ACCOUNT_SESSIONS, type AccountSessions } from './account-sessions.js';
import { FilesystemConfigService } from './filesystem-config.js';
import { dbLookup, type AccountLookup, type StoredGroupSettings } from './account-lookup.js';
import { mergeEffectiveUser, type MergeFolderMapping } from './effective-merge.js';
import {
  selectFolderMappings,
  selectUserGroups,
  selectUserPageWithMappings,
  selectUserWithMappings,
  type FolderMappingRow,
  type GroupMappingRow,
  type UserWithMappings,
} from './user-rows.js';
import type { EffectiveUser } from './effective-user.js';
import { AccountStatus, GroupType } from './account-numbers.js';
import { renderUser, type RenderOptions } from './user-render.js';

export type { RenderOptions } from './user-render.js';

type Obj = Record<string, unknown>;

/** A user validated and ready to be written (see UserService.prepare). */
export interface PreparedUser {
  username: string;
  role: string;
  /** Scalar columns to write. */
  fields: Partial<User>;
  groups: { name: string; type: number }[];
  folders: { name: string; virtual_path: string; quota_size: number; quota_files: number }[];
}

export interface PrepareOptions {
  /** Name lookups (the database, or a backup overlaid on it). */
  lookup: AccountLookup;
  /** The admin creating/updating; null for a restore. Role-scoped admins can only assign their role. */
  caller: AdminIdentity | null;
  /** loaddata: keeps 2FA material, counters and timestamps; a password may be a hash. */
  restore?: boolean;
}

/** An argon2 PHC string ($argon2id$v=19$m=..,t=..,p=..$salt$hash, parameters in any order). */
const ARGON2_HASH = /^\$argon2(id|i|d)\$v=\d+\$[a-z]=\d+(,[a-z]=\d+)*\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

/** Users: CRUD with role scoping, batch rendering, and the effective view used at login and by the file API. */
@injectable()
export class UserService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Plugins) private readonly registry: PluginRegistry,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(FilesystemConfigService) private readonly fsConfig: FilesystemConfigService,
    @inject(ACCOUNT_SESSIONS) private readonly connections: AccountSessions,
  ) {}

  em(): EntityManager {
    return this.orm.em.fork();
  }

  /** Users the caller may see: all for global admins, their role's users otherwise. */
  scope(caller: AdminIdentity | null): Obj {
    return caller?.role ? { role: { name: caller.role } } : {};
  }

  /**
   * One page of users as the API shows them: the users and their group and folder mappings in one statement
   * (plain SQL on the connection: no EntityManager fork needed, `em` only names the database).
   * Ordered by username, or by used quota size with `order_by`.
   */
  async listRendered(
    q: ListQuery & Partial<Pick<UserListQuery, 'order_by'>>,
    caller: AdminIdentity,
    o: RenderOptions = {},
    em: EntityManager = this.orm.em,
  ): Promise<Obj[]> {
    return (await selectUserPageWithMappings(em, q, caller.role || undefined)).map((r) => this.renderOne(r.user, r.groups, r.folders, o));
  }

  /** A user as the API shows it (one statement), scoped to the caller's role; 404 when not visible. */
  async viewRendered(username: string, caller: AdminIdentity | null, o: RenderOptions = {}, em: EntityManager = this.orm.em): Promise<Obj> {
    const r = await selectUserWithMappings(em, username, caller?.role || undefined);
    if (!r) throw new NotFoundError(`user "${username}" not found`);
    return this.renderOne(r.user, r.groups, r.folders, o);
  }

  async get(username: string, caller: AdminIdentity | null, em: EntityManager = this.em()): Promise<User> {
    const user = await em.findOne(User, { username, ...this.scope(caller) }, { populate: ['role'] });
    if (!user) throw new NotFoundError(`user "${username}" not found`);
    return user;
  }

  async findByUsername(username: string, em: EntityManager = this.em()): Promise<User | null> {
    return em.findOne(User, { username }, { populate: ['role'] });
  }

  /** Renders users the way the API shows them: two queries for the whole batch (groups, folders). */
  async renderMany(users: User[], o: RenderOptions = {}, em: EntityManager = this.em()): Promise<Obj[]> {
    if (!users.length) return [];
    const ids = users.map((u) => u.id);
    const [groups, folders] = await Promise.all([selectUserGroups(em, { ids }), selectFolderMappings(em, { users: ids })]);
    const g = new Map<number, GroupMappingRow[]>();
    for (const r of groups) g.set(r.user, [...(g.get(r.user) ?? []), r]);
    const f = new Map<number, FolderMappingRow[]>();
    for (const r of folders) f.set(r.owner, [...(f.get(r.owner) ?? []), r]);
    return users.map((u) => this.renderOne(u, g.get(u.id) ?? [], f.get(u.id) ?? [], o));
  }

  async render(user: User, o: RenderOptions = {}, em: EntityManager = this.em()): Promise<Obj> {
    return (await this.renderMany([user], o, em))[0]!;
  }

  private renderOne(u: User, groups: GroupMappingRow[], folders: FolderMappingRow[], o: RenderOptions): Obj {
    return renderUser(u, groups, folders, o, (fs, confidential) => this.fsConfig.render(fs, confidential));
  }

  /**
   * Validates a user against the rules of the API (references, filesystem,
   * home_dir, permissions, secrets) and returns what to write. Nothing is
   * written: a restore prepares every object before writing any.
   */
  async prepare(input: UserInput, existing: User | null, o: PrepareOptions): Promise<PreparedUser> {
    const username = existing?.username ?? input.username;
    // role
    let role = input.role ?? '';
    if (o.caller?.role) {
      if (role && role !== o.caller.role) throw new ForbiddenError(`an admin with role "${o.caller.role}" can only assign that role`);
      role = o.caller.role;
    }
    if (role && !(await o.lookup.role(role))) throw new InvalidError(`"role": role "${role}" does not exist`);
    // groups
    let primary: StoredGroupSettings | null = null;
    for (const g of input.groups) {
      const settings = await o.lookup.group(g.name);
      if (!settings) throw new InvalidError(`"groups": group "${g.name}" does not exist`);
      if (g.type === GroupType.Primary) primary = settings;
    }
    // folders
    for (const f of input.virtual_folders) {
      if (!(await o.lookup.folder(f.name))) throw new InvalidError(`"virtual_folders": folder "${f.name}" does not exist`);
    }
    // filesystem and local root
    const filesystem = await this.fsConfig.normalize(input.filesystem, { label: 'filesystem', owner: username, stored: existing?.filesystem });
    const effectiveProvider =
      filesystem.provider === 0 && primary?.filesystem && primary.filesystem.provider !== 0 ? primary.filesystem.provider : filesystem.provider;
    if (this.fsConfig.requiresLocalRoot(effectiveProvider) && !input.home_dir && !primary?.home_dir) {
      throw new InvalidError(`"home_dir" is required (an absolute path) for filesystem provider ${effectiveProvider}, unless a primary group supplies it`);
    }
    if (!input.permissions['/'] && !primary?.permissions?.['/']) {
      throw new InvalidError('"permissions" must hold the permissions of the root directory "/" (or a primary group must supply them)');
    }
    // password
    const fields: Partial<User> = {};
    if (input.password) {
      if (o.restore && ARGON2_HASH.test(input.password)) fields.password_hash = input.password;
      else fields.password_hash = await hashPassword(input.password);
      if (!o.restore) fields.last_password_change = Date.now();
    } else if (!existing) fields.password_hash = '';
    // filters: 2FA material is never set here (a restore brings its own)
    const filters: Obj = { ...input.filters };
    const prev = (existing?.filters ?? {}) as Obj;
    for (const k of ['totp_config', 'recovery_codes']) {
      if (o.restore && filters[k] !== undefined) continue;
      delete filters[k];
      if (prev[k] !== undefined) filters[k] = prev[k];
    }
    Object.assign(fields, {
      username,
      email: input.email,
      status: input.status,
      description: input.description,
      expiration_date: input.expiration_date,
      public_keys: input.public_keys,
      home_dir: input.home_dir,
      uid: input.uid,
      gid: input.gid,
      max_sessions: input.max_sessions,
      quota_size: input.quota_size,
      quota_files: input.quota_files,
      permissions: input.permissions,
      upload_bandwidth: input.upload_bandwidth,
      download_bandwidth: input.download_bandwidth,
      upload_data_transfer: input.upload_data_transfer,
      download_data_transfer: input.download_data_transfer,
      total_data_transfer: input.total_data_transfer,
      filters,
      filesystem,
      additional_info: input.additional_info,
      custom_placeholders: input.custom_placeholders,
      oidc_custom_fields: input.oidc_custom_fields,
    } satisfies Partial<User>);
    if (o.restore) {
      for (const k of [
        'used_quota_size',
        'used_quota_files',
        'last_quota_update',
        'used_upload_data_transfer',
        'used_download_data_transfer',
        'created_at',
        'updated_at',
        'last_login',
        'first_download',
        'first_upload',
        'last_password_change',
      ] as const) {
        if (input[k] !== undefined) fields[k] = input[k];
      }
    }
    return { username, role, fields, groups: input.groups, folders: input.virtual_folders };
  }

  /** Writes a prepared user (inside the caller's transaction) and replaces its group and folder mappings. */
  async write(em: EntityManager, p: PreparedUser, existing: User | null): Promise<User> {
    const role = p.role ? await em.findOne(Role, { name: p.role }) : null;
    if (p.role && !role) throw new InvalidError(`"role": role "${p.role}" does not exist`);
    const now = Date.now();
    let user: User;
    if (existing) {
      user = existing;
      em.assign(user, { ...p.fields, role, updated_at: p.fields.updated_at ?? now } as never);
    } else {
      user = em.create(User, {
        ...p.fields,
        role,
        created_at: p.fields.created_at ?? now,
        updated_at: p.fields.updated_at ?? now,
      } as User);
    }
    await em.flush();
    const [groups, folders] = await Promise.all([
      p.groups.length ? em.find(Group, { name: { $in: p.groups.map((g) => g.name) } }) : [],
      p.folders.length ? em.find(Folder, { name: { $in: p.folders.map((f) => f.name) } }) : [],
      existing ? em.nativeDelete(UserGroup, { user: user.id }) : 0,
      existing ? em.nativeDelete(UserFolder, { user: user.id }) : 0,
    ]);
    const gm = new Map(groups.map((g) => [g.name, g]));
    const fm = new Map(folders.map((f) => [f.name, f]));
    for (const g of p.groups) {
      const group = gm.get(g.name);
      if (!group) throw new InvalidError(`"groups": group "${g.name}" does not exist`);
      em.create(UserGroup, { user, group, type: g.type });
    }
    for (const f of p.folders) {
      const folder = fm.get(f.name);
      if (!folder) throw new InvalidError(`"virtual_folders": folder "${f.name}" does not exist`);
      em.create(UserFolder, { user, folder, virtual_path: f.virtual_path, quota_size: f.quota_size, quota_files: f.quota_files });
    }
    await em.flush();
    return user;
  }

  /** Groups a new user of this admin gets when none are given (AdminGroup.add_to_users_as: 0 membership, 1 primary, 2 secondary). */
  private async adminDefaultGroups(em: EntityManager, caller: AdminIdentity | null): Promise<{ name: string; type: number }[]> {
    if (!caller) return [];
    const rows = await em.find(AdminGroup, { admin: caller.id }, { populate: ['group'], orderBy: { group: { name: 'ASC' } } });
    let primary = false;
    return rows.map((r) => {
      let type = r.add_to_users_as === 1 ? 1 : r.add_to_users_as === 2 ? 2 : 3;
      if (type === 1 && primary) type = 2;
      if (type === 1) primary = true;
      return { name: r.group.name, type };
    });
  }

  async create(input: UserInput, caller: AdminIdentity, actor: Actor): Promise<User> {
    const em = this.em();
    if (await em.count(User, { username: input.username })) throw new InvalidError(`user "${input.username}" already exists`);
    if (!input.groups.length) input = { ...input, groups: await this.adminDefaultGroups(em, caller) };
    const prepared = await this.prepare(input, null, { lookup: dbLookup(em), caller });
    let user: User;
    try {
      user = await em.transactional((tem) => this.write(tem, prepared, null));
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw new InvalidError(`user "${input.username}" already exists`);
      throw err;
    }
    const fresh = await this.get(user.username, null);
    this.events.emit('add', 'user', user.username, await this.render(fresh), actor);
    return fresh;
  }

  /** Updates a user; with `disconnect` its connections are closed afterwards. */
  async update(username: string, input: UserInput, caller: AdminIdentity, actor: Actor, disconnect = false): Promise<void> {
    const em = this.em();
    const user = await this.get(username, caller, em);
    if (input.username !== undefined && input.username !== username) {
      throw new InvalidError('a user cannot be renamed: the username in the body must match the path');
    }
    const prepared = await this.prepare({ ...input, username }, user, { lookup: dbLookup(em), caller });
    await em.transactional((tem) => this.write(tem, prepared, tem.merge(user)));
    const fresh = await this.get(username, null);
    this.events.emit('update', 'user', username, await this.render(fresh), actor);
    if (disconnect) this.connections.disconnectUser(username);
  }

  /**
   * Enables (1) or disables (0) a user; a disabled user is disconnected.
   * For the system (event actions): no role scope.
   */
  async setStatus(username: string, status: number, actor: Actor): Promise<void> {
    const em = this.em();
    const user = await this.get(username, null, em);
    if (user.status === status) return;
    user.status = status;
    user.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'user', username, await this.render(user, {}, em), actor);
    if (status !== AccountStatus.Enabled) this.connections.disconnectUser(username);
  }

  /** Deletes a user (`caller` null: the system, no role scope) with its mappings, API keys and shares. */
  async delete(username: string, caller: AdminIdentity | null, actor: Actor): Promise<void> {
    const em = this.em();
    const user = await this.get(username, caller, em);
    const data = await this.render(user, {}, em);
    await em.transactional(async (tem) => {
      await tem.nativeDelete(UserGroup, { user: user.id });
      await tem.nativeDelete(UserFolder, { user: user.id });
      await tem.nativeDelete(ApiKey, { user: user.id });
      await tem.nativeDelete(Share, { user: user.id });
      await tem.nativeDelete(User, { id: user.id });
    });
    this.connections.disconnectUser(username);
    this.events.emit('delete', 'user', username, data, actor);
  }

  /**
   * The user as it logs in and works: its settings merged with its groups'
   * (see mergeEffectiveUser) and placeholders interpolated. Called by the
   * token path and for every file-operation session: one statement (the user
   * by its unique username, its role and mappings, see selectUserWithMappings),
   * then one for the groups' folders when it has groups. 404 when the user
   * does not exist.
   *
   * `folders: false` skips the virtual folders (login checks need only the
   * merged filters, limits and expiration).
   */
  async effectiveUser(username: string, o: { folders?: boolean } = {}, em: EntityManager = this.em()): Promise<EffectiveUser> {
    const r = await selectUserWithMappings(em, username);
    if (!r) throw new NotFoundError(`user "${username}" not found`);
    return this.effectiveOfMappings(r, o, em);
  }

  /** effectiveUser() of a user read with its mappings (selectUserWithMappings, selectUserForToken). */
  async effectiveOfMappings(r: UserWithMappings, o: { folders?: boolean } = {}, em: EntityManager = this.em()): Promise<EffectiveUser> {
    const withFolders = o.folders !== false;
    return this.merge(r.user, r.groups, withFolders ? r.folders : [], withFolders, em);
  }

  /** effectiveUser(), or null when the user does not exist. */
  async findEffectiveUser(username: string, o: { folders?: boolean } = {}): Promise<EffectiveUser | null> {
    try {
      return await this.effectiveUser(username, o);
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  /** effectiveUser() for a user already loaded (entity or row, with its role). */
  async effectiveOf(user: User, o: { folders?: boolean } = {}, em: EntityManager = this.em()): Promise<EffectiveUser> {
    const withFolders = o.folders !== false;
    const [groups, userFolders] = await Promise.all([
      selectUserGroups(em, { ids: [user.id] }),
      withFolders ? selectFolderMappings(em, { users: [user.id] }) : Promise.resolve([] as FolderMappingRow[]),
    ]);
    return this.merge(user, groups, userFolders, withFolders, em);
  }

  private async merge(user: User, groups: GroupMappingRow[], userFolders: FolderMappingRow[], withFolders: boolean, em: EntityManager): Promise<EffectiveUser> {
    const folderGroups = groups.filter((g) => g.type !== 3).map((g) => g.id);
    const groupFolders = new Map<number, MergeFolderMapping[]>();
    if (withFolders && folderGroups.length) {
      const rows = await selectFolderMappings(em, { groups: folderGroups });
      for (const r of rows) groupFolders.set(r.owner, [...(groupFolders.get(r.owner) ?? []), r]);
      for (const list of groupFolders.values()) list.sort((a, b) => a.virtual_path.localeCompare(b.virtual_path));
    }
    return mergeEffectiveUser({
      user,
      role: user.role ? (user.role as Role).name : '',
      groups,
      userFolders,
      groupFolders,
      placeholderFields: (n) => this.registry.fsProvider(n)?.placeholderFields ?? [],
    });
  }

  async count(filter: Obj = {}): Promise<number> {
    return this.em().count(User, filter);
  }
}

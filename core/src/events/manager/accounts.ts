import Boom from '@hapi/boom';
import { inject, injectable } from 'tsyringe';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../../tokens.js';
import { Folder, Group, Role, Share, User, UserFolder, UserGroup } from '../../data/entities/index.js';
import { FsFactory } from '../../fs/fs-factory.js';
import type { Fs } from '../../fs/fs.contract.js';
import { ProviderEventsService, SYSTEM_ACTOR, type Actor } from '../../services/provider-events.service.js';
import { userMatchesConditions } from './conditions.js';
import type { ConditionPattern } from './patterns.js';

/** A user as maintenance actions see it. */
export interface AccountUser {
  username: string;
  email: string;
  status: number;
  role: string;
  groups: string[];
  /** Unix ms, 0 never. */
  expiration_date: number;
  last_login: number;
  created_at: number;
  last_password_change: number;
  filters: Record<string, unknown>;
}

/** One storage root of a user: its home ('/') or a virtual folder. */
export interface AccountMount {
  virtual_path: string;
  /** Folder name for virtual folders. */
  folder?: string;
  fs: Fs;
}

export interface UserSelection {
  /** Just this user (filesystem, provider and IDP triggers). */
  username?: string;
  /** Otherwise every user matching these (scheduled and on-demand rules). */
  conditions?: { names?: ConditionPattern[]; group_names?: ConditionPattern[]; role_names?: ConditionPattern[] };
}

/**
 * What the built-in maintenance actions need from accounts (users, folders,
 * quotas, storage), resolved through TOKENS.EventAccounts. This narrow port
 * keeps the actions independent of how accounts are stored; the default
 * implementation works on the account tables directly.
 */
export interface EventAccounts {
  users(sel: UserSelection): Promise<AccountUser[]>;
  /** Folder names: just `name`, or every folder matching the names patterns. */
  folders(sel: { name?: string; names?: ConditionPattern[] }): Promise<string[]>;
  /** The user's storage roots (home and virtual folders); close each fs when done. */
  mounts(username: string): Promise<AccountMount[]>;
  /** Recomputes the user's used quota from its storage (virtual folders counting against it included). */
  rescanUserQuota(username: string): Promise<{ size: number; files: number }>;
  rescanFolderQuota(name: string): Promise<{ size: number; files: number }>;
  resetTransferQuota(username: string): Promise<void>;
  setUserStatus(username: string, status: number, actor?: Actor): Promise<void>;
  deleteUser(username: string, actor?: Actor): Promise<void>;
}

const toAccount = (u: User, groups: string[]): AccountUser => ({
  username: u.username,
  email: u.email,
  status: u.status,
  role: u.role ? (u.role as Role).name ?? '' : '',
  groups,
  expiration_date: u.expiration_date,
  last_login: u.last_login,
  created_at: u.created_at,
  last_password_change: u.last_password_change,
  filters: u.filters ?? {},
});

/**
 * Default EventAccounts on the account tables. Storage roots are the user's
 * own home and filesystem plus its own virtual folders; a user that takes
 * home_dir/filesystem from a primary group gets the group's settings.
 */
@injectable()
export class DbEventAccounts implements EventAccounts {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(FsFactory) private readonly fsFactory: FsFactory,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
  ) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  private async groupsOf(em: EntityManager, ids: number[]): Promise<Map<number, string[]>> {
    const out = new Map<number, string[]>();
    if (!ids.length) return out;
    const rows = await em.find(UserGroup, { user: { $in: ids } }, { populate: ['group'] });
    for (const r of rows) {
      const id = (r.user as User).id;
      out.set(id, [...(out.get(id) ?? []), (r.group as Group).name]);
    }
    return out;
  }

  async users(sel: UserSelection): Promise<AccountUser[]> {
    const em = this.em();
    const list = sel.username
      ? await em.find(User, { username: sel.username }, { populate: ['role'] })
      : await em.find(User, {}, { populate: ['role'], orderBy: { username: 'ASC' } });
    const groups = await this.groupsOf(em, list.map((u) => u.id));
    const all = list.map((u) => toAccount(u, groups.get(u.id) ?? []));
    if (sel.username || !sel.conditions) return all;
    const c = { names: sel.conditions.names ?? [], group_names: sel.conditions.group_names ?? [], role_names: sel.conditions.role_names ?? [] };
    return all.filter((u) => userMatchesConditions(c, u));
  }

  async folders(sel: { name?: string; names?: ConditionPattern[] }): Promise<string[]> {
    const em = this.em();
    if (sel.name) return (await em.count(Folder, { name: sel.name })) ? [sel.name] : [];
    const all = await em.find(Folder, {}, { fields: ['name'], orderBy: { name: 'ASC' } });
    return all.map((f) => f.name).filter((n) => userMatchesConditions({ names: sel.names ?? [], group_names: [], role_names: [] }, { username: n }));
  }

  async mounts(username: string): Promise<AccountMount[]> {
    const em = this.em();
    const u = await em.findOne(User, { username }, { populate: ['role'] });
    if (!u) throw Boom.notFound(`user "${username}" not found`);
    const owner = { username: u.username, role: u.role ? (u.role as Role).name : '', custom_placeholders: u.custom_placeholders };
    let home = u.home_dir;
    let filesystem = u.filesystem;
    const primary = await em.findOne(UserGroup, { user: u.id, type: 1 }, { populate: ['group'] });
    const gs = ((primary?.group as Group | undefined)?.user_settings ?? {}) as { home_dir?: string; filesystem?: typeof filesystem };
    if (!home && gs.home_dir) home = gs.home_dir.replace(/%username%/g, u.username);
    if ((!filesystem || (filesystem.provider === 0 && !u.home_dir)) && gs.filesystem) filesystem = gs.filesystem;
    const out: AccountMount[] = [];
    try {
      out.push({ virtual_path: '/', fs: await this.fsFactory.create(filesystem ?? { provider: 0 }, home, owner) });
      const maps = await em.find(UserFolder, { user: u.id }, { populate: ['folder'], orderBy: { virtual_path: 'ASC' } });
      for (const m of maps) {
        const f = m.folder as Folder;
        out.push({ virtual_path: m.virtual_path, folder: f.name, fs: await this.fsFactory.create(f.filesystem, f.mapped_path, owner) });
      }
    } catch (err) {
      await Promise.all(out.map((m) => m.fs.close().catch(() => {})));
      throw err;
    }
    return out;
  }

  async rescanUserQuota(username: string): Promise<{ size: number; files: number }> {
    const em = this.em();
    const u = await em.findOne(User, { username });
    if (!u) throw Boom.notFound(`user "${username}" not found`);
    const mounts = await this.mounts(username);
    const maps = new Map((await em.find(UserFolder, { user: u.id }, { populate: ['folder'] })).map((m) => [(m.folder as Folder).name, m]));
    let size = 0;
    let files = 0;
    try {
      for (const m of mounts) {
        // virtual folders with their own quota are not part of the user's
        if (m.folder && (maps.get(m.folder)?.quota_size ?? -1) !== -1) continue;
        const used = await m.fs.usedSpace('/');
        size += used.size;
        files += used.files;
      }
    } finally {
      await Promise.all(mounts.map((m) => m.fs.close().catch(() => {})));
    }
    await em.nativeUpdate(User, { id: u.id }, { used_quota_size: size, used_quota_files: files, last_quota_update: Date.now() });
    return { size, files };
  }

  async rescanFolderQuota(name: string): Promise<{ size: number; files: number }> {
    const em = this.em();
    const f = await em.findOne(Folder, { name });
    if (!f) throw Boom.notFound(`folder "${name}" not found`);
    const fs = await this.fsFactory.create(f.filesystem, f.mapped_path, { username: '' });
    try {
      const used = await fs.usedSpace('/');
      await em.nativeUpdate(Folder, { id: f.id }, { used_quota_size: used.size, used_quota_files: used.files, last_quota_update: Date.now() });
      return used;
    } finally {
      await fs.close().catch(() => {});
    }
  }

  async resetTransferQuota(username: string): Promise<void> {
    const n = await this.em().nativeUpdate(User, { username }, { used_upload_data_transfer: 0, used_download_data_transfer: 0 });
    if (!n) throw Boom.notFound(`user "${username}" not found`);
  }

  async setUserStatus(username: string, status: number, actor: Actor = SYSTEM_ACTOR): Promise<void> {
    const em = this.em();
    const u = await em.findOne(User, { username });
    if (!u) throw Boom.notFound(`user "${username}" not found`);
    u.status = status;
    u.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'user', username, { username, status }, actor);
  }

  async deleteUser(username: string, actor: Actor = SYSTEM_ACTOR): Promise<void> {
    const em = this.em();
    const u = await em.findOne(User, { username });
    if (!u) throw Boom.notFound(`user "${username}" not found`);
    await em.nativeDelete(UserGroup, { user: u.id });
    await em.nativeDelete(UserFolder, { user: u.id });
    await em.nativeDelete(Share, { user: u.id });
    await em.removeAndFlush(u);
    this.events.emit('delete', 'user', username, { username }, actor);
  }
}

/** A share as the share expiration check sees it. */
export interface ShareInfo {
  share_id: string;
  name: string;
  username: string;
  /** Unix ms, 0 never expires. */
  expires_at: number;
}

/**
 * What the share expiration check needs from the shares feature, resolved
 * through TOKENS.Shares (core's ShareService).
 */
export interface EventShares {
  /** Shares of these users (every share when `usernames` is undefined). */
  list(sel: { usernames?: string[] }): Promise<ShareInfo[]>;
  delete(shareId: string): Promise<void>;
}

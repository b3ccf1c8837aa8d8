import { inject, injectable } from 'tsyringe';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Folder, Group, Role, User, UserGroup } from '../data/entities/index.js';
import { FsFactory } from '../vfs/fs-factory.js';
import { SYSTEM_ACTOR, type Actor } from '../events/provider-events.service.js';
import { UserService } from '../accounts/user.service.js';
import { AdminService } from '../accounts/admin.service.js';
import { userCreateInput, type UserInput } from '../accounts/user.input.js';
import { adminInput, type AdminInput } from '../accounts/admin.input.js';
import type { AdminIdentity } from '../auth/credentials.js';
import { InvalidError } from '../errors.js';
import { QuotaScanService } from '../vfs/quota-scan.service.js';
import { QuotaService } from '../vfs/quota.service.js';
import { userMatchesConditions } from './conditions.js';
import type { AccountMount, AccountUser, ConditionPattern, EventAccounts, ProvisionMode, ProvisionResult, UserSelection } from '../sdk/accounts.js';

export type { AccountMount, AccountUser, EventAccounts, EventShares, ProvisionMode, ProvisionResult, ShareInfo, UserSelection } from '../sdk/accounts.js';

/** The event manager acting as a global admin (account provisioning by event actions). */
const SYSTEM_ADMIN: AdminIdentity = { id: 0, username: '', permissions: ['*'], role: '' };
const INPUT_OPTIONS = { abortEarly: true, errors: { wrap: { label: '"' } } } as const;

const toAccount = (u: User, groups: string[]): AccountUser => ({
  username: u.username,
  email: u.email,
  status: u.status,
  role: u.role ? ((u.role as Role).name ?? '') : '',
  groups,
  expiration_date: u.expiration_date,
  last_login: u.last_login,
  created_at: u.created_at,
  last_password_change: u.last_password_change,
  filters: u.filters ?? {},
});

/**
 * Default EventAccounts: a thin adapter over core's account services, so the
 * actions follow exactly the rules of the API. Users and folders are
 * selected on the account tables; storage roots come from the effective
 * user (UserService: primary group settings, the user's and its groups'
 * virtual folders); quota rescans are QuotaScanService scans (409 while one
 * runs for the same target); the transfer reset is QuotaService's; status
 * changes and deletions go through UserService (provider events,
 * disconnection, API keys and shares removed).
 */
@injectable()
export class DbEventAccounts implements EventAccounts {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(FsFactory) private readonly fsFactory: FsFactory,
    @inject(UserService) private readonly userService: UserService,
    @inject(QuotaScanService) private readonly scans: QuotaScanService,
    @inject(QuotaService) private readonly quota: QuotaService,
    @inject(AdminService) private readonly adminService: AdminService,
  ) {}

  async provision(kind: 'user' | 'admin', data: Record<string, unknown>, mode: ProvisionMode, actor: Actor = SYSTEM_ACTOR): Promise<ProvisionResult> {
    if (kind === 'user') {
      const { value, error } = userCreateInput.validate(data, INPUT_OPTIONS);
      if (error) throw new InvalidError(error.message);
      const input = value as UserInput;
      if (await this.userService.findByUsername(input.username)) {
        if (mode === 'create-only') return 'unchanged';
        await this.userService.update(input.username, input, SYSTEM_ADMIN, actor);
        return 'updated';
      }
      await this.userService.create(input, SYSTEM_ADMIN, actor);
      return 'created';
    }
    const { value, error } = adminInput.validate(data, INPUT_OPTIONS);
    if (error) throw new InvalidError(error.message);
    const input = value as AdminInput;
    if (await this.adminService.findByUsername(input.username)) {
      if (mode === 'create-only') return 'unchanged';
      await this.adminService.update(input.username, input, SYSTEM_ADMIN, actor);
      return 'updated';
    }
    await this.adminService.create(input, SYSTEM_ADMIN, actor);
    return 'created';
  }

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
    const groups = await this.groupsOf(
      em,
      list.map((u) => u.id),
    );
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
    const eff = await this.userService.effectiveUser(username);
    const owner = { username: eff.username, role: eff.role, custom_placeholders: eff.custom_placeholders };
    const out: AccountMount[] = [];
    try {
      out.push({ virtual_path: '/', fs: await this.fsFactory.create(eff.filesystem, eff.home_dir, owner) });
      for (const vf of eff.virtual_folders) {
        out.push({ virtual_path: vf.virtual_path, folder: vf.name, fs: await this.fsFactory.create(vf.filesystem, vf.mapped_path, owner) });
      }
    } catch (err) {
      await Promise.all(out.map((m) => m.fs.close().catch(() => {})));
      throw err;
    }
    return out;
  }

  async rescanUserQuota(username: string): Promise<{ size: number; files: number }> {
    return this.scans.scanUser(username);
  }

  async rescanFolderQuota(name: string): Promise<{ size: number; files: number }> {
    return this.scans.scanFolder(name);
  }

  async resetTransferQuota(username: string): Promise<void> {
    await this.quota.updateUserTransfer(username, {}, 'reset', null);
  }

  async setUserStatus(username: string, status: number, actor: Actor = SYSTEM_ACTOR): Promise<void> {
    await this.userService.setStatus(username, status, actor);
  }

  async deleteUser(username: string, actor: Actor = SYSTEM_ACTOR): Promise<void> {
    await this.userService.delete(username, null, actor);
  }
}

import { InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import { UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { AdminGroup, Folder, Group, GroupFolder, UserGroup } from '../data/entities/index.js';
import type { ListQuery } from '../util/common.input.js';
import type { GroupInput } from './group.input.js';
import type { AdminIdentity } from '../auth/credentials.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { FilesystemConfigService } from './filesystem-config.js';
import { dbLookup, type AccountLookup, type StoredGroupSettings } from './account-lookup.js';

type Obj = Record<string, unknown>;

export interface PreparedGroup {
  name: string;
  description: string;
  user_settings: StoredGroupSettings;
  folders: { name: string; virtual_path: string; quota_size: number; quota_files: number }[];
  created_at?: number;
  updated_at?: number;
}

export interface GroupRenderOptions {
  confidential?: boolean;
  /** Backup form: no ids, no users/admins lists (they belong to users and admins). */
  dump?: boolean;
  /** A role-scoped caller sees only the users of its role. */
  caller?: AdminIdentity | null;
}

/** Names of the users (or admins) referencing some groups, by group id, in one query. */
export async function namesByOwner(em: EntityManager, sql: string, ids: number[], extra: unknown[] = []): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (!ids.length) return out;
  const rows = (await em.getConnection().execute(sql, [ids, ...extra])) as { oid: number | string; name: string }[];
  for (const r of rows) {
    const id = Number(r.oid);
    if (!out.has(id)) out.set(id, []);
    out.get(id)!.push(r.name);
  }
  return out;
}

const USERS_OF_GROUPS =
  'select ug.group_id as oid, u.username as name from users_groups ug join users u on u.id = ug.user_id where ug.group_id in (?) order by u.username';
const USERS_OF_GROUPS_ROLE =
  'select ug.group_id as oid, u.username as name from users_groups ug join users u on u.id = ug.user_id join roles r on r.id = u.role_id where ug.group_id in (?) and r.name = ? order by u.username';
const ADMINS_OF_GROUPS =
  'select ag.group_id as oid, a.username as name from admins_groups ag join admins a on a.id = ag.admin_id where ag.group_id in (?) order by a.username';

/** Groups: shared user settings and virtual folders applied to their members (see mergeEffectiveUser). */
@injectable()
export class GroupService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(FilesystemConfigService) private readonly fsConfig: FilesystemConfigService,
  ) {}

  em(): EntityManager {
    return this.orm.em.fork();
  }

  async list(q: ListQuery, em: EntityManager = this.em()): Promise<Group[]> {
    return em.find(Group, {}, { orderBy: { name: q.order }, offset: q.offset, limit: q.limit });
  }

  async get(name: string, em: EntityManager = this.em()): Promise<Group> {
    const group = await em.findOne(Group, { name });
    if (!group) throw new NotFoundError(`group "${name}" not found`);
    return group;
  }

  /** Renders groups in batch: folders, users and admins with one query each. */
  async renderMany(groups: Group[], o: GroupRenderOptions = {}, em: EntityManager = this.em()): Promise<Obj[]> {
    if (!groups.length) return [];
    const ids = groups.map((g) => g.id);
    const conf = Boolean(o.confidential || o.dump);
    const [folders, users, admins] = await Promise.all([
      em.find(GroupFolder, { group: { $in: ids } }, { populate: ['folder'] }),
      o.dump
        ? new Map<number, string[]>()
        : namesByOwner(em, o.caller?.role ? USERS_OF_GROUPS_ROLE : USERS_OF_GROUPS, ids, o.caller?.role ? [o.caller.role] : []),
      o.dump ? new Map<number, string[]>() : namesByOwner(em, ADMINS_OF_GROUPS, ids),
    ]);
    const fm = new Map<number, GroupFolder[]>();
    for (const f of folders) {
      const gid = (f.group as Group).id;
      if (!fm.has(gid)) fm.set(gid, []);
      fm.get(gid)!.push(f);
    }
    return groups.map((g) => {
      const us = { ...(g.user_settings ?? {}) } as Obj;
      if (us.filesystem) us.filesystem = this.fsConfig.render(us.filesystem as never, conf);
      const out: Obj = {
        id: g.id,
        name: g.name,
        description: g.description,
        created_at: g.created_at,
        updated_at: g.updated_at,
        user_settings: us,
        virtual_folders: (fm.get(g.id) ?? [])
          .map((m) =>
            o.dump
              ? { name: m.folder.name, virtual_path: m.virtual_path, quota_size: m.quota_size, quota_files: m.quota_files }
              : {
                  id: m.folder.id,
                  name: m.folder.name,
                  description: m.folder.description,
                  mapped_path: m.folder.mapped_path,
                  filesystem: this.fsConfig.render(m.folder.filesystem, conf),
                  used_quota_size: m.folder.used_quota_size,
                  used_quota_files: m.folder.used_quota_files,
                  last_quota_update: m.folder.last_quota_update,
                  virtual_path: m.virtual_path,
                  quota_size: m.quota_size,
                  quota_files: m.quota_files,
                },
          )
          .sort((a, b) => a.virtual_path.localeCompare(b.virtual_path)),
        users: users.get(g.id) ?? [],
        admins: admins.get(g.id) ?? [],
      };
      if (o.dump) {
        delete out.id;
        delete out.users;
        delete out.admins;
      }
      return out;
    });
  }

  async render(group: Group, o: GroupRenderOptions = {}, em: EntityManager = this.em()): Promise<Obj> {
    return (await this.renderMany([group], o, em))[0]!;
  }

  /** Validates a group (folders exist, filesystem through its provider, secrets) without writing. */
  async prepare(input: GroupInput, existing: Group | null, o: { lookup: AccountLookup; restore?: boolean }): Promise<PreparedGroup> {
    const name = existing?.name ?? input.name;
    for (const f of input.virtual_folders) {
      if (!(await o.lookup.folder(f.name))) throw new InvalidError(`"virtual_folders": folder "${f.name}" does not exist`);
    }
    const settings: StoredGroupSettings = { ...(input.user_settings as StoredGroupSettings) };
    const stored = (existing?.user_settings as StoredGroupSettings | undefined)?.filesystem;
    if (input.user_settings.filesystem) {
      settings.filesystem = await this.fsConfig.normalize(input.user_settings.filesystem, { label: 'user_settings.filesystem', owner: name, stored });
    }
    for (const k of Object.keys(settings) as (keyof StoredGroupSettings)[]) if (settings[k] === undefined) delete settings[k];
    const p: PreparedGroup = { name, description: input.description, user_settings: settings, folders: input.virtual_folders };
    if (o.restore) {
      p.created_at = input.created_at;
      p.updated_at = input.updated_at;
    }
    return p;
  }

  /** Writes a prepared group inside the caller's transaction, replacing its folder mappings. */
  async write(em: EntityManager, p: PreparedGroup, existing: Group | null): Promise<Group> {
    const now = Date.now();
    let group: Group;
    if (existing) {
      group = existing;
      em.assign(group, { description: p.description, user_settings: p.user_settings as Obj, updated_at: p.updated_at ?? now });
    } else {
      group = em.create(Group, {
        name: p.name,
        description: p.description,
        user_settings: p.user_settings as Obj,
        created_at: p.created_at ?? now,
        updated_at: p.updated_at ?? now,
      });
    }
    await em.flush();
    const [folders] = await Promise.all([
      p.folders.length ? em.find(Folder, { name: { $in: p.folders.map((f) => f.name) } }) : Promise.resolve([] as Folder[]),
      existing ? em.nativeDelete(GroupFolder, { group: group.id }) : Promise.resolve(0),
    ]);
    const fm = new Map(folders.map((f) => [f.name, f]));
    for (const f of p.folders) {
      const folder = fm.get(f.name);
      if (!folder) throw new InvalidError(`"virtual_folders": folder "${f.name}" does not exist`);
      em.create(GroupFolder, { group, folder, virtual_path: f.virtual_path, quota_size: f.quota_size, quota_files: f.quota_files });
    }
    await em.flush();
    return group;
  }

  async create(input: GroupInput, actor: Actor): Promise<Group> {
    const em = this.em();
    if (await em.count(Group, { name: input.name })) throw new InvalidError(`group "${input.name}" already exists`);
    const p = await this.prepare(input, null, { lookup: dbLookup(em) });
    let group: Group;
    try {
      group = await em.transactional((tem) => this.write(tem, p, null));
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw new InvalidError(`group "${input.name}" already exists`);
      throw err;
    }
    this.events.emit('add', 'group', group.name, await this.render(group), actor);
    return group;
  }

  async update(name: string, input: GroupInput, actor: Actor): Promise<void> {
    const em = this.em();
    const group = await this.get(name, em);
    if (input.name !== undefined && input.name !== name) throw new InvalidError('a group cannot be renamed: the name in the body must match the path');
    const p = await this.prepare({ ...input, name }, group, { lookup: dbLookup(em) });
    await em.transactional((tem) => this.write(tem, p, group));
    this.events.emit('update', 'group', name, await this.render(await this.get(name)), actor);
  }

  async delete(name: string, actor: Actor): Promise<void> {
    const em = this.em();
    const group = await this.get(name, em);
    const [users, admins] = await Promise.all([
      em.find(UserGroup, { group: group.id }, { populate: ['user'], limit: 10, orderBy: { user: { username: 'ASC' } } }),
      em.find(AdminGroup, { group: group.id }, { populate: ['admin'], limit: 10, orderBy: { admin: { username: 'ASC' } } }),
    ]);
    if (users.length || admins.length) {
      const refs = [...users.map((u) => `user "${u.user.username}"`), ...admins.map((a) => `admin "${a.admin.username}"`)];
      throw new InvalidError(`group "${name}" is still referenced by ${refs.join(', ')}`);
    }
    const data = await this.render(group, {}, em);
    await em.transactional(async (tem) => {
      await tem.nativeDelete(GroupFolder, { group: group.id });
      await tem.nativeDelete(Group, { id: group.id });
    });
    this.events.emit('delete', 'group', name, data, actor);
  }
}

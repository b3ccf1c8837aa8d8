import { InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import { UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Folder, GroupFolder, UserFolder } from '../data/entities/index.js';
import type { StoredFilesystem } from '../data/entities/index.js';
import type { ListQuery } from '../util/common.input.js';
import type { FolderInput } from './folder.input.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { FilesystemConfigService } from './filesystem-config.js';
import { namesByOwner } from './group.service.js';

type Obj = Record<string, unknown>;

export interface PreparedFolder {
  name: string;
  description: string;
  mapped_path: string;
  filesystem: StoredFilesystem;
  /** Restore only. */
  counters?: { used_quota_size?: number; used_quota_files?: number; last_quota_update?: number; created_at?: number; updated_at?: number };
}

const USERS_OF_FOLDERS =
  'select uf.folder_id as oid, u.username as name from users_folders uf join users u on u.id = uf.user_id where uf.folder_id in (?) order by u.username';
const GROUPS_OF_FOLDERS =
  'select gf.folder_id as oid, g.name as name from groups_folders gf join groups g on g.id = gf.group_id where gf.folder_id in (?) order by g.name';

/** Virtual folders: storage mounted into users' and groups' trees, with their own used-quota counters. */
@injectable()
export class FolderService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(FilesystemConfigService) private readonly fsConfig: FilesystemConfigService,
  ) {}

  em(): EntityManager {
    return this.orm.em.fork();
  }

  async list(q: ListQuery, em: EntityManager = this.em()): Promise<Folder[]> {
    return em.find(Folder, {}, { orderBy: { name: q.order }, offset: q.offset, limit: q.limit });
  }

  async get(name: string, em: EntityManager = this.em()): Promise<Folder> {
    const folder = await em.findOne(Folder, { name });
    if (!folder) throw new NotFoundError(`folder "${name}" not found`);
    return folder;
  }

  async renderMany(folders: Folder[], o: { confidential?: boolean; dump?: boolean } = {}, em: EntityManager = this.em()): Promise<Obj[]> {
    if (!folders.length) return [];
    const ids = folders.map((f) => f.id);
    const [users, groups] = o.dump
      ? [new Map<number, string[]>(), new Map<number, string[]>()]
      : await Promise.all([namesByOwner(em, USERS_OF_FOLDERS, ids), namesByOwner(em, GROUPS_OF_FOLDERS, ids)]);
    return folders.map((f) => {
      const out: Obj = {
        id: f.id,
        name: f.name,
        description: f.description,
        mapped_path: f.mapped_path,
        used_quota_size: f.used_quota_size,
        used_quota_files: f.used_quota_files,
        last_quota_update: f.last_quota_update,
        filesystem: this.fsConfig.render(f.filesystem, Boolean(o.confidential || o.dump)),
        users: users.get(f.id) ?? [],
        groups: groups.get(f.id) ?? [],
        created_at: f.created_at,
        updated_at: f.updated_at,
      };
      if (o.dump) {
        delete out.id;
        delete out.users;
        delete out.groups;
      }
      return out;
    });
  }

  async render(folder: Folder, o: { confidential?: boolean; dump?: boolean } = {}, em: EntityManager = this.em()): Promise<Obj> {
    return (await this.renderMany([folder], o, em))[0]!;
  }

  /** Validates a folder: mapped_path (absolute) for local providers, its own filesystem otherwise; secrets. */
  async prepare(input: FolderInput, existing: Folder | null, o: { restore?: boolean } = {}): Promise<PreparedFolder> {
    const name = existing?.name ?? input.name;
    const filesystem = await this.fsConfig.normalize(input.filesystem, { label: 'filesystem', owner: name, stored: existing?.filesystem });
    if (this.fsConfig.requiresLocalRoot(filesystem.provider) && !input.mapped_path) {
      throw new InvalidError(`"mapped_path" is required (an absolute path) for filesystem provider ${filesystem.provider}`);
    }
    const p: PreparedFolder = { name, description: input.description, mapped_path: input.mapped_path, filesystem };
    if (o.restore) {
      p.counters = {
        used_quota_size: input.used_quota_size,
        used_quota_files: input.used_quota_files,
        last_quota_update: input.last_quota_update,
        created_at: input.created_at,
        updated_at: input.updated_at,
      };
    }
    return p;
  }

  async write(em: EntityManager, p: PreparedFolder, existing: Folder | null): Promise<Folder> {
    const now = Date.now();
    const c = p.counters ?? {};
    const defined = Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined));
    let folder: Folder;
    if (existing) {
      folder = existing;
      em.assign(folder, { description: p.description, mapped_path: p.mapped_path, filesystem: p.filesystem, updated_at: now, ...defined });
    } else {
      folder = em.create(Folder, {
        name: p.name,
        description: p.description,
        mapped_path: p.mapped_path,
        filesystem: p.filesystem,
        used_quota_size: 0,
        used_quota_files: 0,
        last_quota_update: 0,
        created_at: now,
        updated_at: now,
        ...defined,
      });
    }
    await em.flush();
    return folder;
  }

  async create(input: FolderInput, actor: Actor): Promise<Folder> {
    const em = this.em();
    if (await em.count(Folder, { name: input.name })) throw new InvalidError(`folder "${input.name}" already exists`);
    const p = await this.prepare(input, null);
    let folder: Folder;
    try {
      folder = await this.write(em, p, null);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw new InvalidError(`folder "${input.name}" already exists`);
      throw err;
    }
    this.events.emit('add', 'folder', folder.name, await this.render(folder), actor);
    return folder;
  }

  async update(name: string, input: FolderInput, actor: Actor): Promise<void> {
    const em = this.em();
    const folder = await this.get(name, em);
    if (input.name !== undefined && input.name !== name) throw new InvalidError('a folder cannot be renamed: the name in the body must match the path');
    const p = await this.prepare({ ...input, name }, folder);
    await this.write(em, p, folder);
    this.events.emit('update', 'folder', name, await this.render(await this.get(name)), actor);
  }

  async delete(name: string, actor: Actor): Promise<void> {
    const em = this.em();
    const folder = await this.get(name, em);
    const [users, groups] = await Promise.all([
      em.find(UserFolder, { folder: folder.id }, { populate: ['user'], limit: 10, orderBy: { user: { username: 'ASC' } } }),
      em.find(GroupFolder, { folder: folder.id }, { populate: ['group'], limit: 10, orderBy: { group: { name: 'ASC' } } }),
    ]);
    if (users.length || groups.length) {
      const refs = [...users.map((u) => `user "${u.user.username}"`), ...groups.map((g) => `group "${g.group.name}"`)];
      throw new InvalidError(`folder "${name}" is still referenced by ${refs.join(', ')}`);
    }
    const data = await this.render(folder, {}, em);
    await em.nativeDelete(Folder, { id: folder.id });
    this.events.emit('delete', 'folder', name, data, actor);
  }
}

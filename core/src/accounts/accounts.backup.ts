import { InvalidError } from '../errors.js';
import { TOKENS } from '../tokens.js';
import { isSecret, type Secret, type SecretsService } from '../secrets/secret.js';
import Joi from 'joi';
import { inject, injectable } from 'tsyringe';
import { Admin, AdminGroup, ApiKey, Folder, Group, Role, User } from '../data/entities/index.js';
import { userCreateInput, type UserInput } from './user.input.js';
import { groupCreateInput, type GroupInput } from './group.input.js';
import { folderCreateInput, type FolderInput } from './folder.input.js';
import { roleInput } from './role.input.js';
import { adminInput, type AdminInput } from './admin.input.js';
import { timestampMs } from '../util/common.input.js';
import { UserService, type PreparedUser } from './user.service.js';
import { GroupService, type PreparedGroup } from './group.service.js';
import { FolderService, type PreparedFolder } from './folder.service.js';
import { renderSecretsIn } from './filesystem-config.js';
import { hashPassword, isPasswordHash } from './password.js';
import { dumpPaged, loadByName, nameOf, named, validateItem, type BackupSection, type BackupSectionSource, type Item } from '../data/backup-section.js';

type Obj = Record<string, unknown>;

/** The account sections: roles, folders, groups, users, admins, API keys. */
@injectable()
export class AccountBackupSections implements BackupSectionSource {
  constructor(
    @inject(UserService) private readonly users: UserService,
    @inject(GroupService) private readonly groups: GroupService,
    @inject(FolderService) private readonly folders: FolderService,
    @inject(TOKENS.Secrets) private readonly secrets: SecretsService,
  ) {}

  /**
   * 2FA material of a restored account as stored: a TOTP secret or recovery
   * code given in clear (`{"status": "Plain"}`, e.g. a hand-written backup)
   * is encrypted like the enrolment does; encrypted ones are kept as they are.
   */
  private async sealTwoFactor(filters: Record<string, unknown>, aad: string): Promise<void> {
    const totp = filters.totp_config as { secret?: Secret } | undefined;
    if (totp && isSecret(totp.secret) && totp.secret.status === 'Plain') {
      const plain = (totp.secret.payload ?? '').trim().toUpperCase();
      // base32 of at least 80 bits (16 characters), as the enrolment requires
      if (!/^[A-Z2-7]{16,}=*$/.test(plain)) throw new InvalidError('"filters.totp_config.secret" must be a base32 TOTP secret of at least 80 bits');
      filters.totp_config = { ...totp, secret: await this.secrets.encrypt(plain, aad) };
    }
    const codes = filters.recovery_codes as { secret?: Secret; used?: boolean }[] | undefined;
    if (Array.isArray(codes)) {
      filters.recovery_codes = await Promise.all(
        codes.map(async (c) =>
          isSecret(c.secret) && c.secret.status === 'Plain' ? { ...c, secret: await this.secrets.encrypt(c.secret.payload ?? '', aad) } : c,
        ),
      );
    }
  }

  sections(): BackupSection<any>[] {
    return [this.roles(), this.folderSection(), this.groupSection(), this.userSection(), this.admins(), this.apiKeys()];
  }

  private roles(): BackupSection<Item<{ name: string; description: string; created_at?: number; updated_at?: number }>[]> {
    const schema = roleInput.keys({ created_at: timestampMs, updated_at: timestampMs });
    return {
      scope: 'roles',
      key: 'roles',
      order: 10,
      names: (items) => items.map(nameOf('name')),
      dump: async (em) =>
        (await em.find(Role, {}, { orderBy: { name: 'ASC' } })).map((r) => ({
          name: r.name,
          description: r.description,
          created_at: r.created_at,
          updated_at: r.updated_at,
        })),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, Role, 'name', items.map(nameOf('name')));
        return items.map((item, i) => {
          const v = validateItem<{ name: string; description: string; created_at?: number; updated_at?: number }>(
            'roles',
            i,
            item,
            schema,
            nameOf('name')(item),
          );
          return { name: v.name, keep: ctx.mode === 1 && existing.has(v.name), prepared: v, data: item as Obj };
        });
      },
      restore: async (items, ctx) => {
        const existing = await loadByName(
          ctx.em,
          Role,
          'name',
          items.map((x) => x.name),
        );
        const now = Date.now();
        for (const it of items) {
          if (it.keep) continue;
          const v = it.prepared!;
          const ex = existing.get(v.name);
          if (ex) ctx.em.assign(ex, { description: v.description, updated_at: v.updated_at ?? now, ...(v.created_at ? { created_at: v.created_at } : {}) });
          else ctx.em.create(Role, { name: v.name, description: v.description, created_at: v.created_at ?? now, updated_at: v.updated_at ?? now });
          ctx.event(ex ? 'update' : 'add', 'role', v.name, it.data);
        }
        await ctx.em.flush();
      },
    };
  }

  private folderSection(): BackupSection<Item<PreparedFolder>[]> {
    return {
      scope: 'folders',
      key: 'folders',
      order: 20,
      names: (items) => items.map(nameOf('name')),
      dump: (em) => dumpPaged(em, Folder, 'name', (rows) => this.folders.renderMany(rows, { dump: true }, em)),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, Folder, 'name', items.map(nameOf('name')));
        const out: Item<PreparedFolder>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<FolderInput>('folders', i, item, folderCreateInput, nameOf('name')(item));
          const ex = existing.get(v.name) ?? null;
          if (ctx.mode === 1 && ex) out.push({ name: v.name, keep: true, data: item as Obj });
          else out.push({ name: v.name, prepared: await named('folders', i, v.name, () => this.folders.prepare(v, ex, { restore: true })), data: item as Obj });
        }
        return out;
      },
      restore: async (items, ctx) => {
        const existing = await loadByName(
          ctx.em,
          Folder,
          'name',
          items.map((x) => x.name),
        );
        for (const it of items) {
          if (it.keep) continue;
          const ex = existing.get(it.name) ?? null;
          await this.folders.write(ctx.em, it.prepared!, ex);
          ctx.event(ex ? 'update' : 'add', 'folder', it.name, it.data);
          ctx.scanCandidate('folder', it.name, true);
        }
      },
    };
  }

  private groupSection(): BackupSection<Item<PreparedGroup>[]> {
    return {
      scope: 'groups',
      key: 'groups',
      order: 30,
      names: (items) => items.map(nameOf('name')),
      dump: (em) => dumpPaged(em, Group, 'name', (rows) => this.groups.renderMany(rows, { dump: true }, em)),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, Group, 'name', items.map(nameOf('name')));
        const out: Item<PreparedGroup>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<GroupInput>('groups', i, item, groupCreateInput, nameOf('name')(item));
          const ex = existing.get(v.name) ?? null;
          if (ctx.mode === 1 && ex) out.push({ name: v.name, keep: true, data: item as Obj });
          else
            out.push({
              name: v.name,
              prepared: await named('groups', i, v.name, () => this.groups.prepare(v, ex, { lookup: ctx.lookup, restore: true })),
              data: item as Obj,
            });
        }
        return out;
      },
      restore: async (items, ctx) => {
        const existing = await loadByName(
          ctx.em,
          Group,
          'name',
          items.map((x) => x.name),
        );
        for (const it of items) {
          if (it.keep) continue;
          const ex = existing.get(it.name) ?? null;
          await this.groups.write(ctx.em, it.prepared!, ex);
          ctx.event(ex ? 'update' : 'add', 'group', it.name, it.data);
        }
      },
    };
  }

  private userSection(): BackupSection<Item<PreparedUser>[]> {
    return {
      scope: 'users',
      key: 'users',
      order: 40,
      names: (items) => items.map(nameOf('username')),
      dump: (em) => dumpPaged(em, User, 'username', (rows) => this.users.renderMany(rows, { dump: true }, em), ['role']),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, User, 'username', items.map(nameOf('username')), ['role']);
        const out: Item<PreparedUser>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<UserInput>('users', i, item, userCreateInput, nameOf('username')(item));
          const ex = existing.get(v.username) ?? null;
          if (ctx.mode === 1 && ex) out.push({ name: v.username, keep: true, data: item as Obj });
          else {
            const prepared = await named('users', i, v.username, async () => {
              const p = await this.users.prepare(v, ex, { lookup: ctx.lookup, caller: null, restore: true });
              if (p.fields.filters) await this.sealTwoFactor(p.fields.filters, `user:${v.username}`);
              return p;
            });
            out.push({ name: v.username, prepared, data: item as Obj });
          }
        }
        return out;
      },
      restore: async (items, ctx) => {
        const existing = await loadByName(
          ctx.em,
          User,
          'username',
          items.map((x) => x.name),
          ['role'],
        );
        for (const it of items) {
          if (it.keep) continue;
          const ex = existing.get(it.name) ?? null;
          await this.users.write(ctx.em, it.prepared!, ex);
          ctx.event(ex ? 'update' : 'add', 'user', it.name, it.data);
          if (ex) ctx.disconnect(it.name);
          const f = it.prepared!.fields;
          ctx.scanCandidate('user', it.name, Boolean(f.quota_size || f.quota_files));
        }
      },
    };
  }

  private admins(): BackupSection<Item<AdminInput & { password_hash: string | undefined; created_at?: number; updated_at?: number; last_login?: number }>[]> {
    const filters = (adminInput.extract('filters') as Joi.ObjectSchema).keys({
      totp_config: Joi.object().unknown(true),
      recovery_codes: Joi.array().items(Joi.object().unknown(true)),
    });
    const schema = adminInput.keys({ filters, created_at: timestampMs, updated_at: timestampMs, last_login: timestampMs });
    return {
      scope: 'admins',
      key: 'admins',
      order: 50,
      names: (items) => items.map(nameOf('username')),
      dump: (em) =>
        dumpPaged(
          em,
          Admin,
          'username',
          async (rows) => {
            const groups = await em.find(AdminGroup, { admin: { $in: rows.map((a) => a.id) } }, { populate: ['group'] });
            return rows.map((a) => {
              const out: Obj = {
                username: a.username,
                email: a.email,
                status: a.status,
                description: a.description,
                additional_info: a.additional_info,
                permissions: a.permissions,
                filters: renderSecretsIn(a.filters ?? {}, true),
                groups: groups
                  .filter((g) => g.admin.id === a.id)
                  .map((g) => ({ name: g.group.name, options: { add_to_users_as: g.add_to_users_as } }))
                  .sort((x, y) => x.name.localeCompare(y.name)),
                role: a.role ? (a.role as Role).name : '',
                created_at: a.created_at,
                updated_at: a.updated_at,
                last_login: a.last_login,
              };
              if (a.password_hash) out.password = a.password_hash;
              return out;
            });
          },
          ['role'],
        ),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, Admin, 'username', items.map(nameOf('username')));
        const out: Item<AdminInput & { password_hash: string | undefined }>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<AdminInput & { created_at?: number; updated_at?: number; last_login?: number }>(
            'admins',
            i,
            item,
            schema,
            nameOf('username')(item),
          );
          const ex = existing.get(v.username);
          if (ctx.mode === 1 && ex) {
            out.push({ name: v.username, keep: true, data: item as Obj });
            continue;
          }
          const prepared = await named('admins', i, v.username, async () => {
            if (v.role && !(await ctx.lookup.role(v.role))) throw new InvalidError(`role "${v.role}" does not exist`);
            for (const g of v.groups) if (!(await ctx.lookup.group(g.name))) throw new InvalidError(`group "${g.name}" does not exist`);
            let hash: string | undefined;
            if (v.password) hash = isPasswordHash(v.password) ? v.password : await hashPassword(v.password);
            if (!hash && !ex?.password_hash && !v.filters.disable_password_auth) {
              throw new InvalidError('"password" is required unless password login is disabled (filters.disable_password_auth)');
            }
            await this.sealTwoFactor(v.filters as Record<string, unknown>, `admin:${v.username}`);
            return { ...v, password_hash: hash };
          });
          out.push({ name: v.username, prepared, data: item as Obj });
        }
        return out;
      },
      restore: async (items, ctx) => {
        const em = ctx.em;
        const existing = await loadByName(
          em,
          Admin,
          'username',
          items.map((x) => x.name),
        );
        const now = Date.now();
        for (const it of items) {
          if (it.keep) continue;
          const v = it.prepared!;
          const role = v.role ? await em.findOne(Role, { name: v.role }) : null;
          const fields = {
            email: v.email,
            status: v.status,
            description: v.description,
            additional_info: v.additional_info,
            permissions: v.permissions,
            filters: { ...v.filters },
            role,
            updated_at: v.updated_at ?? now,
            ...(v.created_at ? { created_at: v.created_at } : {}),
            ...(v.last_login !== undefined ? { last_login: v.last_login } : {}),
            ...(v.password_hash ? { password_hash: v.password_hash } : {}),
          };
          let admin = existing.get(v.username);
          const isNew = !admin;
          if (admin) em.assign(admin, fields as never);
          else admin = em.create(Admin, { username: v.username, password_hash: '', created_at: now, last_login: 0, ...fields } as Admin);
          await em.flush();
          if (!isNew) await em.nativeDelete(AdminGroup, { admin: admin.id });
          const groups = v.groups.length ? await em.find(Group, { name: { $in: v.groups.map((g) => g.name) } }) : [];
          for (const g of v.groups) {
            const group = groups.find((x) => x.name === g.name);
            if (!group) throw new InvalidError(`admins "${v.username}": group "${g.name}" does not exist`);
            em.create(AdminGroup, { admin, group, add_to_users_as: g.options.add_to_users_as });
          }
          await em.flush();
          ctx.event(isNew ? 'add' : 'update', 'admin', v.username, it.data);
        }
      },
    };
  }

  private apiKeys(): BackupSection<Item<Obj>[]> {
    const schema = Joi.object({
      id: Joi.string()
        .pattern(/^[A-Za-z0-9_-]{8,64}$/, 'API key id')
        .required(),
      key: Joi.string()
        .pattern(/^[0-9a-f]{64}$/, 'SHA-256 hash of the key (hex)')
        .required(),
      name: Joi.string().trim().min(1).max(255).required(),
      scope: Joi.number().valid(1, 2).required(),
      description: Joi.string().allow('').max(4096).default(''),
      created_at: timestampMs.default(0),
      updated_at: timestampMs.default(0),
      last_use_at: timestampMs.default(0),
      expires_at: timestampMs.default(0),
      user: Joi.string().allow('').default(''),
      admin: Joi.string().allow('').default(''),
    });
    return {
      scope: 'api_keys',
      key: 'api_keys',
      order: 60,
      names: (items) => items.map(nameOf('id')),
      dump: async (em) =>
        (await em.find(ApiKey, {}, { orderBy: { key_id: 'ASC' }, populate: ['user', 'admin'] })).map((k) => ({
          id: k.key_id,
          key: k.key_hash,
          name: k.name,
          scope: k.scope,
          description: k.description,
          created_at: k.created_at,
          updated_at: k.updated_at,
          last_use_at: k.last_use_at,
          expires_at: k.expires_at,
          user: k.user ? (k.user as User).username : '',
          admin: k.admin ? (k.admin as Admin).username : '',
        })),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, ApiKey, 'key_id', items.map(nameOf('id')));
        const out: Item<Obj>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<Obj>('api_keys', i, item, schema, nameOf('id')(item));
          const id = String(v.id);
          if (ctx.mode === 1 && existing.has(id)) {
            out.push({ name: id, keep: true, data: item as Obj });
            continue;
          }
          await named('api_keys', i, id, async () => {
            if (v.scope === 1 && v.user) throw new InvalidError('an admin-scoped API key cannot be bound to a user');
            if (v.scope === 2 && v.admin) throw new InvalidError('a user-scoped API key cannot be bound to an admin');
            if (v.user && !(await ctx.lookup.user(String(v.user)))) throw new InvalidError(`user "${v.user}" does not exist`);
            if (v.admin && !(await ctx.lookup.admin(String(v.admin)))) throw new InvalidError(`admin "${v.admin}" does not exist`);
          });
          const data = { ...(item as Obj) };
          delete data.key;
          out.push({ name: id, prepared: v, data });
        }
        return out;
      },
      restore: async (items, ctx) => {
        const em = ctx.em;
        const existing = await loadByName(
          em,
          ApiKey,
          'key_id',
          items.map((x) => x.name),
        );
        for (const it of items) {
          if (it.keep) continue;
          const v = it.prepared!;
          const user = v.user ? await em.findOne(User, { username: String(v.user) }) : null;
          const admin = v.admin ? await em.findOne(Admin, { username: String(v.admin) }) : null;
          const fields = {
            name: String(v.name),
            key_hash: String(v.key),
            scope: Number(v.scope),
            description: String(v.description),
            user,
            admin,
            created_at: Number(v.created_at),
            updated_at: Number(v.updated_at),
            last_use_at: Number(v.last_use_at),
            expires_at: Number(v.expires_at),
          };
          const ex = existing.get(it.name);
          if (ex) em.assign(ex, fields);
          else em.create(ApiKey, { key_id: it.name, ...fields });
          ctx.event(ex ? 'update' : 'add', 'api_key', it.name, it.data);
        }
        await em.flush();
      },
    };
  }

  /**
   * Shares (after the users they belong to). The password is dumped as its
   * argon2 hash and restored as dumped (a plain password is hashed); paths
   * are not checked against the owner's tree, expired shares are kept.
   */
}

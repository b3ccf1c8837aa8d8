import { InvalidError } from '../errors.js';
import Joi from 'joi';
import { injectable } from 'tsyringe';
import { Share, User } from '../data/entities/index.js';
import { timestampMs } from '../util/common.input.js';
import { hashPassword, isPasswordHash } from '../accounts/password.js';
import { dumpPaged, loadByName, nameOf, named, validateItem, type BackupSection, type BackupSectionSource, type Item } from '../data/backup-section.js';
import { ShareScope, shareId, shareInput } from './share.input.js';

type Obj = Record<string, unknown>;

/** The `shares` section of dumpdata/loaddata (after the users who own them). */
@injectable()
export class ShareBackupSections implements BackupSectionSource {
  sections(): BackupSection<any>[] {
    return [this.section()];
  }

  private section(): BackupSection<Item<Obj>[]> {
    const schema = shareInput.keys({
      id: shareId.required(),
      // a stored share has its scope (only a user's create or update may leave it to the share policies)
      scope: Joi.number().integer().valid(ShareScope.Read, ShareScope.Write, ShareScope.ReadWrite).required(),
      username: Joi.string().min(1).max(255).required(),
      created_at: timestampMs.default(0),
      updated_at: timestampMs.default(0),
      last_use_at: timestampMs.default(0),
      used_tokens: Joi.number().integer().min(0).max(2147483647).default(0),
    });
    return {
      scope: 'shares',
      key: 'shares',
      order: 70,
      names: (items) => items.map(nameOf('id')),
      dump: (em) =>
        dumpPaged(
          em,
          Share,
          'share_id',
          async (rows) =>
            rows.map((x) => ({
              id: x.share_id,
              name: x.name,
              description: x.description,
              scope: x.scope,
              paths: x.paths,
              username: (x.user as User).username,
              created_at: x.created_at,
              updated_at: x.updated_at,
              last_use_at: x.last_use_at,
              expires_at: x.expires_at,
              password: x.password_hash,
              max_tokens: x.max_tokens,
              used_tokens: x.used_tokens,
              allow_from: x.allow_from,
              emails: x.emails,
            })),
          ['user'],
        ),
      validate: async (items, ctx) => {
        const existing = await loadByName(ctx.em, Share, 'share_id', items.map(nameOf('id')));
        const out: Item<Obj>[] = [];
        for (const [i, item] of items.entries()) {
          const v = validateItem<Obj>('shares', i, item, schema, nameOf('id')(item));
          const id = String(v.id);
          if (ctx.mode === 1 && existing.has(id)) {
            out.push({ name: id, keep: true, data: item as Obj });
            continue;
          }
          const prepared = await named('shares', i, id, async () => {
            if (!(await ctx.lookup.user(String(v.username)))) throw new InvalidError(`user "${v.username}" does not exist`);
            const paths = v.paths as string[];
            if (new Set(paths).size !== paths.length) throw new InvalidError('"paths" holds the same path twice');
            if (v.scope !== 1 && paths.length !== 1) throw new InvalidError('"paths": a share with write scope needs exactly one directory path');
            const pw = String(v.password);
            return { ...v, password_hash: pw === '' || isPasswordHash(pw) ? pw : await hashPassword(pw) };
          });
          const data = { ...(item as Obj) };
          delete data.password;
          out.push({ name: id, prepared, data });
        }
        return out;
      },
      restore: async (items, ctx) => {
        const em = ctx.em;
        const existing = await loadByName(
          em,
          Share,
          'share_id',
          items.map((x) => x.name),
        );
        const now = Date.now();
        for (const it of items) {
          if (it.keep) continue;
          const v = it.prepared!;
          const user = await em.findOne(User, { username: String(v.username) });
          if (!user) throw new InvalidError(`shares "${it.name}": user "${v.username}" does not exist`);
          const fields = {
            name: String(v.name),
            description: String(v.description ?? ''),
            scope: Number(v.scope),
            paths: v.paths as string[],
            user,
            password_hash: String(v.password_hash),
            expires_at: Number(v.expires_at),
            max_tokens: Number(v.max_tokens),
            used_tokens: Number(v.used_tokens),
            allow_from: v.allow_from as string[],
            emails: (v.emails as string[] | undefined) ?? [],
            created_at: Number(v.created_at) || now,
            updated_at: Number(v.updated_at) || now,
            last_use_at: Number(v.last_use_at),
          };
          const ex = existing.get(it.name);
          if (ex) em.assign(ex, fields);
          else em.create(Share, { share_id: it.name, ...fields });
          ctx.event(ex ? 'update' : 'add', 'share', it.name, it.data);
        }
        await em.flush();
      },
    };
  }
}

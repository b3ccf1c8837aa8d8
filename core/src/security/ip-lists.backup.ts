import { InvalidError } from '../errors.js';
import { injectable } from 'tsyringe';
import type { EntityManager } from '@mikro-orm/core';
import { IpListEntry } from '../data/entities/index.js';
import { ipListEntryBackup, IP_LIST_TYPES, type IpListEntryInput } from './ip-list.input.js';
import { canonicalIpNet } from '../util/ip-net.js';
import { bumpIpListsVersion, checkIpListMode, ipListEntryName, renderIpListEntry } from './ip-list.service.js';
import type { BackupSection, BackupSectionSource } from '../data/backup-section.js';
import { validateItem, type Item } from '../data/backup-section.js';

type Obj = Record<string, unknown>;
type Entry = IpListEntryInput & { ipornet: string; type: 1 | 2 | 3; created_at: number; updated_at: number };

const BATCH = 500;

/** `<type>_<ipornet>` of a backup item, the network made canonical (so `10.0.0.1` and `10.0.0.1/32` are the same entry). */
function itemName(x: unknown): string {
  if (!x || typeof x !== 'object') return '';
  const { type, ipornet } = x as Obj;
  if (typeof ipornet !== 'string') return '';
  return ipListEntryName(Number(type), canonicalIpNet(ipornet) ?? ipornet);
}

/** Existing entries of the given names (`<type>_<ipornet>`), loaded per list in batches. */
async function loadEntries(em: EntityManager, entries: { type: number; ipornet: string }[]): Promise<Map<string, IpListEntry>> {
  const out = new Map<string, IpListEntry>();
  for (const type of IP_LIST_TYPES) {
    const nets = entries.filter((e) => e.type === type).map((e) => e.ipornet);
    for (let i = 0; i < nets.length; i += BATCH) {
      for (const r of await em.find(IpListEntry, { type, ipornet: { $in: nets.slice(i, i + BATCH) } })) out.set(ipListEntryName(r.type, r.ipornet), r);
    }
  }
  return out;
}

/**
 * dumpdata/loaddata section `ip_lists` (scope `ip_lists`): every entry of the
 * three lists, ordered by type then network. A restore validates each entry
 * with the API's rules (canonical network, mode allowed by the list) and keeps
 * the dumped timestamps; the lists' version changes in the restore's
 * transaction, so every node reloads them.
 */
@injectable()
export class IpListBackupSection implements BackupSectionSource {
  sections(): BackupSection<any>[] {
    return [this.section()];
  }

  private section(): BackupSection<Item<Entry>[]> {
    return {
      scope: 'ip_lists',
      key: 'ip_lists',
      order: 100,
      names: (items) => items.map(itemName),
      dump: async (em) => {
        const out: Obj[] = [];
        for (const type of IP_LIST_TYPES) {
          let last: string | null = null;
          for (;;) {
            const rows: IpListEntry[] = await em.find(IpListEntry, last === null ? { type } : { type, ipornet: { $gt: last } }, {
              orderBy: { ipornet: 'ASC' },
              limit: BATCH,
            });
            out.push(...rows.map(renderIpListEntry));
            if (rows.length < BATCH) break;
            last = rows[rows.length - 1]!.ipornet;
            em.clear();
          }
        }
        return out;
      },
      validate: async (items, ctx) => {
        const valid = items.map((item, i) => {
          const v = validateItem<Entry>(
            'ip_lists',
            i,
            item,
            ipListEntryBackup,
            typeof (item as Obj | null)?.ipornet === 'string' ? String((item as Obj).ipornet) : undefined,
          );
          try {
            checkIpListMode(v.type, v.mode);
          } catch (err) {
            throw new InvalidError(`ip_lists[${i}] "${v.ipornet}": ${(err as Error).message}`);
          }
          return v;
        });
        const existing = await loadEntries(ctx.em, valid);
        return valid.map((v) => {
          const name = ipListEntryName(v.type, v.ipornet);
          return { name, keep: ctx.mode === 1 && existing.has(name), prepared: v, data: { ...v } };
        });
      },
      restore: async (items, ctx) => {
        const write = items.filter((it) => !it.keep);
        if (!write.length) return;
        const em = ctx.em;
        const existing = await loadEntries(
          em,
          write.map((it) => it.prepared!),
        );
        const now = Date.now();
        for (const it of write) {
          const v = it.prepared!;
          const fields = { mode: v.mode, protocols: v.protocols, description: v.description, updated_at: v.updated_at || now };
          const ex = existing.get(it.name);
          const entry = ex
            ? em.assign(ex, { ...fields, ...(v.created_at ? { created_at: v.created_at } : {}) })
            : em.create(IpListEntry, { type: v.type, ipornet: v.ipornet, ...fields, created_at: v.created_at || now });
          ctx.event(ex ? 'update' : 'add', 'ip_list_entry', it.name, renderIpListEntry(entry));
        }
        await em.flush();
        await bumpIpListsVersion(em);
      },
    };
  }
}

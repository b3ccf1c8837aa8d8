import crypto from 'node:crypto';
import { ConflictError, InvalidError, NotFoundError } from '../errors.js';
import { inject, Lifecycle, scoped } from 'tsyringe';
import { raw, UniqueConstraintViolationException, type EntityManager, type FilterQuery, type MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import type { Logger } from '../logger.js';
import { IpListEntry, Setting } from '../data/entities/index.js';
import { canonicalIpNet, IpNetIndex, parseIpNet } from '../util/ip-net.js';
import { IP_LIST_PROTOCOLS, type IpListEntryInput, type IpListProtocol, type IpListQuery, type IpListType } from './ip-list.input.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';

/** Settings row changed (in the same transaction) by every write to the IP lists; nodes compare it to their cached copy. */
export const IP_LISTS_VERSION_KEY = 'ip_lists_version';

/** An entry as the in-memory index keeps it. */
export interface IpListMatch {
  type: number;
  ipornet: string;
  prefix: number;
  mode: number;
  protocols: number;
}

/** The name of an entry in provider events and backups: `<type>_<ipornet>`. */
export const ipListEntryName = (type: number, ipornet: string): string => `${type}_${ipornet}`;

export function renderIpListEntry(e: IpListEntry): Record<string, unknown> {
  return {
    ipornet: e.ipornet,
    description: e.description,
    type: e.type,
    mode: e.mode,
    protocols: e.protocols,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

/** 400 unless the mode fits the list: deny (2) exists only on defender lists. */
export function checkIpListMode(type: number, mode: number): void {
  if (type !== 2 && mode !== 1)
    throw new InvalidError(`"mode" must be 1 (allow) on list type ${type}: deny (2) is supported only on the defender list (type 2)`);
}

/** Marks the IP lists as changed for every node sharing the database (call inside the writing transaction). */
export async function bumpIpListsVersion(em: EntityManager): Promise<void> {
  await em.upsert(Setting, { key: IP_LISTS_VERSION_KEY, value: crypto.randomUUID(), updated_at: Date.now() });
}

interface Snapshot {
  version: string;
  checkedAt: number;
  generation: number;
  lists: Map<number, IpNetIndex<IpListMatch>>;
}

/**
 * IP lists (`/iplists/{type}`): type 1 allow list, 2 defender list (mode 1
 * never banned, 2 always banned), 3 rate limiter safe list.
 *
 * Checks run against an in-memory index per list (IpNetIndex: one hash
 * lookup per prefix length in use, whatever the number of entries). The
 * index is rebuilt at once after a change made on this node; every
 * `common.ip_lists_cache_ttl` seconds a node reads one settings row (the
 * lists' version, changed by every write in the writing transaction) and
 * rebuilds only when another node changed the lists.
 */
@scoped(Lifecycle.ContainerScoped)
export class IpListService {
  private snapshot: Snapshot | null = null;
  private generation = 0;
  private refreshing: Promise<Map<number, IpNetIndex<IpListMatch>>> | null = null;

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.EventBus) bus: EventBus,
  ) {
    // restores (loaddata) announce their writes after the commit
    bus.on('provider', (e) => {
      if (e.object_type === 'ip_list_entry') this.invalidate();
    });
  }

  // ---- CRUD --------------------------------------------------------------

  async list(type: IpListType, q: IpListQuery): Promise<IpListEntry[]> {
    const conds: FilterQuery<IpListEntry>[] = [{ type }];
    if (q.filter) {
      const exact = q.filter.includes('/') ? canonicalIpNet(q.filter) : null;
      conds.push(exact ? { ipornet: exact } : { ipornet: { $like: `${q.filter.toLowerCase()}%` } });
    }
    // byte order on every database (PostgreSQL would otherwise use the database's collation)
    const byBytes = () => (this.config.data_provider.driver === 'postgresql' ? raw((alias: string) => `${alias}.ipornet collate "C"`) : 'ipornet');
    if (q.from) {
      const from = canonicalIpNet(q.from) ?? q.from.toLowerCase();
      conds.push({ [byBytes()]: q.order === 'ASC' ? { $gt: from } : { $lt: from } });
    }
    return this.orm.em.fork().find(IpListEntry, { $and: conds }, { orderBy: { [byBytes()]: q.order }, limit: q.limit });
  }

  async get(type: IpListType, ipornet: string): Promise<IpListEntry> {
    const e = await this.orm.em.fork().findOne(IpListEntry, { type, ipornet });
    if (!e) throw new NotFoundError(`"${ipornet}" is not on IP list ${type}`);
    return e;
  }

  async create(type: IpListType, input: IpListEntryInput, actor: Actor): Promise<IpListEntry> {
    if (input.type !== undefined && input.type !== type) throw new InvalidError(`"type" (${input.type}) must match the list in the path (${type})`);
    checkIpListMode(type, input.mode);
    const ipornet = input.ipornet!;
    const conflict = () => new ConflictError(`"${ipornet}" is already on IP list ${type}`);
    const em = this.orm.em.fork();
    if (await em.count(IpListEntry, { type, ipornet })) throw conflict();
    const now = Date.now();
    let entry!: IpListEntry;
    try {
      await em.transactional(async (tem) => {
        entry = tem.create(IpListEntry, {
          type,
          ipornet,
          mode: input.mode,
          protocols: input.protocols,
          description: input.description,
          created_at: now,
          updated_at: now,
        });
        await tem.flush();
        await bumpIpListsVersion(tem);
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw conflict();
      throw err;
    }
    this.invalidate();
    this.events.emit('add', 'ip_list_entry', ipListEntryName(type, ipornet), renderIpListEntry(entry), actor);
    return entry;
  }

  async update(type: IpListType, ipornet: string, input: IpListEntryInput, actor: Actor): Promise<void> {
    if (input.ipornet !== undefined && input.ipornet !== ipornet) {
      throw new InvalidError(`"ipornet" (${input.ipornet}) must be the entry's (${ipornet}): delete the entry and add a new one to change it`);
    }
    if (input.type !== undefined && input.type !== type) throw new InvalidError(`"type" (${input.type}) must match the list in the path (${type})`);
    checkIpListMode(type, input.mode);
    let entry!: IpListEntry;
    await this.orm.em.fork().transactional(async (tem) => {
      const found = await tem.findOne(IpListEntry, { type, ipornet });
      if (!found) throw new NotFoundError(`"${ipornet}" is not on IP list ${type}`);
      entry = found;
      tem.assign(entry, { mode: input.mode, protocols: input.protocols, description: input.description, updated_at: Date.now() });
      await tem.flush();
      await bumpIpListsVersion(tem);
    });
    this.invalidate();
    this.events.emit('update', 'ip_list_entry', ipListEntryName(type, ipornet), renderIpListEntry(entry), actor);
  }

  async delete(type: IpListType, ipornet: string, actor: Actor): Promise<void> {
    let data!: Record<string, unknown>;
    await this.orm.em.fork().transactional(async (tem) => {
      const entry = await tem.findOne(IpListEntry, { type, ipornet });
      if (!entry) throw new NotFoundError(`"${ipornet}" is not on IP list ${type}`);
      data = renderIpListEntry(entry);
      tem.remove(entry);
      await tem.flush();
      await bumpIpListsVersion(tem);
    });
    this.invalidate();
    this.events.emit('delete', 'ip_list_entry', ipListEntryName(type, ipornet), data, actor);
  }

  // ---- checks ------------------------------------------------------------

  /** Forgets the cached lists' freshness: the next check compares the version in the database. */
  invalidate(): void {
    this.generation++;
  }

  /**
   * Entries of list `type` whose network contains `ip` and whose protocol
   * mask covers `protocol` (any protocol when omitted), most specific first.
   * An unparsable address matches nothing.
   */
  async matches(type: IpListType, ip: string, protocol?: IpListProtocol): Promise<IpListMatch[]> {
    return matchesIn(await this.lists(), type, ip, protocol);
  }

  /** Whether the address is on the allow list (type 1) for the protocol. */
  async isAllowListed(ip: string, protocol?: IpListProtocol): Promise<boolean> {
    return (await this.matches(1, ip, protocol)).length > 0;
  }

  /** Whether the allow list lets the address connect: always when `common.allow_list_status` is off. */
  async isAllowed(ip: string, protocol?: IpListProtocol): Promise<boolean> {
    return !this.config.common.allow_list_status || this.isAllowListed(ip, protocol);
  }

  /** Defender list: the most specific entry containing the address denies it (mode 2): always banned. */
  async isBanned(ip: string, protocol?: IpListProtocol): Promise<boolean> {
    return (await this.matches(2, ip, protocol))[0]?.mode === 2;
  }

  /** Defender list: the most specific entry containing the address allows it (mode 1): never banned by the defender. */
  async isSafe(ip: string, protocol?: IpListProtocol): Promise<boolean> {
    return (await this.matches(2, ip, protocol))[0]?.mode === 1;
  }

  /** Rate limiter safe list (type 3): the address is exempt from rate limits. */
  async isRateLimitExempt(ip: string, protocol?: IpListProtocol): Promise<boolean> {
    return (await this.matches(3, ip, protocol)).length > 0;
  }

  /** Why a connection from `ip` over `protocol` is refused (allow list, defender deny entries), or null. */
  async connectionRefusal(ip: string, protocol: IpListProtocol): Promise<string | null> {
    return this.refusalIn(await this.lists(), ip, protocol);
  }

  /**
   * connectionRefusal() answered at once from the lists in memory while they
   * are fresh (what a check costs on every request), or undefined when they
   * must be read again first (then ask connectionRefusal()).
   */
  cachedConnectionRefusal(ip: string, protocol: IpListProtocol): string | null | undefined {
    const lists = this.freshLists();
    return lists ? this.refusalIn(lists, ip, protocol) : undefined;
  }

  private refusalIn(lists: Map<number, IpNetIndex<IpListMatch>>, ip: string, protocol: IpListProtocol): string | null {
    if (this.config.common.allow_list_status && matchesIn(lists, 1, ip, protocol).length === 0) return `access denied: ${ip} is not on the allow list`;
    if (matchesIn(lists, 2, ip, protocol)[0]?.mode === 2) return `access denied: ${ip} is banned`;
    return null;
  }

  /** The per-list indexes when they need no reading (see the class comment), else undefined. */
  private freshLists(): Map<number, IpNetIndex<IpListMatch>> | undefined {
    const s = this.snapshot;
    if (s && s.generation === this.generation && Date.now() - s.checkedAt < this.config.common.ip_lists_cache_ttl * 1000) return s.lists;
    return undefined;
  }

  /** The per-list indexes, refreshed when stale (see the class comment). */
  private lists(): Promise<Map<number, IpNetIndex<IpListMatch>>> | Map<number, IpNetIndex<IpListMatch>> {
    const fresh = this.freshLists();
    if (fresh) return fresh;
    this.refreshing ??= this.refresh()
      .catch((err) => {
        // database unreachable: keep enforcing the last lists loaded (retried at the next check); none loaded yet: fail closed
        if (!this.snapshot) throw err;
        this.logger.error({ err }, 'IP lists: reload failed, the lists loaded before stay in force');
        return this.snapshot.lists;
      })
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async refresh(): Promise<Map<number, IpNetIndex<IpListMatch>>> {
    const generation = this.generation;
    const em = this.orm.em.fork();
    // the version first: a write landing between the two reads only causes one more rebuild later
    const version = (await em.findOne(Setting, { key: IP_LISTS_VERSION_KEY }))?.value ?? '';
    const current = this.snapshot;
    if (current && current.version === version) {
      this.snapshot = { ...current, checkedAt: Date.now(), generation };
      return current.lists;
    }
    // plain rows: no entity hydration for lists of many thousands of entries
    const rows = (await em.getConnection().execute('select type, ipornet, mode, protocols from ip_lists')) as {
      type: number;
      ipornet: string;
      mode: number;
      protocols: number;
    }[];
    const lists = new Map<number, IpNetIndex<IpListMatch>>();
    for (const r of rows) {
      const n = parseIpNet(r.ipornet);
      if (!n) continue;
      const type = Number(r.type);
      let index = lists.get(type);
      if (!index) lists.set(type, (index = new IpNetIndex()));
      index.add(n, { type, ipornet: n.canonical, prefix: n.prefix, mode: Number(r.mode), protocols: Number(r.protocols) });
    }
    this.snapshot = { version, checkedAt: Date.now(), generation, lists };
    return lists;
  }
}

/** Entries of list `type` in `lists` whose network contains `ip`, for `protocol` (any when omitted), most specific first. */
function matchesIn(lists: Map<number, IpNetIndex<IpListMatch>>, type: IpListType, ip: string, protocol?: IpListProtocol): IpListMatch[] {
  const index = lists.get(type);
  if (!index?.size) return [];
  const bit = protocol ? IP_LIST_PROTOCOLS[protocol] : 0;
  return index.lookup(ip).filter((m) => !bit || m.protocols === 0 || (m.protocols & bit) !== 0);
}

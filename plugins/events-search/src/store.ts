import type { EntitySchema } from '@mikro-orm/core';
import type { EventPage, EventSearchFilters, EventSearchKind, PluginDatabase, StoredEvents } from '@ferry/core';
import { FsEventEntity, LogEventEntity, ProviderEventEntity, type FsEventRow, type LogEventRow, type ProviderEventRow } from './entities.js';
import { fsEvent, logEvent, providerEvent } from './rows.js';
import { idCeil, idFloor } from './ids.js';

export interface EventRows {
  fs: FsEventRow;
  provider: ProviderEventRow;
  log: LogEventRow;
}

const ENTITY: Record<EventSearchKind, EntitySchema<any>> = { fs: FsEventEntity, provider: ProviderEventEntity, log: LogEventEntity };
const TO_API: { [K in EventSearchKind]: (r: Record<string, unknown>) => StoredEvents[K] } = { fs: fsEvent, provider: providerEvent, log: logEvent };
const PROVIDER_COLUMNS_WITHOUT_DATA = ['id', 'action', 'username', 'ip', 'object_type', 'object_name', 'role', 'instance_id'];

type Where = Record<string, unknown>;
const inList = (values: readonly (string | number)[]) => (values.length === 1 ? values[0] : { $in: [...values] });

/** The WHERE of a search: the time range and the cursor are ranges of the primary key. */
function whereOf<K extends EventSearchKind>(kind: K, f: EventSearchFilters[K], page: EventPage): Where {
  const where: Where = {};
  const id: Record<string, string> = {};
  if (f.startTimestamp > 0) id.$gte = idFloor(f.startTimestamp);
  if (f.endTimestamp > 0) id.$lte = idCeil(f.endTimestamp);
  if (page.fromId) id[page.order === 'ASC' ? '$gt' : '$lt'] = page.fromId;
  if (Object.keys(id).length) where.id = id;
  if (f.username) where.username = f.username;
  if (f.ip) where.ip = f.ip;
  if (f.role) where.role = f.role;
  if (f.instanceIds.length) where.instance_id = inList(f.instanceIds);
  if (kind === 'fs') {
    const x = f as EventSearchFilters['fs'];
    if (x.actions.length) where.action = inList(x.actions);
    if (x.sshCmd) where.ssh_cmd = x.sshCmd;
    if (x.fsProvider >= 0) where.fs_provider = x.fsProvider;
    if (x.bucket) where.bucket = x.bucket;
    if (x.endpoint) where.endpoint = x.endpoint;
    if (x.protocols.length) where.protocol = inList(x.protocols);
    if (x.statuses.length) where.status = inList(x.statuses);
  } else if (kind === 'provider') {
    const x = f as EventSearchFilters['provider'];
    if (x.actions.length) where.action = inList(x.actions);
    if (x.objectName) where.object_name = x.objectName;
    if (x.objectTypes.length) where.object_type = inList(x.objectTypes);
  } else {
    const x = f as EventSearchFilters['log'];
    if (x.events.length) where.event = inList(x.events);
    if (x.protocols.length) where.protocol = inList(x.protocols);
  }
  return where;
}

/** Reads and writes the three event tables. */
export class EventStore {
  constructor(private readonly db: PluginDatabase) {}

  /**
   * Writes rows of one kind in one multi-row INSERT that skips the rows already
   * stored (`ON CONFLICT (id) DO NOTHING`, on SQLite and PostgreSQL alike): a
   * batch retried after the connection dropped between the commit and the
   * answer is stored once, not refused for ever on its primary key.
   */
  async insert<K extends EventSearchKind>(kind: K, rows: EventRows[K][]): Promise<void> {
    if (!rows.length) return;
    await this.db.em().createQueryBuilder(ENTITY[kind]).insert(rows).onConflict('id').ignore().execute('run');
  }

  async search<K extends EventSearchKind>(kind: K, filters: EventSearchFilters[K], page: EventPage): Promise<StoredEvents[K][]> {
    const omitData = kind === 'provider' && (filters as EventSearchFilters['provider']).omitObjectData;
    const qb = this.db
      .em()
      .createQueryBuilder(ENTITY[kind])
      .select(omitData ? PROVIDER_COLUMNS_WITHOUT_DATA : '*')
      .where(whereOf(kind, filters, page))
      .orderBy({ id: page.order === 'ASC' ? 'asc' : 'desc' })
      .limit(page.limit);
    const rows = await qb.execute<Record<string, unknown>[]>('all', false);
    return rows.map((r) => TO_API[kind](r));
  }

  /** Deletes the events older than `beforeNs`; returns how many per kind. */
  async deleteBefore(beforeNs: number): Promise<Record<EventSearchKind, number>> {
    const bound = idFloor(beforeNs);
    const out = { fs: 0, provider: 0, log: 0 };
    for (const kind of Object.keys(out) as EventSearchKind[]) {
      out[kind] = await this.db.em().nativeDelete(ENTITY[kind], { id: { $lt: bound } });
    }
    return out;
  }
}

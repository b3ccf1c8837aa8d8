import type { EntitySchema } from '@mikro-orm/core';
import type {
  EventAggregateKind,
  EventBuckets,
  EventCounts,
  EventPage,
  EventSearchFilters,
  EventSearchKind,
  FsEventCount,
  LogEventCount,
  PluginDatabase,
  StoredEvents,
} from '@ferry/core';
import { FsEventEntity, LogEventEntity, ProviderEventEntity, type FsEventRow, type LogEventRow, type ProviderEventRow } from './entities.js';
import { fsEvent, logEvent, providerEvent } from './rows.js';
import { idCeil, idFloor, idFloorOf } from './ids.js';

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

/** The conditions of the filters other than time: each a column and the values it may hold. */
function conditionsOf<K extends EventSearchKind>(kind: K, f: EventSearchFilters[K]): [string, readonly (string | number)[]][] {
  const out: [string, readonly (string | number)[]][] = [];
  const eq = (column: string, v: string | number | undefined) => {
    if (v !== undefined && v !== '') out.push([column, [v]]);
  };
  const oneOf = (column: string, values: readonly (string | number)[]) => {
    if (values.length) out.push([column, values]);
  };
  eq('username', f.username);
  eq('ip', f.ip);
  eq('role', f.role);
  oneOf('instance_id', f.instanceIds);
  if (kind === 'fs') {
    const x = f as EventSearchFilters['fs'];
    oneOf('action', x.actions);
    eq('ssh_cmd', x.sshCmd);
    if (x.fsProvider >= 0) eq('fs_provider', x.fsProvider);
    eq('bucket', x.bucket);
    eq('endpoint', x.endpoint);
    oneOf('protocol', x.protocols);
    oneOf('status', x.statuses);
  } else if (kind === 'provider') {
    const x = f as EventSearchFilters['provider'];
    oneOf('action', x.actions);
    eq('object_name', x.objectName);
    oneOf('object_type', x.objectTypes);
  } else {
    const x = f as EventSearchFilters['log'];
    oneOf('event', x.events);
    oneOf('protocol', x.protocols);
  }
  return out;
}

/** The WHERE of a search: the time range and the cursor are ranges of the primary key. */
function whereOf<K extends EventSearchKind>(kind: K, f: EventSearchFilters[K], page: EventPage): Where {
  const where: Where = {};
  const id: Record<string, string> = {};
  if (f.startTimestamp > 0) id.$gte = idFloor(f.startTimestamp);
  if (f.endTimestamp > 0) id.$lte = idCeil(f.endTimestamp);
  if (page.fromId) id[page.order === 'ASC' ? '$gt' : '$lt'] = page.fromId;
  if (Object.keys(id).length) where.id = id;
  for (const [column, values] of conditionsOf(kind, f)) where[column] = inList(values);
  return where;
}

/**
 * `(values (0, lo, hi), (1, lo, hi), ...)`: each bucket's index and its range
 * of ids (lo inclusive, hi exclusive). The ids are hex digits generated here,
 * so they are written in the SQL (no binding limit on 1000 buckets).
 */
function bucketValues(b: EventBuckets): string {
  const start = BigInt(Math.max(0, Math.round(b.startTimestamp)));
  const step = BigInt(Math.round(b.interval));
  const rows: string[] = [];
  for (let i = 0; i < b.count; i++) {
    const lo = idFloorOf(start + BigInt(i) * step);
    const hi = idFloorOf(start + BigInt(i + 1) * step);
    if (!/^[0-9a-f]{32}$/.test(lo) || !/^[0-9a-f]{32}$/.test(hi)) throw new Error(`bad bucket bound ${lo} ${hi}`);
    rows.push(`(${i}, '${lo}', '${hi}')`);
  }
  return `(values ${rows.join(', ')})`;
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

  /**
   * Events counted per bucket and group (in bucket, then group order) in one SQL query: the buckets are a
   * VALUES list of id ranges (the timestamp starts the id), each counted by
   * a range scan of the primary key, so no event leaves the database. On
   * PostgreSQL each bucket is a LATERAL subquery: joined by the ranges
   * instead, its planner scans the whole table once per bucket list and
   * tests every pair (3 to 5 times slower on a day of 1,000,000 events);
   * SQLite, which has no LATERAL, loops over the VALUES and seeks the key
   * range of each.
   */
  async aggregate<K extends EventAggregateKind>(kind: K, filters: EventSearchFilters[K], buckets: EventBuckets): Promise<EventCounts[K][]> {
    const knex = this.db.em().getKnex();
    const table = kind === 'fs' ? 'events_fs' : 'events_log';
    const groups = kind === 'fs' ? ['e.action', 'e.status'] : ['e.event'];
    const counts = [knex.raw('count(*) as count'), ...(kind === 'fs' ? [knex.raw('sum(e.file_size) as file_size')] : [])];
    const inBucket = 'e.id >= b.column2 and e.id < b.column3';
    let qb;
    if (this.db.dialect === 'postgresql') {
      const inner = knex
        .select(...groups, ...counts)
        .from(`${table} as e`)
        .whereRaw(inBucket)
        .groupBy(...groups);
      for (const [column, values] of conditionsOf(kind, filters)) inner.whereIn(`e.${column}`, [...values]);
      qb = knex
        .select(knex.raw('b.column1 as bucket'), 'x.*')
        .from(knex.raw(`${bucketValues(buckets)} as b`))
        .crossJoin(knex.raw('lateral (?) as x', [inner]))
        .orderBy(['b.column1', ...groups.map((g) => g.replace('e.', 'x.'))]);
    } else {
      qb = knex
        .select(knex.raw('b.column1 as bucket'), ...groups, ...counts)
        .from(knex.raw(`${bucketValues(buckets)} as b`))
        .join(`${table} as e`, function on() {
          this.on('e.id', '>=', 'b.column2').andOn('e.id', '<', 'b.column3');
        })
        .groupBy('b.column1', ...groups)
        .orderBy(['b.column1', ...groups]);
      for (const [column, values] of conditionsOf(kind, filters)) qb.whereIn(`e.${column}`, [...values]);
    }
    const rows = (await qb) as Record<string, unknown>[];
    return rows.map((r) =>
      kind === 'fs'
        ? ({ bucket: Number(r.bucket), action: r.action, status: Number(r.status), count: Number(r.count), file_size: Number(r.file_size) } as FsEventCount)
        : ({ bucket: Number(r.bucket), event: Number(r.event), count: Number(r.count) } as LogEventCount),
    ) as EventCounts[K][];
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

import Joi from 'joi';
import type { EventProtocol, FsEventAction, FsEventStatus, LogEventType, ProviderEventAction, ProviderObjectType } from './event-types.js';
import { PROTOCOLS } from '../sdk/protocols.js';
import type { CommonEventFilters, EventAggregateKind, EventBuckets, EventPage, EventSearchFilters, EventSearchKind } from '../sdk/event-search.js';

/** Values of the spec's enumerations, as the comma-separated filters accept them. */
export const FS_EVENT_ACTIONS: readonly FsEventAction[] = [
  'download',
  'upload',
  'first-upload',
  'first-download',
  'delete',
  'rename',
  'mkdir',
  'rmdir',
  'ssh_cmd',
];
export const PROVIDER_EVENT_ACTIONS: readonly ProviderEventAction[] = ['add', 'update', 'delete'];
export const PROVIDER_OBJECT_TYPES: readonly ProviderObjectType[] = [
  'user',
  'folder',
  'group',
  'admin',
  'api_key',
  'share',
  'event_action',
  'event_rule',
  'role',
  'ip_list_entry',
];
/** Every protocol an event may name (sdk/protocols.ts). */
export const EVENT_PROTOCOLS: readonly EventProtocol[] = PROTOCOLS;
export const FS_EVENT_STATUSES: readonly FsEventStatus[] = [1, 2, 3];
export const LOG_EVENT_TYPES: readonly LogEventType[] = [1, 2, 3, 4, 5];

/**
 * A comma-separated list ("upload,download"): parsed to an array of known
 * values; empty items are skipped, an unknown one is refused naming it.
 */
function commaList<T extends string | number>(allowed: readonly T[] | null, o: { numeric?: boolean; itemMax?: number } = {}) {
  return Joi.string()
    .allow('')
    .max(8192)
    .custom((v: string, h) => {
      const out: T[] = [];
      for (const raw of v.split(',')) {
        const item = raw.trim();
        if (!item) continue;
        if (o.itemMax && item.length > o.itemMax) return h.message({ custom: `{{#label}} has an item longer than ${o.itemMax} characters` });
        const value = (o.numeric ? Number(item) : item) as T;
        if (allowed && !allowed.includes(value)) {
          return h.message({ custom: `{{#label}} has an unknown value "${item.slice(0, 64)}": allowed values are ${allowed.join(', ')}` });
        }
        if (!out.includes(value)) out.push(value);
      }
      return out;
    }, 'comma-separated list')
    .default([]);
}

/** Unix nanoseconds (beyond 2^53: accepted as the nearest number, like the timestamps the API returns). */
const nanos = Joi.number().integer().min(0).unsafe().default(0);
const text = Joi.string().allow('').max(1024).default('');

/** Filters common to the searches and the aggregates. */
const filters = {
  username: text,
  ip: Joi.string().allow('').max(64).default(''),
  instance_ids: commaList<string>(null, { itemMax: 255 }),
  role: text,
};

const common = {
  start_timestamp: nanos,
  end_timestamp: nanos,
  ...filters,
  from_id: Joi.string().allow('').max(64).default(''),
  csv_export: Joi.boolean().truthy('1').falsy('0').default(false),
  limit: Joi.number().integer().min(1).max(1000).default(100),
  order: Joi.string().valid('ASC', 'DESC').default('DESC'),
};

const fsFilters = {
  actions: commaList(FS_EVENT_ACTIONS),
  ssh_cmd: text,
  fs_provider: Joi.number().integer().min(0).max(65535),
  bucket: text,
  endpoint: text,
  protocols: commaList(EVENT_PROTOCOLS),
  statuses: commaList(FS_EVENT_STATUSES, { numeric: true }),
};

const logFilters = {
  events: commaList(LOG_EVENT_TYPES, { numeric: true }),
  protocols: commaList(EVENT_PROTOCOLS),
};

/** Query of GET /events/fs. */
export const fsEventsQuery = Joi.object({ ...common, ...fsFilters });

/** Query of GET /events/provider. */
export const providerEventsQuery = Joi.object({
  ...common,
  actions: commaList(PROVIDER_EVENT_ACTIONS),
  object_name: text,
  object_types: commaList(PROVIDER_OBJECT_TYPES),
  omit_object_data: Joi.boolean().truthy('1').falsy('0').default(false),
});

/** Query of GET /events/logs. */
export const logEventsQuery = Joi.object({ ...common, ...logFilters });

export const eventsQuery: Record<EventSearchKind, Joi.ObjectSchema> = { fs: fsEventsQuery, provider: providerEventsQuery, log: logEventsQuery };

/** Most buckets one aggregate may ask for. */
export const MAX_EVENT_BUCKETS = 1000;
/** Shortest and longest bucket, seconds (a minute, 31 days). */
export const MIN_BUCKET_SECONDS = 60;
export const MAX_BUCKET_SECONDS = 31 * 86_400;

/** The time buckets of an aggregate: `buckets` consecutive buckets of `interval` seconds from `start_timestamp`. */
const bucketKeys = {
  start_timestamp: Joi.number().integer().min(1).unsafe().required().description('Unix nanoseconds: start of the first bucket'),
  interval: Joi.number().integer().min(MIN_BUCKET_SECONDS).max(MAX_BUCKET_SECONDS).required().description('length of a bucket, seconds'),
  buckets: Joi.number().integer().min(1).max(MAX_EVENT_BUCKETS).required().description('how many buckets'),
};

/** Query of GET /events/fs/aggregate and /events/logs/aggregate: the buckets and the filters of the search. */
export const eventsAggregateQuery: Record<EventAggregateKind, Joi.ObjectSchema> = {
  fs: Joi.object({ ...bucketKeys, ...filters, ...fsFilters }),
  log: Joi.object({ ...bucketKeys, ...filters, ...logFilters }),
};

/** A validated query of one of the schemas above. */
type Q = Record<string, unknown>;

/** What the validated query asks for: filters, the page and whether to export CSV. */
export interface EventSearchRequest<K extends EventSearchKind> {
  filters: EventSearchFilters[K];
  page: EventPage;
  csv: boolean;
}

/**
 * Filters and page of a validated event search query. `callerRole` is the
 * calling admin's role: when set it replaces the `role` parameter, so a role
 * admin only ever sees the events of their role.
 */
export function eventSearchRequest<K extends EventSearchKind>(kind: K, q: Q, callerRole: string): EventSearchRequest<K> {
  const c: CommonEventFilters = {
    startTimestamp: q.start_timestamp as number,
    endTimestamp: q.end_timestamp as number,
    username: q.username as string,
    ip: q.ip as string,
    instanceIds: q.instance_ids as string[],
    role: callerRole || (q.role as string),
  };
  const byKind = {
    fs: () => ({
      ...c,
      actions: q.actions as FsEventAction[],
      sshCmd: q.ssh_cmd as string,
      fsProvider: (q.fs_provider as number | undefined) ?? -1,
      bucket: q.bucket as string,
      endpoint: q.endpoint as string,
      protocols: q.protocols as EventProtocol[],
      statuses: q.statuses as FsEventStatus[],
    }),
    provider: () => ({
      ...c,
      actions: q.actions as ProviderEventAction[],
      objectName: q.object_name as string,
      objectTypes: q.object_types as ProviderObjectType[],
      omitObjectData: q.omit_object_data as boolean,
    }),
    log: () => ({ ...c, events: q.events as LogEventType[], protocols: q.protocols as EventProtocol[] }),
  };
  return {
    filters: byKind[kind]() as EventSearchFilters[K],
    page: { fromId: q.from_id as string, limit: q.limit as number, order: q.order as 'ASC' | 'DESC' },
    csv: q.csv_export as boolean,
  };
}

/**
 * Filters and buckets of a validated aggregate query (eventsAggregateQuery);
 * `callerRole` replaces the `role` parameter as in eventSearchRequest.
 */
export function eventAggregateRequest<K extends EventAggregateKind>(
  kind: K,
  q: Q,
  callerRole: string,
): { filters: EventSearchFilters[K]; buckets: EventBuckets } {
  const intervalNs = (q.interval as number) * 1e9;
  const count = q.buckets as number;
  const start = q.start_timestamp as number;
  // the search's own time range is that of the buckets, so the store may use it as is
  const { filters } = eventSearchRequest(kind, { ...q, start_timestamp: start, end_timestamp: start + count * intervalNs - 1 }, callerRole);
  return { filters, buckets: { startTimestamp: start, interval: intervalNs, count } };
}

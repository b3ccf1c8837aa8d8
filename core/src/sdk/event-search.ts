import type {
  EventProtocol,
  FsEvent,
  FsEventAction,
  FsEventStatus,
  LogEvent,
  LogEventType,
  ProviderEvent,
  ProviderEventAction,
  ProviderObjectType,
} from '../events/event-types.js';

/** The three kinds of recorded events (GET /events/fs, /events/provider, /events/logs). */
export type EventSearchKind = 'fs' | 'provider' | 'log';

/** Filters every event search takes. Empty strings and empty lists mean "no filter". */
export interface CommonEventFilters {
  /** Unix nanoseconds, inclusive; 0: no bound. */
  startTimestamp: number;
  endTimestamp: number;
  username: string;
  /** Exact match. */
  ip: string;
  instanceIds: string[];
  /**
   * Only events of this role. The core sets it to the calling admin's role
   * when the admin has one (the `role` query parameter is then ignored).
   */
  role: string;
}

export interface FsEventFilters extends CommonEventFilters {
  actions: FsEventAction[];
  sshCmd: string;
  /** -1: no filter. */
  fsProvider: number;
  bucket: string;
  endpoint: string;
  protocols: EventProtocol[];
  statuses: FsEventStatus[];
}

export interface ProviderEventFilters extends CommonEventFilters {
  actions: ProviderEventAction[];
  objectName: string;
  objectTypes: ProviderObjectType[];
  /** Leave `object_data` out of the results. */
  omitObjectData: boolean;
}

export interface LogEventFilters extends CommonEventFilters {
  events: LogEventType[];
  protocols: EventProtocol[];
}

export interface EventSearchFilters {
  fs: FsEventFilters;
  provider: ProviderEventFilters;
  log: LogEventFilters;
}

/** A recorded filesystem event as the API returns it (FsEvent of the spec). */
export type StoredFsEvent = Omit<FsEvent, 'groups' | 'object_type'> & { id: string };
/** A recorded provider event: `object_data` is the JSON of the object (secrets redacted), base64 encoded. */
export type StoredProviderEvent = Omit<ProviderEvent, 'object_data'> & { id: string; object_data?: string };
export type StoredLogEvent = LogEvent & { id: string };

export interface StoredEvents {
  fs: StoredFsEvent;
  provider: StoredProviderEvent;
  log: StoredLogEvent;
}

/** One page of a search: events strictly after `fromId` in the given order. */
export interface EventPage {
  /** Cursor: an `id` of a previous page ('' for the first page). */
  fromId: string;
  /** 1..1000. */
  limit: number;
  /** By timestamp (ids sort like their timestamps). */
  order: 'ASC' | 'DESC';
}

/** The kinds of events that can be counted per time bucket (GET /events/fs/aggregate, /events/logs/aggregate). */
export type EventAggregateKind = 'fs' | 'log';

/**
 * Consecutive time buckets: bucket `i` holds the events from
 * `startTimestamp + i * interval` (inclusive) to the start of bucket `i + 1`
 * (exclusive), all in Unix nanoseconds.
 */
export interface EventBuckets {
  startTimestamp: number;
  /** Length of a bucket, nanoseconds. */
  interval: number;
  /** How many buckets (1..MAX_EVENT_BUCKETS). */
  count: number;
}

/** Filesystem events of one bucket, action and status: how many, and the sum of their `file_size`. */
export interface FsEventCount {
  bucket: number;
  action: FsEventAction;
  status: FsEventStatus;
  count: number;
  file_size: number;
}

/** Log events of one bucket and event type. */
export interface LogEventCount {
  bucket: number;
  event: LogEventType;
  count: number;
}

export interface EventCounts {
  fs: FsEventCount;
  log: LogEventCount;
}

/** Counters of the recorder behind an EventSearch. */
export interface EventRecorderStats {
  /** Events written to the store since start. */
  recorded: number;
  /** Events waiting to be written. */
  queued: number;
  /** Events refused because the queue was full (each drop is also logged). */
  dropped: number;
}

/**
 * The persistent store of filesystem, provider and log events, registered by
 * the event-search plugin (PluginContext.registerEventSearch). The core serves
 * GET /api/v2/events/* over it and event reports read it.
 */
export interface EventSearch {
  /** Whether `id` has the shape of this store's ids (the `from_id` cursor is refused otherwise). */
  isValidId(id: string): boolean;
  /** One page of matching events in the page's order. */
  search<K extends EventSearchKind>(kind: K, filters: EventSearchFilters[K], page: EventPage): Promise<StoredEvents[K][]>;
  stats(): EventRecorderStats;
  /**
   * The events matching `filters` counted per bucket and group (action and
   * status of filesystem events, event type of log events), grouped by the
   * store (in SQL), never read one by one. Groups without events are left
   * out. Optional: without it the aggregate routes answer 400.
   */
  aggregate?<K extends EventAggregateKind>(kind: K, filters: EventSearchFilters[K], buckets: EventBuckets): Promise<EventCounts[K][]>;
}

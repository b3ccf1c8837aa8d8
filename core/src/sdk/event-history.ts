import type { FsEvent, LogEvent, ProviderEvent } from '../events/event-types.js';
import type { StoredEvents } from './event-search.js';

// Recorded events as reports read them (PluginHost.eventHistory; core's event-manager/event-history.ts).

export type RecordedKind = 'fs' | 'provider' | 'log';

export interface RecordedEvents {
  fs: FsEvent[];
  provider: ProviderEvent[];
  log: LogEvent[];
}

/** An event of the history: as published (in-memory recorder) or as stored (event search, with its id). */
export type HistoryEvent<K extends RecordedKind> = RecordedEvents[K][number] | StoredEvents[K];

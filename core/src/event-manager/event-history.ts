import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { EventRecorder, RecordedKind } from './recorder.js';
import type { EventSearchRegistry } from '../events/event-search.registry.js';
import type { EventSearchFilters } from '../sdk/event-search.js';
import type { EventHistory } from '../sdk/host.js';
import type { HistoryEvent } from '../sdk/event-history.js';

export type { HistoryEvent } from '../sdk/event-history.js';

const PAGE = 1000;

/** Filters of an event search that select a time range only. */
function rangeFilters<K extends RecordedKind>(kind: K, startNs: number, endNs: number): EventSearchFilters[K] {
  const common = { startTimestamp: startNs, endTimestamp: endNs, username: '', ip: '', instanceIds: [], role: '' };
  const byKind: EventSearchFilters = {
    fs: { ...common, actions: [], sshCmd: '', fsProvider: -1, bucket: '', endpoint: '', protocols: [], statuses: [] },
    provider: { ...common, actions: [], objectName: '', objectTypes: [], omitObjectData: true },
    log: { ...common, events: [], protocols: [] },
  };
  return byKind[kind];
}

/**
 * Events for event reports (PluginHost.eventHistory): from the event-search
 * store when a plugin registered one (every node's events, kept across
 * restarts), otherwise from this node's in-memory recorder.
 */
@injectable()
export class EventHistoryService implements EventHistory {
  constructor(
    @inject(TOKENS.EventRecorder) private readonly recorder: EventRecorder,
    @inject(TOKENS.EventSearch) private readonly searches: EventSearchRegistry,
  ) {}

  get source(): 'store' | 'memory' {
    return this.searches.configured ? 'store' : 'memory';
  }

  async *events<K extends RecordedKind>(kind: K, startNs: number, endNs: number): AsyncGenerator<HistoryEvent<K>> {
    const store = this.searches.find();
    if (!store) {
      for (const e of this.recorder.query(kind, startNs, endNs)) yield e as HistoryEvent<K>;
      return;
    }
    // a zero bound means "no bound" to the store: an empty range starting at 0 still needs one
    const filters = rangeFilters(kind, Math.max(startNs, 1), Math.max(endNs, 1));
    let fromId = '';
    for (;;) {
      const page = await store.search(kind, filters, { fromId, limit: PAGE, order: 'ASC' });
      for (const e of page) yield e;
      if (page.length < PAGE) return;
      fromId = page[page.length - 1]!.id;
    }
  }
}

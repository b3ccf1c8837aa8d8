import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import { InvalidError } from '../errors.js';
import type { EventSearchRegistry } from './event-search.registry.js';
import type {
  EventAggregateKind,
  EventBuckets,
  EventCounts,
  EventPage,
  EventSearch,
  EventSearchFilters,
  EventSearchKind,
  StoredEvents,
} from '../sdk/event-search.js';

/** Events read per query while exporting (CSV): the export is streamed page by page. */
export const EXPORT_PAGE_SIZE = 1000;

/** GET /events/*: one page, or every matching event page by page (CSV export), from the registered store. */
@injectable()
export class EventSearchService {
  constructor(@inject(TOKENS.EventSearch) private readonly registry: EventSearchRegistry) {}

  /** The store, and the page's cursor checked (InvalidError when there is no store or the cursor is not one of its ids). */
  private store(page: EventPage): EventSearch {
    const store = this.registry.get();
    if (page.fromId && !store.isValidId(page.fromId)) throw new InvalidError(`"from_id" is not an event id: "${page.fromId.slice(0, 64)}"`);
    return store;
  }

  async search<K extends EventSearchKind>(kind: K, filters: EventSearchFilters[K], page: EventPage): Promise<StoredEvents[K][]> {
    return this.store(page).search(kind, filters, page);
  }

  /**
   * Every event matching `filters` after `page.fromId`, in `page.order`
   * (`page.limit` is not applied), queried EXPORT_PAGE_SIZE at a time with the
   * id cursor: memory stays bounded whatever the result size. Checks the
   * store and cursor before the first value, so errors come before any output.
   */
  async exportAll<K extends EventSearchKind>(kind: K, filters: EventSearchFilters[K], page: EventPage): Promise<AsyncGenerator<StoredEvents[K][]>> {
    const store = this.store(page);
    const first = await store.search(kind, filters, { ...page, limit: EXPORT_PAGE_SIZE });
    return (async function* pages() {
      let current = first;
      for (;;) {
        if (current.length) yield current;
        if (current.length < EXPORT_PAGE_SIZE) return;
        current = await store.search(kind, filters, { ...page, fromId: current[current.length - 1]!.id, limit: EXPORT_PAGE_SIZE });
      }
    })();
  }

  /** Events counted per bucket by the store (InvalidError when there is no store or it cannot aggregate). */
  async aggregate<K extends EventAggregateKind>(kind: K, filters: EventSearchFilters[K], buckets: EventBuckets): Promise<EventCounts[K][]> {
    const store = this.registry.get();
    if (!store.aggregate) throw new InvalidError('the event search plugin in use cannot count events per time bucket');
    return store.aggregate(kind, filters, buckets);
  }
}

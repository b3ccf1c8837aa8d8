import { InvalidError } from '../errors.js';
import type { EventSearch } from '../sdk/event-search.js';

/** The answer of the event routes while no plugin registered an event store. */
export const EVENT_SEARCH_NOT_CONFIGURED =
  'event search is not configured: enable the @ferry/events-search plugin (plugins in the configuration) to record and search events';

/**
 * Holds the EventSearch a plugin registered (PluginContext.registerEventSearch):
 * at most one per app.
 */
export class EventSearchRegistry {
  private current?: { plugin: string; search: EventSearch };

  register(plugin: string, search: EventSearch): void {
    if (this.current) throw new Error(`an event search is already registered by plugin ${this.current.plugin}`);
    this.current = { plugin, search };
  }

  get configured(): boolean {
    return this.current !== undefined;
  }

  /** The registered store, or undefined. */
  find(): EventSearch | undefined {
    return this.current?.search;
  }

  /** The registered store; throws InvalidError (400) naming the missing plugin when there is none. */
  get(): EventSearch {
    if (!this.current) throw new InvalidError(EVENT_SEARCH_NOT_CONFIGURED);
    return this.current.search;
  }
}

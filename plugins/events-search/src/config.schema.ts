import Joi from 'joi';

/** Plugin config (`plugins[].config` of @ferry/events-search). */
export interface EventsSearchConfig {
  /** Days events are kept; older ones are deleted by the periodic cleanup. 0 keeps them forever. */
  retention_days: number;
  /** Minutes between two cleanups of expired events (the first runs at start). */
  cleanup_interval: number;
  /** Events waiting to be written at most; beyond it new events are dropped, counted and logged. */
  queue_size: number;
  /** Events written per INSERT. */
  batch_size: number;
  /** Milliseconds an event may wait for its batch to fill before it is written anyway. */
  flush_interval: number;
}

export const configSchema = Joi.object<EventsSearchConfig>({
  retention_days: Joi.number().integer().min(0).max(36500).default(30),
  cleanup_interval: Joi.number().integer().min(1).max(10080).default(60),
  queue_size: Joi.number().integer().min(100).max(10_000_000).default(100_000),
  batch_size: Joi.number().integer().min(1).max(1000).default(500),
  flush_interval: Joi.number().integer().min(10).max(60_000).default(1000),
});

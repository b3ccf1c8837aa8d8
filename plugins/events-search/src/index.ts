import { definePlugin, packageInfo, type EventSearch } from '@ferry/core';
import { configSchema, type EventsSearchConfig } from './config.schema.js';
import { entities } from './entities.js';
import { migrations } from './migrations.js';
import { EventIds, isEventId } from './ids.js';
import { fsRow, logRow, providerRow } from './rows.js';
import { EventStore } from './store.js';
import { EventWriter } from './writer.js';
import { Retention } from './retention.js';

export type { EventsSearchConfig } from './config.schema.js';
export { isEventId, idTimestamp } from './ids.js';

const pkg = packageInfo(import.meta.url);

/**
 * Event search: records every filesystem, provider and log event published
 * on the core's event bus in the database (tables events_fs,
 * events_provider, events_log), in batches off the request path, deletes
 * them after `retention_days`, and gives the core the EventSearch behind
 * GET /api/v2/events/fs|provider|logs and event reports.
 */
export default definePlugin<EventsSearchConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema,
  async register(ctx, config) {
    const db = await ctx.registerEntities({ entities, migrations });
    const store = new EventStore(db);
    const writer = new EventWriter(store, { queueSize: config.queue_size, batchSize: config.batch_size, flushInterval: config.flush_interval }, ctx.logger);
    const search: EventSearch = {
      isValidId: isEventId,
      search: (kind, filters, page) => store.search(kind, filters, page),
      stats: () => writer.stats(),
      aggregate: (kind, filters, buckets) => store.aggregate(kind, filters, buckets),
    };
    ctx.registerEventSearch(search);
    const ids = new EventIds();
    const unsubscribe = [
      ctx.events.on('fs', (e) => writer.add({ kind: 'fs', row: fsRow(ids, e) })),
      ctx.events.on('provider', (e) => writer.add({ kind: 'provider', row: providerRow(ids, e) })),
      ctx.events.on('log', (e) => writer.add({ kind: 'log', row: logRow(ids, e) })),
    ];
    const retention = new Retention(store, config, ctx.logger);
    retention.start();
    ctx.onStop(async () => {
      for (const u of unsubscribe) u();
      await retention.stop();
      await writer.close();
    });
  },
});

import { Readable } from 'node:stream';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { EventSearchService } from '../../events/event-search.service.js';
import { eventAggregateRequest, eventSearchRequest, eventsAggregateQuery, eventsQuery } from '../../events/event-search.input.js';
import type { EventAggregateKind, EventSearchKind, StoredEvents } from '../../sdk/event-search.js';

/** CSV columns of each kind: the fields of FsEvent, ProviderEvent and LogEvent. */
const CSV_COLUMNS: Record<EventSearchKind, string[]> = {
  fs: [
    'id',
    'timestamp',
    'action',
    'username',
    'fs_path',
    'fs_target_path',
    'virtual_path',
    'virtual_target_path',
    'ssh_cmd',
    'file_size',
    'elapsed',
    'status',
    'protocol',
    'ip',
    'session_id',
    'fs_provider',
    'bucket',
    'endpoint',
    'open_flags',
    'role',
    'instance_id',
  ],
  provider: ['id', 'timestamp', 'action', 'username', 'ip', 'object_type', 'object_name', 'object_data', 'role', 'instance_id'],
  log: ['id', 'timestamp', 'event', 'protocol', 'username', 'ip', 'message', 'role', 'instance_id'],
};

const FILE_NAMES: Record<EventSearchKind, string> = { fs: 'fs-events.csv', provider: 'provider-events.csv', log: 'log-events.csv' };

/** RFC 4180 cell; a text starting with = + - @ (a formula to spreadsheets) gets a leading '. */
export function csvCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvLines<K extends EventSearchKind>(kind: K, pages: AsyncGenerator<StoredEvents[K][]>, omit: Set<string>): Readable {
  const columns = CSV_COLUMNS[kind].filter((c) => !omit.has(c));
  return Readable.from(
    (async function* lines() {
      yield columns.join(',') + '\r\n';
      for await (const page of pages) {
        let chunk = '';
        for (const e of page) chunk += columns.map((c) => csvCell((e as Record<string, unknown>)[c])).join(',') + '\r\n';
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
}

/**
 * GET /events/fs, /events/provider, /events/logs (view_events): the events the
 * event-search plugin recorded, filtered, paged by the `from_id` cursor, as
 * JSON or streamed CSV. 400 saying so when no plugin provides event search.
 */
export function eventRoutes(c: DependencyContainer): ServerRoute[] {
  const events = c.resolve(EventSearchService);
  const route = <K extends EventSearchKind>(kind: K, path: string): ServerRoute => ({
    method: 'GET',
    path: `/api/v2/events/${path}`,
    options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'view_events' } }, validate: { query: eventsQuery[kind] } },
    handler: async (request: Request, h: ResponseToolkit) => {
      const q = eventSearchRequest(kind, request.query as Record<string, unknown>, adminOf(request).admin.role);
      if (!q.csv) return events.search(kind, q.filters, q.page);
      const omit = new Set(kind === 'provider' && (q.filters as { omitObjectData?: boolean }).omitObjectData ? ['object_data'] : []);
      const pages = await events.exportAll(kind, q.filters, q.page);
      return h
        .response(csvLines(kind, pages, omit))
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="${FILE_NAMES[kind]}"`);
    },
  });
  // an addition to the API: counts per time bucket, grouped by the store (the dashboard's charts)
  const aggregate = <K extends EventAggregateKind>(kind: K, path: string, notes: string): ServerRoute => ({
    method: 'GET',
    path: `/api/v2/events/${path}/aggregate`,
    options: {
      auth: ADMIN_AUTH,
      description: `${kind === 'fs' ? 'Filesystem' : 'Log'} events counted per time bucket (an addition to v2.7)`,
      notes,
      plugins: { ferry: { permission: 'view_events' } },
      validate: { query: eventsAggregateQuery[kind] },
    },
    handler: async (request: Request) => {
      const q = eventAggregateRequest(kind, request.query as Record<string, unknown>, adminOf(request).admin.role);
      return events.aggregate(kind, q.filters, q.buckets);
    },
  });
  return [
    route('fs', 'fs'),
    route('provider', 'provider'),
    route('log', 'logs'),
    aggregate(
      'fs',
      'fs',
      'The filesystem events matching the filters of GET /events/fs, counted in `buckets` consecutive buckets of `interval` seconds from `start_timestamp`: one item per bucket (its index from 0), action and status that has events, with their count and the sum of their file_size. A role admin counts only the events of their role.',
    ),
    aggregate(
      'log',
      'logs',
      'The log events matching the filters of GET /events/logs, counted in `buckets` consecutive buckets of `interval` seconds from `start_timestamp`: one item per bucket (its index from 0) and event type that has events, with their count. Failed logins are events 1 and 2. A role admin counts only the events of their role.',
    ),
  ];
}

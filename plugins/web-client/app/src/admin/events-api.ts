/** The event search of the admin API (GET /api/v2/events/fs and /events/provider, view_events). */
import type { operations } from '../../generated/api';
import { api, routeUrl } from '../api';
import { failure } from './api-result';

export type FsEvent = operations['get_api_v2_events_fs']['responses'][200]['content']['application/json'][number];
export type ProviderEvent = operations['get_api_v2_events_provider']['responses'][200]['content']['application/json'][number];
export type FsQuery = NonNullable<operations['get_api_v2_events_fs']['parameters']['query']>;
export type ProviderQuery = NonNullable<operations['get_api_v2_events_provider']['parameters']['query']>;

/** The values the filters offer (the API's enumerations). */
export const FS_ACTIONS = ['upload', 'download', 'first-upload', 'first-download', 'delete', 'rename', 'mkdir', 'rmdir', 'ssh_cmd'] as const;
export const FS_PROTOCOLS = ['HTTP', 'HTTPShare', 'SFTP', 'SCP', 'SSH', 'FTP', 'DAV', 'DataRetention', 'EventAction', 'OIDC'] as const;
export const FS_STATUSES = [1, 2, 3] as const;
export const PROVIDER_ACTIONS = ['add', 'update', 'delete'] as const;
export const PROVIDER_OBJECTS = ['user', 'folder', 'group', 'admin', 'api_key', 'share', 'event_action', 'event_rule', 'role', 'ip_list_entry'] as const;

type Found<E> = { events?: E[]; status: number; message?: string };

export async function searchFsEvents(query: FsQuery): Promise<Found<FsEvent>> {
  const { data, error, response } = await api.GET('/api/v2/events/fs', { params: { query } });
  return data ? { events: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

export async function searchProviderEvents(query: ProviderQuery): Promise<Found<ProviderEvent>> {
  const { data, error, response } = await api.GET('/api/v2/events/provider', { params: { query } });
  return data ? { events: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

/** The URL of the CSV export of a search (every page of it, streamed by the server; the session cookie authenticates it). */
export function csvExportUrl(kind: 'fs' | 'provider', query: FsQuery | ProviderQuery): string {
  const q = { ...query, csv_export: true, from_id: undefined, limit: undefined };
  return kind === 'fs' ? routeUrl('/api/v2/events/fs', 'get', q) : routeUrl('/api/v2/events/provider', 'get', q as ProviderQuery);
}

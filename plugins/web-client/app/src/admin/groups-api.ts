/** The groups of the admin API the console reads and writes (GET/POST/PUT/DELETE /api/v2/groups, manage_groups). */
import type { operations } from '../../generated/api';
import { api } from '../api';
import { failure } from './api-result';
import type { GroupInput, GroupRow, GroupSettings } from './account-types';

export type { GroupInput, GroupRow, GroupSettings };
type Query = NonNullable<operations['get_api_v2_groups']['parameters']['query']>;

export async function listGroups(query: Query): Promise<{ groups?: GroupRow[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/groups', { params: { query } });
  return data ? { groups: data } : { message: failure(response.status, error) };
}

export async function getGroup(name: string): Promise<{ group?: GroupRow; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/groups/{name}', { params: { path: { name } } });
  return data ? { group: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

export async function createGroup(group: GroupInput): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/groups', { body: group });
  return response.ok ? null : failure(response.status, error);
}

/** Puts the whole group back (PUT replaces the object). Null when done, else the message. */
export async function updateGroup(name: string, group: GroupInput): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/groups/{name}', { params: { path: { name } }, body: group });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteGroup(name: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/groups/{name}', { params: { path: { name } } });
  return response.ok ? null : failure(response.status, error);
}

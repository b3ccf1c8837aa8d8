/** The admins of the admin API the console reads and writes (GET/POST/PUT/DELETE /api/v2/admins: the "*" permission). */
import type { operations } from '../../generated/api';
import { api } from '../api';
import { failure } from './api-result';

export type AdminRow = operations['get_api_v2_admins_username']['responses'][200]['content']['application/json'];
export type AdminInput = NonNullable<operations['post_api_v2_admins']['requestBody']>['content']['application/json'];
/** An admin permission as the API takes it ('*' included). */
export type AdminPerm = AdminInput['permissions'][number];
type Query = NonNullable<operations['get_api_v2_admins']['parameters']['query']>;

export async function listAdmins(query: Query): Promise<{ rows?: AdminRow[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/admins', { params: { query } });
  return data ? { rows: data } : { message: failure(response.status, error) };
}

export async function getAdmin(username: string): Promise<{ row?: AdminRow; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/admins/{username}', { params: { path: { username } } });
  return data ? { row: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

export async function createAdmin(admin: AdminInput): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/admins', { body: admin });
  return response.ok ? null : failure(response.status, error);
}

/** Puts the whole admin back (PUT replaces the object). Null when done, else the message. */
export async function updateAdmin(username: string, admin: AdminInput): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/admins/{username}', { params: { path: { username } }, body: admin });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteAdmin(username: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/admins/{username}', { params: { path: { username } } });
  return response.ok ? null : failure(response.status, error);
}

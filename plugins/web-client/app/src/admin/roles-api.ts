/** The roles of the admin API the console reads and writes (GET/POST/PUT/DELETE /api/v2/roles: admins with "*" and no role). */
import type { operations } from '../../generated/api';
import { api } from '../api';
import { failure } from './api-result';

export type RoleRow = operations['get_api_v2_roles_name']['responses'][200]['content']['application/json'];
export type RoleInput = NonNullable<operations['post_api_v2_roles']['requestBody']>['content']['application/json'];
type Query = NonNullable<operations['get_api_v2_roles']['parameters']['query']>;

export async function listRoles(query: Query): Promise<{ rows?: RoleRow[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/roles', { params: { query } });
  return data ? { rows: data } : { message: failure(response.status, error) };
}

export async function getRole(name: string): Promise<{ row?: RoleRow; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/roles/{name}', { params: { path: { name } } });
  return data ? { row: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

export async function createRole(role: RoleInput): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/roles', { body: role });
  return response.ok ? null : failure(response.status, error);
}

export async function updateRole(name: string, role: RoleInput): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/roles/{name}', { params: { path: { name } }, body: role });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteRole(name: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/roles/{name}', { params: { path: { name } } });
  return response.ok ? null : failure(response.status, error);
}

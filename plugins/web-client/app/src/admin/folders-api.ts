/** The virtual folders of the admin API the console reads and writes (GET/POST/PUT/DELETE /api/v2/folders, manage_folders; the quota scan, quota_scans). */
import type { operations } from '../../generated/api';
import { api } from '../api';
import { failure } from './api-result';

export type FolderRow = operations['get_api_v2_folders_name']['responses'][200]['content']['application/json'];
export type FolderInput = NonNullable<operations['post_api_v2_folders']['requestBody']>['content']['application/json'];
type Query = NonNullable<operations['get_api_v2_folders']['parameters']['query']>;

export async function listFolders(query: Query): Promise<{ rows?: FolderRow[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/folders', { params: { query } });
  return data ? { rows: data } : { message: failure(response.status, error) };
}

export async function getFolder(name: string): Promise<{ row?: FolderRow; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/folders/{name}', { params: { path: { name } } });
  return data ? { row: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

export async function createFolder(folder: FolderInput): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/folders', { body: folder });
  return response.ok ? null : failure(response.status, error);
}

/** Puts the whole folder back (PUT replaces the object). Null when done, else the message. */
export async function updateFolder(name: string, folder: FolderInput): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/folders/{name}', { params: { path: { name } }, body: folder });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteFolder(name: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/folders/{name}', { params: { path: { name } } });
  return response.ok ? null : failure(response.status, error);
}

/** Starts a scan of the folder's used quota (POST /api/v2/quotas/folders/{name}/scan, 202). */
export async function scanFolderQuota(name: string): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/quotas/folders/{name}/scan', { params: { path: { name } } });
  return response.ok ? null : failure(response.status, error);
}

/** The folders whose quota scan is running (GET /api/v2/quotas/folders/scans), or null when the list could not be read. */
export async function runningFolderScans(): Promise<string[] | null> {
  const { data } = await api.GET('/api/v2/quotas/folders/scans');
  return data ? data.map((s) => s.name ?? '') : null;
}

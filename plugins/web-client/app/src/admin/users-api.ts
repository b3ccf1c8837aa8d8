/** The users of the admin API the console reads and writes (GET/POST/PUT/DELETE /api/v2/users). */
import { api } from '../api';
import { failure } from './api-result';
import type { UserInput, UserRow } from './account-types';

export type { UserInput, UserRow };

export async function getUser(username: string): Promise<{ user?: UserRow; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/users/{username}', { params: { path: { username } } });
  return data ? { user: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

/** Puts the whole user back with `changes` (PUT replaces the object, as the API's clients do). Null when done, else the message. */
export async function updateUser(username: string, user: UserInput): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/users/{username}', { params: { path: { username } }, body: user as never });
  return response.ok ? null : failure(response.status, error);
}

export async function createUser(user: UserInput): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/users', { body: user });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteUser(username: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/users/{username}', { params: { path: { username } } });
  return response.ok ? null : failure(response.status, error);
}

/** Enables (1) or disables (0) a user: its object read and put back with the new status. */
export async function setUserStatus(username: string, status: 0 | 1): Promise<string | null> {
  const got = await getUser(username);
  if (!got.user) return got.message ?? String(got.status);
  return updateUser(username, { ...(got.user as UserInput), status });
}

/** Starts a scan of the user's used quota (POST /api/v2/quotas/users/{username}/scan, 202; quota_scans). Null when started, else the message. */
export async function scanUserQuota(username: string): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/quotas/users/{username}/scan', { params: { path: { username } } });
  return response.ok ? null : failure(response.status, error);
}

/** The users whose quota scan is running (GET /api/v2/quotas/users/scans), or null when the list could not be read. */
export async function runningUserScans(): Promise<string[] | null> {
  const { data } = await api.GET('/api/v2/quotas/users/scans');
  return data ? data.map((s) => s.username ?? '') : null;
}

/** Sets the user's used upload and download transfer back to 0 (PUT /api/v2/quotas/users/{username}/transfer-usage?mode=reset; quota_scans). */
export async function resetUserTransfer(username: string): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/quotas/users/{username}/transfer-usage', {
    params: { path: { username }, query: { mode: 'reset' } },
    body: { used_upload_data_transfer: 0, used_download_data_transfer: 0 },
  });
  return response.ok ? null : failure(response.status, error);
}

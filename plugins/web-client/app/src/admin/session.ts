/** The web admin's session (cookie ferry_admin): sign-in, the current session, sign-out; the permissions it offers. */
import type { operations } from '../../generated/api';
import { api, errorMessage, setCsrfToken } from '../api';
import { t } from '../strings';
import { signInOutcome, type LoginOutcome } from '../session';

/** The answer of GET/POST /api/v2/admin/web-session: with the admin's permissions and role. */
export type AdminSession = operations['get_api_v2_admin_web_session']['responses'][200]['content']['application/json'];

/** The session of the cookie, or null when there is none (or it expired). */
export async function currentAdminSession(): Promise<AdminSession | null> {
  const { data } = await api.GET('/api/v2/admin/web-session');
  if (!data) return null;
  setCsrfToken(data.csrf_token);
  return data;
}

export function adminLogin(username: string, password: string, passcode?: string): Promise<LoginOutcome<AdminSession>> {
  return signInOutcome(() => api.POST('/api/v2/admin/web-session', { body: { username, password, ...(passcode ? { passcode } : {}) } }), passcode);
}

/** Changes the signed-in admin's password (PUT /api/v2/admin/changepwd); null when done, else the reason. */
export async function changeAdminPassword(current: string, next: string): Promise<string | null> {
  try {
    const { response, error } = await api.PUT('/api/v2/admin/changepwd', { body: { current_password: current, new_password: next } });
    return response.ok ? null : errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}

export async function adminLogout(): Promise<void> {
  try {
    await api.DELETE('/api/v2/admin/web-session');
  } finally {
    setCsrfToken('');
  }
}

/** An admin permission (the OpenAPI type of an admin's permissions); '*' grants them all. */
export type Permission = Exclude<NonNullable<operations['post_api_v2_admins']['requestBody']>['content']['application/json']['permissions'][number], '*'>;

/** Whether the session's admin has `p` (the server refuses it otherwise: the console does not offer it). */
export function can(s: AdminSession, p: Permission): boolean {
  return s.permissions.includes('*') || s.permissions.includes(p);
}

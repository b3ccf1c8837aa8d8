/** The web session (cookie ferry_web, see api.ts): sign-in, the current session, its refresh while the tab is used, sign-out. */
import type { operations } from '../generated/api';
import { api, errorMessage, setCsrfToken } from './api';
import { t } from './strings';

/** The answer of GET/POST /api/v2/user/web-session (generated from the OpenAPI document). */
export type Session = operations['get_api_v2_user_web_session']['responses'][200]['content']['application/json'];

export type LoginOutcome<S = Session> = { kind: 'ok'; session: S } | { kind: 'two-factor' } | { kind: 'refused'; message: string };

/** A sign-in function: the user's (login below) or the web admin's (admin/session.ts). */
export type SignIn<S = Session> = (username: string, password: string, passcode?: string) => Promise<LoginOutcome<S>>;

/** The session of the cookie, or null when there is none (or it expired). */
export async function currentSession(): Promise<Session | null> {
  const { data } = await api.GET('/api/v2/user/web-session');
  if (!data) return null;
  setCsrfToken(data.csrf_token);
  return data;
}

/** What a refused sign-in says to the user, from the status and the server's message (see core/src/auth/login.service.ts). */
export function refusalMessage(status: number, body: unknown, withPasscode: boolean): string {
  const message = errorMessage(body, '');
  if (status === 401) {
    if (/disabled/.test(message)) return t.accountDisabled;
    if (/expired/.test(message)) return t.accountExpired;
    if (/already been used/.test(message)) return t.passcodeReused;
    if (withPasscode && /two-factor/.test(message)) return t.wrongPasscode;
    if (message === 'invalid credentials' || !message) return t.wrongCredentials;
    return t.refused(message);
  }
  if (status === 429) return t.tooManyAttempts;
  if (status === 403) return /banned/.test(message) ? t.banned : t.refused(message || String(status));
  return t.unexpected(status);
}

/**
 * The outcome of a web session's sign-in request (POST /api/v2/user/web-session or
 * /api/v2/admin/web-session): the session (its CSRF token kept), the passcode step, or the refusal.
 */
export async function signInOutcome<S extends { csrf_token: string }>(
  request: () => Promise<{ data?: S; error?: unknown; response: Response }>,
  passcode: string | undefined,
): Promise<LoginOutcome<S>> {
  let res;
  try {
    res = await request();
  } catch {
    return { kind: 'refused', message: t.networkError };
  }
  if (res.data) {
    setCsrfToken(res.data.csrf_token);
    return { kind: 'ok', session: res.data };
  }
  const body: unknown = res.error;
  if (
    res.response.status === 401 &&
    body &&
    typeof body === 'object' &&
    (body as { two_factor_required?: unknown }).two_factor_required === true &&
    !passcode
  ) {
    return { kind: 'two-factor' };
  }
  return { kind: 'refused', message: refusalMessage(res.response.status, body, !!passcode) };
}

export function login(username: string, password: string, passcode?: string): Promise<LoginOutcome> {
  return signInOutcome(() => api.POST('/api/v2/user/web-session', { body: { username, password, ...(passcode ? { passcode } : {}) } }), passcode);
}

/** Changes the signed-in user's password (PUT /api/v2/user/changepwd); null when done, else the reason. */
export async function changePassword(current: string, next: string): Promise<string | null> {
  try {
    const { response, error } = await api.PUT('/api/v2/user/changepwd', { body: { current_password: current, new_password: next } });
    return response.ok ? null : errorMessage(error, t.unexpected(response.status));
  } catch {
    return t.networkError;
  }
}

export async function logout(): Promise<void> {
  try {
    await api.DELETE('/api/v2/user/web-session');
  } finally {
    setCsrfToken('');
  }
}

/**
 * Keeps the session alive while the tab is in use: each minute in which the
 * user pressed a key or the pointer in a visible tab, GET the session (which
 * slides its expiry). Returns the stopper.
 */
export function keepAlive(onLost: () => void, everyMs = 60_000, check: () => Promise<unknown> = currentSession): () => void {
  let active = false;
  const mark = () => {
    active = true;
  };
  window.addEventListener('pointerdown', mark, { passive: true });
  window.addEventListener('keydown', mark, { passive: true });
  const timer = window.setInterval(() => {
    if (!active || document.visibilityState !== 'visible') return;
    active = false;
    void check().then((s) => {
      if (!s) onLost();
    });
  }, everyMs);
  return () => {
    window.clearInterval(timer);
    window.removeEventListener('pointerdown', mark);
    window.removeEventListener('keydown', mark);
  };
}

/** What the sign-in page may offer besides the password (GET /api/v2/user/web-session/login-options, no credentials). */
export async function loginOptions(): Promise<{ password_reset: boolean; oidc: boolean }> {
  try {
    const { data } = await api.GET('/api/v2/user/web-session/login-options');
    return data ?? { password_reset: false, oidc: false };
  } catch {
    return { password_reset: false, oidc: false };
  }
}

/** Whose sign-in page: a user's (web client) or an admin's (web admin). */
export type AccountKind = 'user' | 'admin';

const answered = (response: Response, error: unknown): string | null =>
  response.ok ? null : response.status === 429 ? t.tooManyAttempts : errorMessage(error, t.unexpected(response.status));

/**
 * Asks for a password reset code by email (POST /api/v2/users/{username}/forgot-password, or
 * /api/v2/admins/... for an admin); null when asked, else the reason.
 */
export async function forgotPassword(username: string, kind: AccountKind = 'user'): Promise<string | null> {
  try {
    const params = { params: { path: { username } } };
    const { response, error } =
      kind === 'admin'
        ? await api.POST('/api/v2/admins/{username}/forgot-password', params)
        : await api.POST('/api/v2/users/{username}/forgot-password', params);
    return answered(response, error);
  } catch {
    return t.networkError;
  }
}

/** Sets a new password with the mailed code (POST /api/v2/users/{username}/reset-password, or /api/v2/admins/...); null when done, else the reason. */
export async function resetPassword(username: string, code: string, password: string, kind: AccountKind = 'user'): Promise<string | null> {
  try {
    const init = { params: { path: { username } }, body: { code, password } };
    const { response, error } =
      kind === 'admin' ? await api.POST('/api/v2/admins/{username}/reset-password', init) : await api.POST('/api/v2/users/{username}/reset-password', init);
    return answered(response, error);
  } catch {
    return t.networkError;
  }
}

/** Where the single sign-on button goes: the OIDC login for a web session of the kind (the callback opens it and comes back to its pages). */
export const oidcLoginUrl = (kind: AccountKind = 'user'): string => `/api/v2/oidc/login?target=${kind}&web=1`;

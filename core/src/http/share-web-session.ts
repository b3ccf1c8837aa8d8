import type { Request } from '@hapi/hapi';

/**
 * Share web sessions (an addition to v2.7, docs/api-compatibility.md "Share
 * web sessions"): the public share page of the web client opens one with the
 * share password or a one-time code (POST /api/v2/shares/{id}/web-session)
 * and gets an HttpOnly, SameSite=Strict cookie `ferry_share_<id>` holding a
 * share token with a CSRF token. The public share routes and the TUS routes
 * accept that cookie for that share alone; state-changing requests it
 * authenticates must carry the session's X-CSRF-Token.
 */
export const SHARE_COOKIE_PREFIX = 'ferry_share_';
/** Every route that takes the cookie is below this path (/api/v2/shares/{id}/... and /api/v2/shares-chunked-uploads). */
const COOKIE_PATH = '/api/v2/';

/** The token of share `id`'s web session cookie, if the request has one. */
export function shareCookieOf(request: Request, id: string): string | undefined {
  const v = (request.state as Record<string, unknown> | null)?.[shareCookieName(id)];
  const token = Array.isArray(v) ? v[0] : v;
  return typeof token === 'string' && token.length > 0 && token.length <= 4096 && /^[A-Za-z0-9_.-]+$/.test(token) ? token : undefined;
}

/** The cookie name of share `id` (share ids are URL-safe, so a valid cookie name). */
export const shareCookieName = (id: string): string => `${SHARE_COOKIE_PREFIX}${id}`;

/** The Set-Cookie value of share `id`'s web session (Secure when the request came over TLS); '' and 0 clear it. */
export function shareSessionCookie(request: Request, id: string, token: string, maxAgeSeconds: number): string {
  const secure = request.server.info.protocol === 'https' ? '; Secure' : '';
  return `${shareCookieName(id)}=${token}; Max-Age=${maxAgeSeconds}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict${secure}`;
}

import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import type { UserCredentials } from '../auth/credentials.js';
import { UserAuthService } from '../auth/user-auth.service.js';
import { WebSessionService, passwordChangeRequired, sameSecret } from '../auth/web-session.service.js';
import { accountRefusalOf } from '../accounts/account-access.js';
import type { CachedUser } from '../accounts/account-cache.js';
import type { WebSession } from '../data/entities/index.js';
import { stringProblem } from '../util/well-formed.js';

/**
 * Browser sessions of the REST API (an addition to v2.7, docs/api-compatibility.md
 * "Web sessions"): POST /api/v2/user/web-session sets the cookie, the
 * `web-user` strategy accepts it on the user routes, and state-changing
 * requests it authenticates must carry the session's X-CSRF-Token.
 */
export const WEB_SESSION_PATH = '/api/v2/user/web-session';
export const WEB_SESSION_COOKIE = 'ferry_web';
export const CSRF_HEADER = 'x-csrf-token';
/** Methods that change nothing: no CSRF token asked. */
const SAFE_METHODS = new Set(['get', 'head', 'options']);

/** The Set-Cookie value of a session id (Secure when the request came over TLS). */
export function webSessionCookie(request: Request, id: string, maxAgeSeconds: number): string {
  const secure = request.server.info.protocol === 'https' ? '; Secure' : '';
  return `${WEB_SESSION_COOKIE}=${id}; Max-Age=${maxAgeSeconds}; Path=/; HttpOnly; SameSite=Strict${secure}`;
}

/** The Set-Cookie value that clears the session cookie. */
export function clearedWebSessionCookie(request: Request): string {
  return webSessionCookie(request, '', 0);
}

/** The session id the request's cookie carries, if any. */
function cookieOf(request: Request): string | undefined {
  const v = (request.state as Record<string, unknown> | null)?.[WEB_SESSION_COOKIE];
  const id = Array.isArray(v) ? v[0] : v;
  return typeof id === 'string' && id.length > 0 && id.length <= 128 && !stringProblem(id) ? id : undefined;
}

/**
 * The `web-session` scheme and its `web-user` strategy. No cookie: no
 * credentials for this strategy (the route's others are tried). A cookie of
 * no live session, or of an account that may no longer log in over HTTP
 * (disabled, expired, deleted, HTTP denied, address not allowed, password
 * changed since the login): 401 and the cookie cleared; such a session is
 * deleted. A state-changing request without the session's X-CSRF-Token: 403.
 * A request let in slides the session's idle expiry.
 */
export function registerWebSessionAuth(
  server: Server,
  c: DependencyContainer,
  o: {
    clientIp: (r: Request) => string;
    mfaSetup: (filters: unknown, effectiveFilters: unknown) => { mfaSetupRequired?: string };
    remember: (r: Request, entry: CachedUser) => void;
  },
): void {
  const sessions = c.resolve(WebSessionService);
  const users = c.resolve(UserAuthService);
  const ended = (request: Request, message: string): never => {
    const err = Boom.unauthorized(message, 'Cookie');
    err.output.headers['set-cookie'] = clearedWebSessionCookie(request) as never;
    throw err;
  };
  server.auth.scheme('web-session', () => ({
    authenticate: async (request: Request, h: ResponseToolkit) => {
      const id = cookieOf(request);
      if (!id) throw Boom.unauthorized(null, 'Cookie');
      const s = await sessions.find(id);
      if (!s) return ended(request, 'the web session has ended: log in again');
      const found = await users.findForSession(s.username);
      const user = found?.user;
      const gone =
        !found ||
        user!.id !== s.user_id ||
        s.created_at < user!.last_password_change ||
        s.created_at < user!.tokens_valid_after ||
        accountRefusalOf(found.view, o.clientIp(request), 'HTTP', { verb: 'login' });
      if (gone) {
        await sessions.revoke(s.id_hash);
        return ended(request, 'the web session has ended: log in again');
      }
      if (!SAFE_METHODS.has(request.method)) {
        const header = request.headers[CSRF_HEADER];
        if (typeof header !== 'string' || !sameSecret(header, s.csrf_token)) {
          throw Boom.forbidden(
            `missing or wrong X-CSRF-Token header: a request authenticated by the web session cookie that changes something must carry the session's csrf_token (GET ${WEB_SESSION_PATH})`,
          );
        }
      }
      // GET /user/web-session refreshes the session whatever the last write (the route asks for it)
      await sessions.slide(s, request.path === WEB_SESSION_PATH && request.method === 'get');
      o.remember(request, found!.entry);
      const credentials: UserCredentials = {
        kind: 'user',
        user: users.identity(user!),
        webSession: s.id_hash,
        ...(s.idp ? { idpLogin: true } : o.mfaSetup(user!.filters, found!.view.filters)),
      };
      (request.app as WebSessionApp).webSession = { session: s, passwordChangeRequired: passwordChangeRequired(user!, found!.view.filters) };
      return h.authenticated({ credentials: credentials as never });
    },
  }));
  server.auth.strategy('web-user', 'web-session');
}

interface WebSessionApp {
  webSession?: { session: WebSession; passwordChangeRequired: boolean };
}

/** The web session a request was authenticated with (routes using the `web-user` strategy). */
export function webSessionOf(request: Request): WebSessionApp['webSession'] {
  return (request.app as WebSessionApp).webSession;
}

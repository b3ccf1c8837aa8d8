import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import type { AdminCredentials, FerryCredentials, UserCredentials } from '../auth/credentials.js';
import { UserAuthService } from '../auth/user-auth.service.js';
import { WebSessionService, passwordChangeRequired, sameSecret, type WebSessionKind } from '../auth/web-session.service.js';
import { adminAllowedFrom } from '../auth/login.service.js';
import type { AccountKind } from '../auth/two-factor.service.js';
import { AdminService } from '../accounts/admin.service.js';
import { AccountStatus } from '../accounts/account-numbers.js';
import { accountRefusalOf } from '../accounts/account-access.js';
import type { CachedUser } from '../accounts/account-cache.js';
import type { WebSession } from '../data/entities/index.js';
import { stringProblem } from '../util/well-formed.js';

/**
 * Browser sessions of the REST API (an addition to v2.7, docs/api-compatibility.md
 * "Web sessions"): POST /api/v2/user/web-session sets the cookie, the
 * `web-user` strategy accepts it on the user routes, and state-changing
 * requests it authenticates must carry the session's X-CSRF-Token. Admins
 * have the same sessions (the web admin): POST /api/v2/admin/web-session,
 * cookie ferry_admin, strategy `web-admin` on the admin routes. A browser may
 * hold both cookies at once.
 */
export const WEB_SESSION_PATH = '/api/v2/user/web-session';
export const WEB_SESSION_COOKIE = 'ferry_web';
export const ADMIN_WEB_SESSION_PATH = '/api/v2/admin/web-session';
export const ADMIN_WEB_SESSION_COOKIE = 'ferry_admin';
/** The login route and the cookie of each kind of session. */
export const WEB_SESSIONS: Record<WebSessionKind, { path: string; cookie: string }> = {
  user: { path: WEB_SESSION_PATH, cookie: WEB_SESSION_COOKIE },
  admin: { path: ADMIN_WEB_SESSION_PATH, cookie: ADMIN_WEB_SESSION_COOKIE },
};
export const CSRF_HEADER = 'x-csrf-token';
/** Methods that change nothing: no CSRF token asked. */
const SAFE_METHODS = new Set(['get', 'head', 'options']);

/** The Set-Cookie value of a session id (Secure when the request came over TLS). */
export function webSessionCookie(request: Request, id: string, maxAgeSeconds: number, kind: WebSessionKind = 'user'): string {
  const secure = request.server.info.protocol === 'https' ? '; Secure' : '';
  return `${WEB_SESSIONS[kind].cookie}=${id}; Max-Age=${maxAgeSeconds}; Path=/; HttpOnly; SameSite=Strict${secure}`;
}

/** The Set-Cookie value that clears the session cookie of `kind`. */
export function clearedWebSessionCookie(request: Request, kind: WebSessionKind = 'user'): string {
  return webSessionCookie(request, '', 0, kind);
}

/** The session id the request's cookie of `kind` carries, if any. */
function cookieOf(request: Request, kind: WebSessionKind): string | undefined {
  const v = (request.state as Record<string, unknown> | null)?.[WEB_SESSIONS[kind].cookie];
  const id = Array.isArray(v) ? v[0] : v;
  return typeof id === 'string' && id.length > 0 && id.length <= 128 && !stringProblem(id) ? id : undefined;
}

/** What a live session's account check gives: the credentials of the request, or null when the account may no longer use it. */
type AccountCheck = (s: WebSession, request: Request) => Promise<{ credentials: FerryCredentials; passwordChangeRequired: boolean } | null>;

/**
 * The `web-session` scheme and its `web-user` and `web-admin` strategies. No
 * cookie: no credentials for this strategy (the route's others are tried). A
 * cookie of no live session of the strategy's kind, or of an account that may
 * no longer log in over HTTP (users: disabled, expired, deleted, HTTP denied,
 * address not allowed, password changed since the login; admins: disabled,
 * deleted, address not in its allow list, tokens revoked since the login):
 * 401 and the cookie cleared; such a session is deleted. A state-changing
 * request without the session's X-CSRF-Token: 403. A request let in slides
 * the session's idle expiry.
 */
export function registerWebSessionAuth(
  server: Server,
  c: DependencyContainer,
  o: {
    clientIp: (r: Request) => string;
    mfaSetup: (kind: AccountKind, filters: unknown, effectiveFilters: unknown) => { mfaSetupRequired?: string };
    remember: (r: Request, entry: CachedUser) => void;
  },
): void {
  const sessions = c.resolve(WebSessionService);
  const users = c.resolve(UserAuthService);
  const admins = c.resolve(AdminService);

  const checks: Record<WebSessionKind, AccountCheck> = {
    user: async (s, request) => {
      const found = await users.findForSession(s.username);
      const user = found?.user;
      const gone =
        !found ||
        user!.id !== s.user_id ||
        s.created_at < user!.last_password_change ||
        s.created_at < user!.tokens_valid_after ||
        accountRefusalOf(found.view, o.clientIp(request), 'HTTP', { verb: 'login' });
      if (gone) return null;
      o.remember(request, found!.entry);
      const credentials: UserCredentials = {
        kind: 'user',
        user: users.identity(user!),
        webSession: s.id_hash,
        ...(s.idp ? { idpLogin: true } : o.mfaSetup('user', user!.filters, found!.view.filters)),
      };
      return { credentials, passwordChangeRequired: passwordChangeRequired(user!, found!.view.filters) };
    },
    admin: async (s, request) => {
      const admin = await admins.findForAuth(s.username);
      const gone =
        !admin ||
        admin.id !== s.user_id ||
        admin.status !== AccountStatus.Enabled ||
        s.created_at < admin.tokens_valid_after ||
        !adminAllowedFrom(admin, o.clientIp(request));
      if (gone) return null;
      const credentials: AdminCredentials = {
        kind: 'admin',
        admin: admins.identity(admin),
        webSession: s.id_hash,
        ...(s.idp ? { idpLogin: true } : o.mfaSetup('admin', admin.filters, admin.filters)),
      };
      return { credentials, passwordChangeRequired: admin.filters.require_password_change === true };
    },
  };

  server.auth.scheme('web-session', (_server: Server, options?: { kind?: WebSessionKind }) => {
    const kind = options?.kind ?? 'user';
    const { path } = WEB_SESSIONS[kind];
    const ended = (request: Request): never => {
      const err = Boom.unauthorized('the web session has ended: log in again', 'Cookie');
      err.output.headers['set-cookie'] = clearedWebSessionCookie(request, kind) as never;
      throw err;
    };
    return {
      authenticate: async (request: Request, h: ResponseToolkit) => {
        const id = cookieOf(request, kind);
        if (!id) throw Boom.unauthorized(null, 'Cookie');
        const s = await sessions.find(id, kind);
        if (!s) return ended(request);
        const letIn = await checks[kind](s, request);
        if (!letIn) {
          await sessions.revoke(s.id_hash);
          return ended(request);
        }
        if (!SAFE_METHODS.has(request.method)) {
          const header = request.headers[CSRF_HEADER];
          if (typeof header !== 'string' || !sameSecret(header, s.csrf_token)) {
            throw Boom.forbidden(
              `missing or wrong X-CSRF-Token header: a request authenticated by the web session cookie that changes something must carry the session's csrf_token (GET ${path})`,
            );
          }
        }
        // GET on the session's route refreshes the session whatever the last write (the route asks for it)
        await sessions.slide(s, request.path === path && request.method === 'get');
        (request.app as WebSessionApp).webSession = { session: s, passwordChangeRequired: letIn.passwordChangeRequired };
        return h.authenticated({ credentials: letIn.credentials as never });
      },
    };
  });
  server.auth.strategy('web-user', 'web-session', { kind: 'user' });
  server.auth.strategy('web-admin', 'web-session', { kind: 'admin' });
}

interface WebSessionApp {
  webSession?: { session: WebSession; passwordChangeRequired: boolean };
}

/** The web session a request was authenticated with (routes using the `web-user` or `web-admin` strategy). */
export function webSessionOf(request: Request): WebSessionApp['webSession'] {
  return (request.app as WebSessionApp).webSession;
}

import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import type { HttpBinding } from '../../config/schema.js';
import type { OidcBindingConfig } from '../../config/oidc.schema.js';
import { clientIp } from '../auth-strategies.js';
import { OidcLoginError, OidcService, OIDC_CALLBACK_PATH, type OidcCallbackQuery } from '../../auth/oidc/oidc.service.js';
import type { OidcLoginKind } from '../../auth/oidc/oidc-claims.js';
import crypto from 'node:crypto';
import { TokenService } from '../../auth/token.service.js';
import { DefenderService, type DefenderEventKind } from '../../security/defender.service.js';
import { openWebSession } from './web-session.js';

/** Where a web login (web=1) sends the browser once its session is open: the web client. */
/** Where a web login (web=1) goes once its session is open: the web client's or the web admin's page. */
const WEB_PAGES = { user: '/web/client/', admin: '/web/admin/' } as const;

/** Cookie binding a login to the browser that started it: an HMAC of the state under the token signing key. */
const BROWSER_COOKIE = 'ferry_oidc_login';

/** What a refused callback scores in the defender: unknown accounts and forged or foreign callbacks as invalid, refused accounts as valid. */
function defenderKind(status: OidcLoginError['status']): DefenderEventKind | null {
  if (status === 403) return 'valid';
  if (status === 400 || status === 401) return 'invalid';
  return null;
}

const STATUS_ERROR: Record<OidcLoginError['status'], string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  502: 'Bad Gateway',
};

/** The OIDC settings of the binding serving the request; 404 when OIDC is off there. */
function oidcOf(request: Request): OidcBindingConfig {
  const b = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
  if (!b?.oidc?.config_url) throw new OidcLoginError(404, 'OIDC login is not configured on this binding');
  return b.oidc;
}

/** Answers an OidcLoginError with its own status and message (also a 502, whose message names the provider, not a secret). */
function refuse(h: ResponseToolkit, err: unknown) {
  if (!(err instanceof OidcLoginError)) throw err;
  return h.response({ message: err.message, error: STATUS_ERROR[err.status] }).code(err.status).type('application/json');
}

/**
 * Identity-provider (OIDC) login for the REST API (docs/oidc.md):
 * GET /api/v2/oidc/login redirects to the provider, the provider redirects
 * the browser to GET /api/v2/oidc/callback, which answers a Ferry token,
 * or for a login started with web=1 sets the web session cookie and
 * redirects to the web client.
 */
export function oidcRoutes(c: DependencyContainer): ServerRoute[] {
  const service = c.resolve(OidcService);
  const tokens = c.resolve(TokenService);
  const defender = c.resolve(DefenderService);
  const browserMark = async (state: string) =>
    crypto
      .createHmac('sha256', await tokens.signingKey())
      .update(`oidc-browser\n${state}`)
      .digest('base64url');
  /** The callback must come from the browser the login started in (login CSRF): its cookie is the state's mark. */
  const checkBrowser = async (request: Request, state: string) => {
    const got = (request.state as Record<string, unknown> | null)?.[BROWSER_COOKIE];
    const want = Buffer.from(await browserMark(state));
    if (typeof got !== 'string' || got.length !== want.length || !crypto.timingSafeEqual(Buffer.from(got), want)) {
      throw new OidcLoginError(
        400,
        `this callback does not come from the browser that started the login (cookie ${BROWSER_COOKIE} missing or for another login): start the login again`,
      );
    }
  };
  const clearedBrowserCookie = `${BROWSER_COOKIE}=; Path=/api/v2/oidc; Max-Age=0; HttpOnly; SameSite=Lax`;
  return [
    {
      method: 'GET',
      path: '/api/v2/oidc/login',
      options: {
        auth: false,
        validate: {
          query: Joi.object({
            target: Joi.string().valid('admin', 'user').default('user'),
            // an addition to v2.7: the callback opens a web session and redirects to its pages (cookie
            // ferry_web and the web client for target=user, ferry_admin and the web admin for target=admin)
            web: Joi.boolean().truthy('1').falsy('0').default(false),
          }),
        },
      },
      handler: async (request, h) => {
        try {
          const o = oidcOf(request);
          const q = request.query as { target: OidcLoginKind; web: boolean };
          const url = await service.start(o, q.target, { web: q.web });
          const secure = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding?.enable_https ? '; Secure' : '';
          const mark = await browserMark(url.searchParams.get('state') ?? '');
          return h
            .redirect(url.href)
            .code(302)
            .header('cache-control', 'no-store')
            .header('set-cookie', `${BROWSER_COOKIE}=${mark}; Path=/api/v2/oidc; Max-Age=${o.state_ttl}; HttpOnly; SameSite=Lax${secure}`);
        } catch (err) {
          return refuse(h, err);
        }
      },
    },
    {
      method: 'GET',
      path: OIDC_CALLBACK_PATH,
      options: {
        auth: false,
        validate: {
          // the provider may add parameters (iss, session_state, error_description...)
          query: Joi.object({
            state: Joi.string().min(1).max(512).required(),
            code: Joi.string().min(1).max(4096),
            error: Joi.string()
              .max(256)
              .pattern(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/),
          }).unknown(true),
        },
      },
      handler: async (request, h) => {
        try {
          const o = oidcOf(request);
          const query = request.query as unknown as OidcCallbackQuery;
          await checkBrowser(request, query.state);
          const done = await service.finish(o, query, request.url.search, clientIp(request));
          if ('web' in done) {
            // a login started with web=1: the session cookie, and the browser goes on to the web client or admin
            const { kind, ...account } = done.web;
            const { cookie } = await openWebSession(c, request, account, { idp: true, kind });
            return h
              .redirect(WEB_PAGES[kind])
              .code(302)
              .header('cache-control', 'no-store')
              .header('set-cookie', clearedBrowserCookie)
              .header('set-cookie', cookie, { append: true });
          }
          return h.response(done).header('cache-control', 'no-store').header('set-cookie', clearedBrowserCookie);
        } catch (err) {
          // failed identity-provider logins score the host like failed password logins
          const kind = err instanceof OidcLoginError ? defenderKind(err.status) : null;
          if (kind) await defender.addEvent(clientIp(request), kind, 'OIDC');
          if (err instanceof OidcLoginError && err.web) {
            // a refused web login: back to the sign-in page it started from, which shows the reason (in the
            // fragment: the browser does not send it to the server, no log keeps it)
            return h
              .redirect(`${WEB_PAGES[err.web]}#sso-error=${encodeURIComponent(err.message)}`)
              .code(302)
              .header('cache-control', 'no-store')
              .header('set-cookie', clearedBrowserCookie);
          }
          return refuse(h, err);
        }
      },
    },
  ];
}

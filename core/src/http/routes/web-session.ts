import type { Request, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { LoginService } from '../../auth/login.service.js';
import { UserAuthService } from '../../auth/user-auth.service.js';
import { WebSessionService, passwordChangeRequired, type WebSessionKind } from '../../auth/web-session.service.js';
import { AdminService } from '../../accounts/admin.service.js';
import type { LoginOutcome } from '../../auth/login.service.js';
import type { WebSession } from '../../data/entities/index.js';
import { ErrorKind, LoginRefusedError } from '../../errors.js';
import { adminOf, clientIp, loadedUserOf, userOf } from '../auth-strategies.js';
import { WEB_SESSIONS, clearedWebSessionCookie, webSessionCookie, webSessionOf } from '../web-session.js';
import { ApiResponse } from '../openapi/answers.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { webStartDirectory } from '../start-directory.js';
import { TOKENS } from '../../tokens.js';
import type { FerryConfig, HttpBinding } from '../../config/schema.js';
import type { Logger } from '../../logger.js';

const loginInput = Joi.object({
  username: Joi.string().min(1).max(255).required(),
  password: Joi.string().min(1).max(4096).required(),
  passcode: Joi.string().allow('').max(64).description('TOTP or recovery code, when the account has two-factor authentication for HTTP'),
});

const sessionFields = {
  username: Joi.string().required(),
  csrf_token: Joi.string().required().description('send it as X-CSRF-Token with every state-changing request the cookie authenticates'),
  expires_at: Joi.string().isoDate().required().description('idle expiry of the session, slid forward while it is used'),
};

const sessionAnswer = Joi.object({
  ...sessionFields,
  start_directory: Joi.string()
    .required()
    .description(
      "the directory the web client opens in when its address names none: the account's filters.start_directory, '/' when it is unset, missing or not a directory",
    ),
  password_change_required: Joi.boolean()
    .required()
    .description(
      'the password must be changed (require_password_change, or password_expiration passed): the session works, the client should ask for PUT /api/v2/user/changepwd',
    ),
}).description('WebSession');

const loginOptionsAnswer = Joi.object({
  password_reset: Joi.boolean().required().description('a mail server is configured: POST /api/v2/users/{username}/forgot-password can mail a code'),
  oidc: Joi.boolean().required().description('this binding has an OpenID provider: GET /api/v2/oidc/login?target=user&web=1 starts a login'),
}).description('WebLoginOptions');

const adminSessionAnswer = Joi.object({
  ...sessionFields,
  permissions: Joi.array().items(Joi.string()).required().description("the admin's permissions: the routes the session may use, as with the admin's tokens"),
  role: Joi.string().allow('').required().description('the role the admin is limited to, empty for a global admin'),
  password_change_required: Joi.boolean()
    .required()
    .description('require_password_change is set: the session works, the client should ask for PUT /api/v2/admin/changepwd'),
}).description('AdminWebSession');

/** What each kind of session's routes differ by. */
interface SessionKindRoutes {
  kind: WebSessionKind;
  /** The strategy of its GET and DELETE. */
  strategy: string;
  answerSchema: Joi.ObjectSchema;
  /** Touches the account's last login and gives its identity once the login service let it in. */
  loggedIn: (out: LoginOutcome) => Promise<{ id: number; username: string; extra: Record<string, unknown> }>;
  /** The answer's fields besides the session's, for a request the cookie authenticated. */
  extraOf: (request: Request) => Record<string, unknown>;
  /** Fields of the answer that need the account's files (POST, with the login's outcome, and GET). */
  filesOf?: (request: Request, session: WebSession, out?: LoginOutcome) => Promise<Record<string, unknown>>;
}

const answer = (s: WebSession, extra: Record<string, unknown>) => ({
  username: s.username,
  csrf_token: s.csrf_token,
  expires_at: new Date(s.expires_at).toISOString(),
  ...extra,
});

/** Opens a web session of `account`: the row and the Set-Cookie value (the login routes', and the OIDC callback's). */
export async function openWebSession(
  c: DependencyContainer,
  request: Request,
  account: { id: number; username: string },
  o: { idp?: boolean; kind?: WebSessionKind } = {},
): Promise<{ session: WebSession; cookie: string }> {
  const sessions = c.resolve(WebSessionService);
  const { id, session } = await sessions.open(account, o);
  return { session, cookie: webSessionCookie(request, id, sessions.maxLifetimeSeconds, o.kind) };
}

/** POST (login), GET (refresh) and DELETE (logout) of one kind of web session. */
function sessionRoutes(c: DependencyContainer, k: SessionKindRoutes): ServerRoute[] {
  const login = c.resolve(LoginService);
  const sessions = c.resolve(WebSessionService);
  const { path, cookie: cookieName } = WEB_SESSIONS[k.kind];
  const auth = { strategies: [k.strategy] };
  // the admin's own session routes need no permission (any admin may sign in and out)
  const ferry = k.kind === 'admin' ? { permission: 'any' as const } : {};
  return [
    {
      method: 'POST',
      path,
      options: {
        auth: false,
        // JSON only: a cross-site form (text/plain, urlencoded) cannot log a browser into another account (login CSRF)
        payload: { allow: 'application/json' },
        validate: { payload: loginInput },
        plugins: {
          ferry: {
            responses: { 200: { description: `the session is open: cookie ${cookieName} set (HttpOnly, SameSite=Strict)`, schema: k.answerSchema } },
            errors: [401, 403, 415, 429],
          },
        },
      },
      handler: async (request, h) => {
        const p = request.payload as { username: string; password: string; passcode?: string };
        let out: LoginOutcome;
        try {
          out = await login.login({
            username: p.username,
            credential: { method: 'password', password: p.password, ...(p.passcode ? { otp: p.passcode } : {}) },
            ip: clientIp(request),
            protocol: 'HTTP',
            audience: k.kind,
            // the IP lists, the defender's ban and the rate limit (scope token) ran on the request already
            perRequest: true,
          });
        } catch (err) {
          if (!(err instanceof LoginRefusedError)) throw err;
          if (err.reason === 'second-factor-required') {
            return h
              .response({ message: 'a two-factor authentication code is required: send it as "passcode"', error: 'Unauthorized', two_factor_required: true })
              .code(401)
              .header('cache-control', 'no-store');
          }
          if (err.reason === 'bad-credentials') throw Boom.unauthorized('invalid credentials');
          throw new Boom.Boom(err.message, { statusCode: err.kind === ErrorKind.Forbidden ? 403 : 401 });
        }
        const { extra, ...account } = await k.loggedIn(out);
        const { session, cookie } = await openWebSession(c, request, account, { kind: k.kind });
        const files = (await k.filesOf?.(request, session, out)) ?? {};
        return h
          .response(answer(session, { ...extra, ...files }))
          .header('set-cookie', cookie)
          .header('cache-control', 'no-store');
      },
    },
    {
      method: 'GET',
      path,
      options: {
        auth,
        plugins: { ferry: { ...ferry, mfaSetup: true, responses: { 200: { description: 'the session, refreshed', schema: k.answerSchema } } } },
      },
      handler: async (request, h) => {
        const web = webSessionOf(request)!;
        const files = (await k.filesOf?.(request, web.session)) ?? {};
        return h.response(answer(web.session, { ...k.extraOf(request), ...files })).header('cache-control', 'no-store');
      },
    },
    {
      method: 'DELETE',
      path,
      options: {
        auth,
        plugins: { ferry: { ...ferry, mfaSetup: true, responses: { 200: { description: 'the session is ended, its cookie cleared', schema: ApiResponse } } } },
      },
      handler: async (request, h) => {
        await sessions.revoke(webSessionOf(request)!.session.id_hash);
        return h.response({ message: 'logged out' }).header('set-cookie', clearedWebSessionCookie(request, k.kind)).header('cache-control', 'no-store');
      },
    },
  ];
}

/**
 * Browser sessions of the REST API (an addition to v2.7, docs/api-compatibility.md
 * "Web sessions"): POST opens one with a password login (the rules of
 * GET /api/v2/user/token, or of GET /api/v2/token for an admin's), GET tells
 * its CSRF token and refreshes it, DELETE ends it. Users' at
 * /api/v2/user/web-session (cookie ferry_web), admins' at
 * /api/v2/admin/web-session (cookie ferry_admin).
 */
export function webSessionRoutes(c: DependencyContainer): ServerRoute[] {
  const users = c.resolve(UserAuthService);
  const admins = c.resolve(AdminService);
  const config = c.resolve<FerryConfig>(TOKENS.Config);
  const fileSessions = c.resolve(FileSessions);
  const logger = c.resolve<Logger>(TOKENS.Logger);
  return [
    {
      // an addition to v2.7: what a sign-in page may offer besides the password (no credentials)
      method: 'GET',
      path: `${WEB_SESSIONS.user.path}/login-options`,
      options: {
        auth: false,
        plugins: { ferry: { responses: { 200: { description: 'the sign-in methods of this binding', schema: loginOptionsAnswer } } } },
      },
      handler: (request, h) => {
        const binding = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
        return h.response({ password_reset: config.smtp.host !== '', oidc: !!binding?.oidc?.config_url }).header('cache-control', 'no-store');
      },
    },
    ...sessionRoutes(c, {
      kind: 'user',
      strategy: 'web-user',
      answerSchema: sessionAnswer,
      loggedIn: async (out) => {
        const user = users.identity(out.user!);
        await users.touchLogin(user.id);
        return { ...user, extra: { password_change_required: passwordChangeRequired(out.user!, out.view!.filters) } };
      },
      extraOf: (request) => {
        userOf(request);
        return { password_change_required: webSessionOf(request)!.passwordChangeRequired };
      },
      filesOf: async (request, session, out) => {
        // the login's view, or the one the cookie's check loaded
        const filters = (out?.view ?? loadedUserOf(request, session.user_id)?.view)?.filters;
        return { start_directory: await webStartDirectory(fileSessions, request, session, filters, logger) };
      },
    }),
    ...sessionRoutes(c, {
      kind: 'admin',
      strategy: 'web-admin',
      answerSchema: adminSessionAnswer,
      loggedIn: async (out) => {
        const admin = admins.identity(out.admin!);
        await admins.touchLogin(admin.id);
        return {
          id: admin.id,
          username: admin.username,
          extra: { permissions: admin.permissions, role: admin.role, password_change_required: out.admin!.filters.require_password_change === true },
        };
      },
      extraOf: (request) => {
        const { admin } = adminOf(request);
        return { permissions: admin.permissions, role: admin.role, password_change_required: webSessionOf(request)!.passwordChangeRequired };
      },
    }),
  ];
}

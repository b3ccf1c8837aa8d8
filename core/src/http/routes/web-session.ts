import type { Request, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { LoginService } from '../../auth/login.service.js';
import { UserAuthService } from '../../auth/user-auth.service.js';
import { WebSessionService, passwordChangeRequired } from '../../auth/web-session.service.js';
import type { WebSession } from '../../data/entities/index.js';
import { ErrorKind, LoginRefusedError } from '../../errors.js';
import { clientIp, userOf } from '../auth-strategies.js';
import { WEB_SESSION_PATH, clearedWebSessionCookie, webSessionCookie, webSessionOf } from '../web-session.js';
import { ApiResponse } from '../openapi/answers.js';
import { TOKENS } from '../../tokens.js';
import type { FerryConfig, HttpBinding } from '../../config/schema.js';

const loginInput = Joi.object({
  username: Joi.string().min(1).max(255).required(),
  password: Joi.string().min(1).max(4096).required(),
  passcode: Joi.string().allow('').max(64).description('TOTP or recovery code, when the account has two-factor authentication for HTTP'),
});

const sessionAnswer = Joi.object({
  username: Joi.string().required(),
  csrf_token: Joi.string().required().description('send it as X-CSRF-Token with every state-changing request the cookie authenticates'),
  expires_at: Joi.string().isoDate().required().description('idle expiry of the session, slid forward while it is used'),
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

const answer = (s: WebSession, mustChange: boolean) => ({
  username: s.username,
  csrf_token: s.csrf_token,
  expires_at: new Date(s.expires_at).toISOString(),
  password_change_required: mustChange,
});

/** Opens a web session of `user`: the row and the Set-Cookie value (the login route's, and the OIDC callback's). */
export async function openWebSession(
  c: DependencyContainer,
  request: Request,
  user: { id: number; username: string },
  o: { idp?: boolean } = {},
): Promise<{ session: WebSession; cookie: string }> {
  const sessions = c.resolve(WebSessionService);
  const { id, session } = await sessions.open(user, o);
  return { session, cookie: webSessionCookie(request, id, sessions.maxLifetimeSeconds) };
}

/**
 * Browser sessions of the REST API (an addition to v2.7, docs/api-compatibility.md
 * "Web sessions"): POST opens one with a password login (the rules of
 * GET /api/v2/user/token), GET tells its CSRF token and refreshes it,
 * DELETE ends it.
 */
export function webSessionRoutes(c: DependencyContainer): ServerRoute[] {
  const login = c.resolve(LoginService);
  const users = c.resolve(UserAuthService);
  const sessions = c.resolve(WebSessionService);
  const auth = { strategies: ['web-user'] };
  const config = c.resolve<FerryConfig>(TOKENS.Config);
  return [
    {
      // an addition to v2.7: what a sign-in page may offer besides the password (no credentials)
      method: 'GET',
      path: `${WEB_SESSION_PATH}/login-options`,
      options: {
        auth: false,
        plugins: { ferry: { responses: { 200: { description: 'the sign-in methods of this binding', schema: loginOptionsAnswer } } } },
      },
      handler: (request, h) => {
        const binding = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
        return h.response({ password_reset: config.smtp.host !== '', oidc: !!binding?.oidc?.config_url }).header('cache-control', 'no-store');
      },
    },
    {
      method: 'POST',
      path: WEB_SESSION_PATH,
      options: {
        auth: false,
        // JSON only: a cross-site form (text/plain, urlencoded) cannot log a browser into another account (login CSRF)
        payload: { allow: 'application/json' },
        validate: { payload: loginInput },
        plugins: {
          ferry: {
            responses: { 200: { description: 'the session is open: cookie ferry_web set (HttpOnly, SameSite=Strict)', schema: sessionAnswer } },
            errors: [401, 403, 415, 429],
          },
        },
      },
      handler: async (request, h) => {
        const p = request.payload as { username: string; password: string; passcode?: string };
        let out;
        try {
          out = await login.login({
            username: p.username,
            credential: { method: 'password', password: p.password, ...(p.passcode ? { otp: p.passcode } : {}) },
            ip: clientIp(request),
            protocol: 'HTTP',
            audience: 'user',
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
        const user = users.identity(out.user!);
        await users.touchLogin(user.id);
        const { session, cookie } = await openWebSession(c, request, user);
        return h
          .response(answer(session, passwordChangeRequired(out.user!, out.view!.filters)))
          .header('set-cookie', cookie)
          .header('cache-control', 'no-store');
      },
    },
    {
      method: 'GET',
      path: WEB_SESSION_PATH,
      options: { auth, plugins: { ferry: { mfaSetup: true, responses: { 200: { description: 'the session, refreshed', schema: sessionAnswer } } } } },
      handler: (request, h) => {
        userOf(request);
        const web = webSessionOf(request)!;
        return h.response(answer(web.session, web.passwordChangeRequired)).header('cache-control', 'no-store');
      },
    },
    {
      method: 'DELETE',
      path: WEB_SESSION_PATH,
      options: {
        auth,
        plugins: { ferry: { mfaSetup: true, responses: { 200: { description: 'the session is ended, its cookie cleared', schema: ApiResponse } } } },
      },
      handler: async (request, h) => {
        await sessions.revoke(userOf(request).webSession!);
        return h.response({ message: 'logged out' }).header('set-cookie', clearedWebSessionCookie(request)).header('cache-control', 'no-store');
      },
    },
  ];
}

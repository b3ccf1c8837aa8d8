import type { CachedUser } from '../accounts/account-cache.js';
import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import Basic from '@hapi/basic';
import * as HapiJwt from 'hapi-auth-jwt2';
import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { HttpBinding } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import { nowNanos } from '../events/event-types.js';
import { AdminService } from '../accounts/admin.service.js';
import { UserAuthService, loginRefusal } from '../auth/user-auth.service.js';
import { TokenService, issuedBeforeRevocation, type TokenClaims, type TokenAudience } from '../auth/token.service.js';
import { API_KEY_SCOPE, parseApiKeyHeader } from '../accounts/api-key.service.js';
import { DefenderService } from '../security/defender.service.js';
import { ipMatcher } from '../util/ip.js';
import { LoginService, adminAllowedFrom } from '../auth/login.service.js';
import { ErrorKind, LoginRefusedError } from '../errors.js';
import { TwoFactorService, type AccountKind } from '../auth/two-factor.service.js';
import type { AdminCredentials, UserCredentials } from '../auth/credentials.js';
import { basicCredentialsProblem } from '../auth/basic-header.js';
import { registerLoginEvents } from './login-events.js';
import { stringProblem } from '../util/well-formed.js';
import { AccountStatus } from '../accounts/account-numbers.js';
import { isDatabaseUnavailable } from '../data/db-errors.js';
import { registerWebSessionAuth } from './web-session.js';
import { VerifiedTokens } from './verified-tokens.js';

/**
 * Admin tokens this node verified against the database, until they expire
 * (bounded): routes marked `whileDatabaseDown` accept them when the database
 * cannot be asked, so an admin can see that it is down (GET /status).
 */
class KnownAdmins {
  private static readonly MAX = 1000;
  private readonly byJti = new Map<string, { credentials: AdminCredentials; exp: number }>();

  remember(jti: string, credentials: AdminCredentials, exp: number | undefined): void {
    if (!exp) return;
    // every request of a token lands here: update its entry in place (a delete and a set per request
    // left the map's table full of deleted entries, rebuilt again and again: 2% of a read's CPU)
    const known = this.byJti.get(jti);
    if (known) {
      known.credentials = credentials;
      known.exp = exp;
      return;
    }
    this.byJti.set(jti, { credentials, exp });
    if (this.byJti.size > KnownAdmins.MAX) this.byJti.delete(this.byJti.keys().next().value!);
  }

  get(jti: string): AdminCredentials | undefined {
    const e = this.byJti.get(jti);
    if (!e) return undefined;
    if (e.exp * 1000 <= Date.now()) {
      this.byJti.delete(jti);
      return undefined;
    }
    return e.credentials;
  }
}

/** The admin routes: a bearer token, an admin API key or the web admin's session cookie (http/web-session.ts). */
export const ADMIN_AUTH = { strategies: ['jwt-admin', 'apikey-admin', 'web-admin'] };
export const ADMIN_BEARER_ONLY = { strategies: ['jwt-admin'] };
/** The admin routes a bearer token or the web admin's session cookie reaches, not an API key (2FA settings). */
export const ADMIN_BEARER_OR_WEB = { strategies: ['jwt-admin', 'web-admin'] };
export const USER_AUTH = { strategies: ['jwt-user', 'apikey-user', 'web-user'] };
/** The user routes a bearer token or the web session cookie reaches, not an API key (profile, password, 2FA). */
export const USER_BEARER_OR_WEB = { strategies: ['jwt-user', 'web-user'] };
export const ANY_AUTH = { strategies: ['jwt-admin', 'apikey-admin', 'jwt-user', 'apikey-user'] };

/** What hapi-auth-jwt2 hands its errorFunc (and takes back): the error's kind, message and scheme. */
interface TokenErrorContext {
  errorType?: string;
  message?: string;
  scheme?: string;
  error?: { message?: string };
}

/**
 * A bearer token refused by the strategies' `verify`: hapi-auth-jwt2
 * answers it as its own 401s (the errorFunc makes it one), with the same
 * message its own verification or a failed `validate` gave.
 */
class TokenRefusal extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

/** The client address, honouring the binding's proxy header only for allowed proxies. */
export function clientIp(request: Request): string {
  const binding = request.server.settings.app as { binding?: HttpBinding } | undefined;
  const remote = request.info.remoteAddress;
  const b = binding?.binding;
  if (b?.client_ip_proxy_header && b.proxy_allowed.length && ipMatcher(b.proxy_allowed)(remote)) {
    const v = request.headers[b.client_ip_proxy_header.toLowerCase()];
    const first = (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return remote;
}

function bindingOf(request: Request): HttpBinding | undefined {
  return (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
}

export async function registerAuth(server: Server, c: DependencyContainer): Promise<void> {
  const admins = c.resolve(AdminService);
  const users = c.resolve(UserAuthService);
  const tokens = c.resolve(TokenService);
  const login = c.resolve(LoginService);
  const twoFactor = c.resolve(TwoFactorService);
  const bus = c.resolve<EventBus>(TOKENS.EventBus);
  const instanceId = c.resolve<string>(TOKENS.InstanceId);
  const defender = c.resolve(DefenderService);

  /** The credentials' mark of an account that must set up 2FA first (see FerryRouteOptions.mfaSetup). */
  const mfaSetup = (kind: AccountKind, filters: unknown, effectiveFilters: unknown) => {
    const problem = twoFactor.setupRequirement(kind, filters, effectiveFilters, 'HTTP');
    return problem ? { mfaSetupRequired: problem } : {};
  };

  /**
   * Credentials no account can have (not UTF-8, NUL or control characters in the
   * username, NUL in the password) are a failed login refused before any lookup;
   * they are not put in the log event either.
   */
  const refuseMalformedBasic = async (request: Request) => {
    const header = request.headers.authorization;
    const problem = basicCredentialsProblem(typeof header === 'string' ? header : undefined);
    if (!problem) return;
    await defender.addEvent(clientIp(request), 'invalid', 'HTTP');
    throw Boom.unauthorized(`invalid credentials: ${problem}`, 'Basic');
  };

  /**
   * A password login of the token routes through the login service (which
   * publishes the login events and scores the defender). Refusals answer as
   * they always did: wrong credentials, a disabled or expired account 401 from
   * @hapi/basic, a missing or wrong second factor 401 with its message, an
   * address, protocol or login method not allowed 403.
   */
  const basicLogin = async (request: Request, audience: 'admin' | 'user', username: string, password: string) => {
    await refuseMalformedBasic(request);
    const otp = request.headers['x-service-otp'];
    try {
      const out = await login.login({
        username,
        credential: { method: 'password', password, ...(typeof otp === 'string' ? { otp } : {}) },
        ip: clientIp(request),
        protocol: 'HTTP',
        audience,
        perRequest: true,
      });
      const credentials: AdminCredentials | UserCredentials =
        audience === 'admin' ? { kind: 'admin', admin: admins.identity(out.admin!) } : { kind: 'user', user: users.identity(out.user!) };
      return { isValid: true, credentials };
    } catch (err) {
      if (!(err instanceof LoginRefusedError)) throw err;
      switch (err.reason) {
        case 'bad-credentials':
        case 'disabled':
        case 'expired':
          return { isValid: false, credentials: null };
        case 'second-factor-required':
          throw Boom.unauthorized('a two-factor authentication code is required (header X-SERVICE-OTP)');
        default:
          throw new Boom.Boom(err.message, { statusCode: err.kind === ErrorKind.Forbidden ? 403 : 401 });
      }
    }
  };

  await server.register([Basic, HapiJwt]);
  registerLoginEvents(server, bus, instanceId, clientIp);

  server.auth.strategy('basic-admin', 'basic', {
    validate: (request: Request, username: string, password: string) => basicLogin(request, 'admin', username, password),
  });

  server.auth.strategy('basic-user', 'basic', {
    validate: (request: Request, username: string, password: string) => basicLogin(request, 'user', username, password),
  });

  const lastKnownAdmins = new KnownAdmins();
  type TokenCheck = { isValid: false; errorMessage?: string } | { isValid: true; credentials: AdminCredentials | UserCredentials };
  const validateToken = async (aud: TokenAudience, decoded: TokenClaims, request: Request): Promise<TokenCheck> => {
    // a signed token is still input: its strings never reach a query unless well formed
    if (typeof decoded.sub !== 'string' || stringProblem(decoded.sub) || stringProblem(decoded.jti)) return { isValid: false };
    const ip = clientIp(request);
    if (aud === 'admin') {
      // the revocation list and the admin in one query, both read fresh (a change on any node applies at once)
      const { revoked, admin } = await admins.findForToken(decoded.sub, decoded.jti);
      if (revoked) return { isValid: false, errorMessage: 'the token has been revoked' };
      if (!admin || admin.id !== decoded.uid || admin.status !== AccountStatus.Enabled) return { isValid: false };
      if (!adminAllowedFrom(admin, ip)) return { isValid: false, errorMessage: `access from ${ip} is not allowed` };
      if (issuedBeforeRevocation(decoded, admin.tokens_valid_after)) return { isValid: false, errorMessage: 'the token has been revoked' };
      // an OIDC login's token: the provider ran the second factor, Ferry's 2FA requirement does not apply
      const credentials: AdminCredentials = {
        kind: 'admin',
        admin: admins.identity(admin),
        jti: decoded.jti,
        exp: decoded.exp,
        ...(decoded.idp === true ? { idpLogin: true } : mfaSetup('admin', admin.filters, admin.filters)),
      };
      return { isValid: true, credentials };
    }
    // the revocation list, the user and its groups in one query, read fresh (a change on any node applies at once)
    const { revoked, user, view, entry } = await users.findForToken(decoded.sub, decoded.jti, decoded.exp);
    if (revoked) return { isValid: false, errorMessage: 'the token has been revoked' };
    if (!user || !view || user.id !== decoded.uid || loginRefusal(view, ip, 'HTTP')) return { isValid: false };
    if (issuedBeforeRevocation(decoded, user.tokens_valid_after)) return { isValid: false, errorMessage: 'the token has been revoked' };
    // what the request's file session needs too, read by the same statement (see loadedUserOf)
    if (entry) (request.app as RequestUserApp).loadedUser = entry;
    const credentials: UserCredentials = {
      kind: 'user',
      user: users.identity(user),
      jti: decoded.jti,
      exp: decoded.exp,
      ...(decoded.idp === true ? { idpLogin: true } : mfaSetup('user', user.filters, view.filters)),
    };
    return { isValid: true, credentials };
  };
  // a KeyObject: given a string, jsonwebtoken first tries (and fails) to parse it as a PEM public key on every verification
  const verificationKey = await tokens.signingKeyObject();
  const jwtStrategy = (aud: TokenAudience) => {
    const verified = new VerifiedTokens(verificationKey, { algorithms: ['HS256'], audience: aud });
    return {
      tokenType: 'Bearer',
      urlKey: false,
      cookieKey: false,
      // hapi-auth-jwt2 only decodes the token: `verify` checks it (signature remembered per token: VerifiedTokens)
      errorFunc: (ctx: TokenErrorContext, request: Request) => {
        // a refusal of `verify` answers as hapi-auth-jwt2's own checks do (401, Bearer, the same messages)
        const refusal = ctx.error instanceof TokenRefusal ? ctx.error : undefined;
        const out: TokenErrorContext = refusal
          ? { ...ctx, errorType: 'unauthorized', message: refusal.message, scheme: 'Bearer', error: refusal.cause as TokenErrorContext['error'] }
          : ctx;
        // a token signed with another key is forged: score the host once per request (several strategies see it)
        const app = request.app as { defenderScored?: boolean };
        if (out.error?.message === 'invalid signature' && !app.defenderScored) {
          app.defenderScored = true;
          defender.report(clientIp(request), 'invalid', 'HTTP');
        }
        return out;
      },
      verify: async (_decoded: unknown, request: Request) => {
        let decoded: TokenClaims;
        try {
          // hapi-auth-jwt2 keeps the token it decoded on request.auth.token
          decoded = verified.claims(String((request.auth as { token?: unknown }).token)) as unknown as TokenClaims;
        } catch (err) {
          throw new TokenRefusal((err as Error).message === 'jwt expired' ? 'Expired token' : 'Invalid token', err);
        }
        if (decoded.aud !== aud || typeof decoded.jti !== 'string') throw new TokenRefusal('Invalid credentials');
        let r: TokenCheck;
        try {
          r = await validateToken(aud, decoded, request);
          if (r.isValid && r.credentials.kind === 'admin') lastKnownAdmins.remember(decoded.jti, r.credentials, decoded.exp);
        } catch (err) {
          // routes that must answer while the database is down (GET /status) accept a token this node verified before
          const known = request.route.settings.plugins?.ferry?.whileDatabaseDown && isDatabaseUnavailable(err) ? lastKnownAdmins.get(decoded.jti) : undefined;
          if (known) return { isValid: true, credentials: known };
          throw err;
        }
        if (!r.isValid) throw new TokenRefusal(r.errorMessage || 'Invalid credentials');
        return { isValid: true, credentials: r.credentials };
      },
    };
  };
  server.auth.strategy('jwt-admin', 'jwt', jwtStrategy('admin'));
  server.auth.strategy('jwt-user', 'jwt', jwtStrategy('user'));

  /**
   * An API key refused on a binding without API key authentication: a log
   * event 1 (protocol HTTP), published once per request though both API key
   * strategies may see the key.
   */
  const apiKeyRefused = (request: Request, username: string, message: string): never => {
    const app = request.app as { apiKeyLogged?: boolean };
    if (!app.apiKeyLogged) {
      app.apiKeyLogged = true;
      bus.publish('log', { timestamp: nowNanos(), event: 1, protocol: 'HTTP', username, ip: clientIp(request), message, role: '', instance_id: instanceId });
    }
    throw Boom.unauthorized(message, 'APIKey');
  };

  /**
   * X-SERVICE-API-KEY through the login service (which publishes the log
   * event of a refused key, 2 for no such key or account and 1 for a refused
   * account, and scores the defender; a key let in is no login event: like a
   * bearer token, it comes with every request). Every refusal is 401; a key of
   * the other scope is "no credentials" for this strategy, so the next one may
   * accept it. A refusal is remembered for the request: the other API key
   * strategy answers it again without a second event or score.
   */
  server.auth.scheme('apikey', (_server: Server, options?: { scope?: number }) => ({
    authenticate: async (request: Request, h: ResponseToolkit) => {
      const header = request.headers['x-service-api-key'];
      if (!header) throw Boom.unauthorized(null, 'APIKey');
      if (bindingOf(request)?.enable_api_key_auth === false) {
        return apiKeyRefused(request, parseApiKeyHeader(String(header))?.username ?? '', 'API key authentication is disabled on this binding');
      }
      const app = request.app as { apiKeyRefusal?: Boom.Boom };
      if (app.apiKeyRefusal) throw app.apiKeyRefusal;
      const audience = options?.scope === API_KEY_SCOPE.Admin ? 'admin' : 'user';
      try {
        const out = await login.login({
          username: '',
          credential: { method: 'apikey', key: String(header) },
          ip: clientIp(request),
          protocol: 'HTTP',
          audience,
          perRequest: true,
        });
        const credentials: AdminCredentials | UserCredentials =
          audience === 'admin'
            ? { kind: 'admin', admin: admins.identity(out.admin!), apiKeyId: out.apiKeyId!, ...mfaSetup('admin', out.admin!.filters, out.admin!.filters) }
            : { kind: 'user', user: users.identity(out.user!), apiKeyId: out.apiKeyId!, ...mfaSetup('user', out.user!.filters, out.view!.filters) };
        return h.authenticated({ credentials: credentials as never });
      } catch (err) {
        if (!(err instanceof LoginRefusedError)) throw err;
        if (err.reason === 'api-key-audience') throw Boom.unauthorized(null, 'APIKey');
        app.apiKeyRefusal = Boom.unauthorized(err.message, 'APIKey');
        throw app.apiKeyRefusal;
      }
    },
  }));
  server.auth.strategy('apikey-admin', 'apikey', { scope: API_KEY_SCOPE.Admin });
  server.auth.strategy('apikey-user', 'apikey', { scope: API_KEY_SCOPE.User });

  registerWebSessionAuth(server, c, {
    clientIp,
    mfaSetup,
    remember: (request, entry) => {
      (request.app as RequestUserApp).loadedUser = entry;
    },
  });
}

/** The authenticated admin of a request (routes using ADMIN_AUTH). */
export function adminOf(request: Request): AdminCredentials {
  const c = request.auth.credentials as unknown as AdminCredentials;
  if (c?.kind !== 'admin') throw Boom.forbidden('this route is for admins');
  return c;
}

/** The authenticated user of a request (routes using USER_AUTH). */
/** What token validation leaves on request.app for the rest of the request. */
interface RequestUserApp {
  loadedUser?: CachedUser;
}

/**
 * The user of a bearer request with its role and mappings, as token
 * validation read it in this request (one statement for the token and the
 * user): a file session opened for the same request starts from it instead
 * of reading the user again. Undefined for other credentials.
 */
export function loadedUserOf(request: Request, userId: number): CachedUser | undefined {
  const loaded = (request.app as RequestUserApp).loadedUser;
  return loaded?.mappings.user.id === userId ? loaded : undefined;
}

export function userOf(request: Request): UserCredentials {
  const c = request.auth.credentials as unknown as UserCredentials;
  if (c?.kind !== 'user') throw Boom.forbidden('this route is for users');
  return c;
}

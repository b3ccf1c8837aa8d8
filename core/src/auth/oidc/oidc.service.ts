import { inject, injectable } from 'tsyringe';
import type * as oidc from 'openid-client';
import { TOKENS } from '../../tokens.js';
import type { OidcBindingConfig } from '../../config/oidc.schema.js';
import type { Logger } from '../../logger.js';
import type { EventBus } from '../../events/event-bus.js';
import { nowNanos, type IdpLoginEvent } from '../../events/event-types.js';
import { EventActionError, EventManager } from '../../event-manager/event-manager.js';
import { ipMatcher } from '../../util/ip.js';
import { AdminService } from '../../accounts/admin.service.js';
import { UserAuthService, loginRefusal } from '../user-auth.service.js';
import { TokenService, type IssuedToken } from '../token.service.js';
import { OidcStateStore, type PendingOidcLogin } from './oidc-state.service.js';
import { claimAt, customFields, loginKind, roleValues, type OidcLoginKind } from './oidc-claims.js';
import { AccountStatus } from '../../accounts/account-numbers.js';
import { lazyModule } from '../../sdk/lazy-module.js';

/** openid-client (with oauth4webapi and jose), imported when an OIDC login first starts. */
const openidClient = lazyModule<typeof oidc>(() => import('openid-client'));

export const OIDC_CALLBACK_PATH = '/api/v2/oidc/callback';

/** A refused OIDC login: the HTTP status and the message the client may read. */
export class OidcLoginError extends Error {
  /** Set on the refusal of a login started with `web`: whose pages the browser goes back to with the reason. */
  web?: OidcLoginKind;

  constructor(
    readonly status: 400 | 401 | 403 | 404 | 502,
    message: string,
  ) {
    super(message);
    this.name = 'OidcLoginError';
  }
}

/** Query of the callback as the identity provider sends it. */
export interface OidcCallbackQuery {
  state: string;
  code?: string;
  error?: string;
}

const clientKey = (o: OidcBindingConfig) => `${o.config_url} ${o.client_id}`;
const callbackUrl = (o: OidcBindingConfig) => new URL(o.redirect_base_url.replace(/\/+$/, '') + OIDC_CALLBACK_PATH);

/** openid-client failures that mean the provider could not be reached or answered nonsense. */
const GATEWAY_CODES = new Set(['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_JSON', 'OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_INVALID_SERVER_METADATA']);

/**
 * OpenID Connect authorization-code login with PKCE (docs/oidc.md): builds
 * the authorization request, and on the callback exchanges the code,
 * validates the ID token (signature with the provider's JWKS, iss, aud, exp,
 * nonce), maps the claims to an admin or user login, runs the trigger-7 sync
 * rules (which may refuse the login or provision the account), publishes the
 * idp-login event and issues a Ferry token.
 */
/** An OIDC login started with `web`: the account a web session is to be opened for (http/routes/oidc.ts), a user's or an admin's. */
export interface OidcWebLogin {
  web: { kind: OidcLoginKind; id: number; username: string };
}

@injectable()
export class OidcService {
  private readonly configs = new Map<string, Promise<oidc.Configuration>>();
  private readonly log: Logger;

  constructor(
    @inject(TOKENS.Logger) logger: Logger,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
    @inject(TOKENS.EventManager) private readonly events: EventManager,
    @inject(OidcStateStore) private readonly states: OidcStateStore,
    @inject(AdminService) private readonly admins: AdminService,
    @inject(UserAuthService) private readonly users: UserAuthService,
    @inject(TokenService) private readonly tokens: TokenService,
  ) {
    this.log = logger.child({ component: 'oidc' });
  }

  /** The provider's configuration, discovered once per issuer and client (a failed discovery is retried next time). */
  private configuration(o: OidcBindingConfig): Promise<oidc.Configuration> {
    const key = JSON.stringify([o.config_url, o.client_id, o.client_secret, o.allow_insecure_http, o.insecure_skip_signature_check]);
    let p = this.configs.get(key);
    if (!p) {
      p = openidClient.load().then((client) => {
        const execute: ((c: oidc.Configuration) => void)[] = [];
        if (o.allow_insecure_http) execute.push(client.allowInsecureRequests);
        if (!o.insecure_skip_signature_check) execute.push(client.enableNonRepudiationChecks);
        const auth = o.client_secret ? client.ClientSecretBasic(o.client_secret) : client.None();
        return client.discovery(new URL(o.config_url), o.client_id, undefined, auth, { execute, timeout: 15 });
      });
      p.catch((err: unknown) => {
        this.configs.delete(key);
        this.log.warn({ err: errText(err), issuer: o.config_url }, 'OIDC discovery failed');
      });
      this.configs.set(key, p);
    }
    return p.catch(() => {
      throw new OidcLoginError(502, `the identity provider at ${o.config_url} could not be reached or its discovery document is invalid`);
    });
  }

  /**
   * Starts a login: stores state, nonce and PKCE verifier, returns the
   * provider's authorization URL. `web`: the callback opens a web session
   * (a user's for the web client, an admin's for the web admin) instead of
   * answering a token.
   */
  async start(o: OidcBindingConfig, target: OidcLoginKind, opts: { web?: boolean } = {}): Promise<URL> {
    const cfg = await this.configuration(o);
    const client = await openidClient.load();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    await this.states.put(state, {
      nonce,
      pkce_verifier: verifier,
      target,
      client: clientKey(o),
      expires_at: Date.now() + o.state_ttl * 1000,
      ...(opts.web ? { web: true as const } : {}),
    });
    return client.buildAuthorizationUrl(cfg, {
      redirect_uri: callbackUrl(o).href,
      scope: o.scopes.join(' '),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * Finishes a login from the callback's query string: the token, or for a
   * login started with `web` the account a web session is opened for (the
   * caller opens it); throws OidcLoginError when refused.
   */
  async finish(o: OidcBindingConfig, query: OidcCallbackQuery, rawSearch: string, ip: string): Promise<IssuedToken | OidcWebLogin> {
    const pending = await this.states.take(query.state);
    if (!pending) throw new OidcLoginError(400, 'unknown, expired or already used OIDC state: start the login again');
    if (pending.client !== clientKey(o)) throw new OidcLoginError(400, 'this OIDC login was started for another identity provider or client');
    try {
      return await this.finishPending(o, pending, query, rawSearch, ip);
    } catch (err) {
      if (err instanceof OidcLoginError && pending.web) err.web = pending.target;
      throw err;
    }
  }

  private async finishPending(
    o: OidcBindingConfig,
    pending: PendingOidcLogin,
    query: OidcCallbackQuery,
    rawSearch: string,
    ip: string,
  ): Promise<IssuedToken | OidcWebLogin> {
    if (query.error) throw new OidcLoginError(401, `the identity provider refused the login: ${query.error}`);
    if (!query.code) throw new OidcLoginError(400, '"code" is required');

    const cfg = await this.configuration(o);
    const client = await openidClient.load();
    const current = callbackUrl(o);
    current.search = rawSearch;
    let claims: Record<string, unknown>;
    try {
      const res = await client.authorizationCodeGrant(cfg, current, {
        pkceCodeVerifier: pending.pkce_verifier,
        expectedState: query.state,
        expectedNonce: pending.nonce,
      });
      claims = (res.claims() ?? {}) as Record<string, unknown>;
      // claims the provider serves only from its userinfo endpoint complete the ID token's (which win: they are signed)
      if (cfg.serverMetadata().userinfo_endpoint && typeof claims.sub === 'string') {
        const info = (await client.fetchUserInfo(cfg, res.access_token, claims.sub)) as Record<string, unknown>;
        claims = { ...info, ...claims };
      }
    } catch (err) {
      throw this.grantError(err, o);
    }

    const username = claimAt(claims, o.username_field);
    if (typeof username !== 'string' || !username) {
      throw new OidcLoginError(401, `the ID token has no "${o.username_field}" claim (httpd binding oidc.username_field)`);
    }
    const kind = loginKind(o, claims, pending.target);
    if (pending.target !== kind) {
      throw new OidcLoginError(
        403,
        `the identity provider's role claim makes "${username}" ${kind === 'admin' ? 'an admin' : 'a user'}, not ${pending.target === 'admin' ? 'an admin' : 'a user'}`,
      );
    }
    const email = claimAt(claims, 'email');
    const event: IdpLoginEvent = {
      timestamp: nowNanos(),
      kind,
      username,
      email: typeof email === 'string' ? email : undefined,
      role: roleValues(claims, o.role_field).join(','),
      ip,
      fields: customFields(claims, o.custom_fields),
      instance_id: this.instanceId,
    };
    try {
      await this.events.runIdpLoginSync(event);
    } catch (err) {
      if (err instanceof EventActionError) {
        this.log.warn({ err: err.message, username, kind }, 'OIDC login aborted by an event rule');
        this.refuse(1, username, ip, 403, `login ${err.clientMessage}`);
      }
      throw err;
    }
    this.bus.publish('idp-login', event);
    return kind === 'admin' ? this.adminToken(username, ip, pending.web === true) : this.userToken(username, ip, pending.web === true);
  }

  private async adminToken(username: string, ip: string, web: boolean): Promise<IssuedToken | OidcWebLogin> {
    const admin = await this.admins.findByUsername(username);
    if (!admin) this.refuse(2, username, ip, 401, `no admin "${username}" exists in Ferry`);
    if (admin.status !== AccountStatus.Enabled) this.refuse(1, username, ip, 403, `the admin "${username}" is disabled`);
    const allow = admin.filters.allow_list ?? [];
    if (allow.length && !ipMatcher(allow)(ip)) this.refuse(1, username, ip, 403, `login from ${ip} is not allowed for this admin`);
    await this.admins.touchLogin(admin.id);
    this.logLogin(username, ip, 'admin OIDC login', admin.role?.name ?? '');
    if (web) return { web: { kind: 'admin', id: admin.id, username: admin.username } };
    return this.tokens.issue('admin', admin.username, admin.id, { idp: true });
  }

  private async userToken(username: string, ip: string, web: boolean): Promise<IssuedToken | OidcWebLogin> {
    const user = await this.users.findByUsername(username);
    if (!user) this.refuse(2, username, ip, 401, `no user "${username}" exists in Ferry`);
    const refusal = loginRefusal(await this.users.loginView(user), ip, 'OIDC');
    if (refusal) this.refuse(1, username, ip, 403, refusal);
    await this.users.touchLogin(user.id);
    this.logLogin(username, ip, 'user OIDC login', user.role?.name ?? '');
    if (web) return { web: { kind: 'user', id: user.id, username: user.username } };
    return this.tokens.issue('user', user.username, user.id, { idp: true });
  }

  /** A refused login of a known username: log event 1 (refused) or 2 (no such account), then the client's error. */
  private refuse(event: 1 | 2, username: string, ip: string, status: 401 | 403, message: string): never {
    this.bus.publish('log', { timestamp: nowNanos(), event, protocol: 'OIDC', username, ip, message, role: '', instance_id: this.instanceId });
    throw new OidcLoginError(status, message);
  }

  private logLogin(username: string, ip: string, message: string, role: string): void {
    this.bus.publish('log', { timestamp: nowNanos(), event: 5, protocol: 'OIDC', username, ip, message, role, instance_id: this.instanceId });
  }

  /** Maps an openid-client failure to a client answer (the provider's own error texts are codes, not secrets). */
  private grantError(err: unknown, o: OidcBindingConfig): OidcLoginError {
    // loaded: the grant that failed came from it
    const client = openidClient.loaded();
    if (client && err instanceof client.AuthorizationResponseError) return new OidcLoginError(401, `the identity provider refused the login: ${err.error}`);
    if (client && err instanceof client.ResponseBodyError) {
      return new OidcLoginError(401, `the identity provider refused the code exchange: ${err.error}`);
    }
    const code = (err as { code?: string }).code;
    this.log.warn({ err: errText(err), code, issuer: o.config_url }, 'OIDC code exchange failed');
    if (!client || !(err instanceof client.ClientError) || !code || GATEWAY_CODES.has(code)) {
      return new OidcLoginError(502, `the identity provider at ${o.config_url} could not be reached or answered an invalid response`);
    }
    return new OidcLoginError(401, `the identity provider's response failed validation: ${errText(err)}`);
  }
}

/** An error's message with the messages of its causes (oauth4webapi keeps the precise reason in `cause`). */
function errText(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let i = 0; i < 3 && cur instanceof Error; i++) {
    if (!parts.includes(cur.message)) parts.push(cur.message);
    cur = cur.cause;
  }
  return parts.join(': ') || String(err);
}

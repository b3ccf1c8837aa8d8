import { inject, Lifecycle, scoped } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import { ErrorKind, LoginRefusedError, type LoginRefusalReason } from '../errors.js';
import type { Admin, Role, User } from '../data/entities/index.js';
import type { EventBus } from '../events/event-bus.js';
import { nowNanos, type LogEventType } from '../events/event-types.js';
import { AdminService } from '../accounts/admin.service.js';
import { ApiKeyService, API_KEY_SCOPE, parseApiKeyHeader } from '../accounts/api-key.service.js';
import { accountRefusalOf } from '../accounts/account-access.js';
import { AccountStatus } from '../accounts/account-numbers.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { DefenderService, type DefenderEventKind } from '../security/defender.service.js';
import { IpListService } from '../security/ip-list.service.js';
import { RateLimiterService } from '../security/rate-limiter.service.js';
import { ipMatcher } from '../util/ip.js';
import { loginProtocolOf, Protocol, type LoginProtocol } from '../sdk/protocols.js';
import type {
  LoginAccount,
  LoginCredential,
  LoginGate,
  LoginMethod,
  LoginRequest,
  LoginResult,
  ShareLoginRequest,
  ShareLoginResult,
  ShareLogins,
} from '../sdk/login.js';
import { UserAuthService } from './user-auth.service.js';
import { TwoFactorService, type AccountKind } from './two-factor.service.js';
import { credentialsProblem } from './basic-header.js';
import { matchingPublicKey } from './public-keys.js';

/** What a login let in, for the core's own front-ends (the REST API's strategies build their credentials from it). */
export interface LoginOutcome {
  result: LoginResult;
  /** The admin let in (read-only: never flush it). */
  admin?: Admin;
  /** The user let in (read-only), with its login view (groups merged). */
  user?: User;
  view?: EffectiveUser;
  /** The API key that let the account in. */
  apiKeyId?: string;
  /**
   * The account must set up two-factor authentication before using the
   * REST API (HTTP logins only: other protocols refuse such a login).
   */
  mfaSetupRequired?: string;
}

type Refusable = typeof ErrorKind.Unauthorized | typeof ErrorKind.Forbidden | typeof ErrorKind.TooManyRequests;
const refused = (kind: Refusable, reason: LoginRefusalReason, message: string, o?: { logMessage?: string; retryAfterSeconds?: number }) =>
  new LoginRefusedError(kind, reason, message, o);

/** An admin's allow list lets `ip` in (an empty list lets every address in). */
export function adminAllowedFrom(admin: Admin, ip: string): boolean {
  const list = admin.filters.allow_list ?? [];
  return list.length === 0 || ipMatcher(list)(ip);
}

const roleOf = (a: Admin | User): string => (a.role ? (a.role as Role).name : '');

/** What the step names as its login method, for denied_login_methods. */
function stepMethod(kind: 'password' | 'keyboard-interactive', passed: LoginRequest['passed']): LoginMethod {
  if (kind === 'password' && passed?.includes('TLSCertificate')) return 'TLSCertificate+password';
  return passed?.includes('publickey') ? `publickey+${kind}` : kind;
}

/**
 * The login service: one call for every credential kind a front-end can
 * present (password with its second factor, the second factor alone,
 * keyboard-interactive answers, an SSH public key, an API key), running every
 * check a login runs: the connection checks (IP lists, defender ban, rate
 * limit; the REST API runs them itself on each request, see
 * `LoginRequest.perRequest`), the password (with the password cache), the
 * account's state (status, expiration, allowed and denied addresses,
 * denied_protocols as the protocol's login protocol, denied_login_methods),
 * the second factor where the account's TOTP names the protocol, login
 * events (protocol of the request) and the defender's scores (score_valid for
 * a refused login of an existing account, score_invalid for an unknown one).
 *
 * A refusal is a LoginRefusedError: its message is the client's, its
 * `reason` a word for front-ends, its `logMessage` what the log event says.
 */
@scoped(Lifecycle.ContainerScoped)
export class LoginService implements LoginGate {
  constructor(
    @inject(AdminService) private readonly admins: AdminService,
    @inject(UserAuthService) private readonly users: UserAuthService,
    @inject(ApiKeyService) private readonly apiKeys: ApiKeyService,
    @inject(TwoFactorService) private readonly twoFactor: TwoFactorService,
    @inject(DefenderService) private readonly defender: DefenderService,
    @inject(RateLimiterService) private readonly limiter: RateLimiterService,
    @inject(IpListService) private readonly ipLists: IpListService,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
    @inject(TOKENS.ShareLogins) private readonly shares: ShareLogins,
  ) {}

  async authenticate(request: LoginRequest): Promise<LoginResult> {
    return (await this.login(request)).result;
  }

  async keyboardInteractivePrompts(username: string, protocol: Protocol): Promise<{ prompt: string; echo: boolean }[]> {
    const prompts = [{ prompt: 'Password: ', echo: false }];
    const user = await this.users.findByUsername(username);
    if (user && this.twoFactor.applies('user', user, protocol)) prompts.push({ prompt: 'Authentication code: ', echo: false });
    return prompts;
  }

  /** A share login: the connection checks (IP lists, defender ban, rate limit), then the share's own (auth/share-login.ts). */
  async authenticateShare(request: ShareLoginRequest): Promise<ShareLoginResult> {
    const loginProtocol = loginProtocolOf(request.protocol);
    if (!loginProtocol) throw refused(ErrorKind.Forbidden, 'protocol-denied', `nobody logs in over ${request.protocol}`);
    await this.admit(request, loginProtocol, request.credential !== undefined);
    return this.shares.login(request);
  }

  /** authenticate() with what the login let in (see LoginOutcome). */
  async login(req: LoginRequest): Promise<LoginOutcome> {
    const loginProtocol = loginProtocolOf(req.protocol);
    if (!loginProtocol) throw refused(ErrorKind.Forbidden, 'protocol-denied', `nobody logs in over ${req.protocol}`);
    const cred = req.credential;
    const query = cred.method === 'publickey' && !cred.signed;
    if (!req.perRequest) await this.admit(req, loginProtocol, !query);
    const problem = malformed(req.username, cred);
    if (problem) {
      if (!query) await this.score(req, 'invalid');
      throw refused(ErrorKind.Unauthorized, 'malformed', `invalid credentials: ${problem}`);
    }
    switch (cred.method) {
      case 'password':
        if (cred.otpAppended && cred.otp === undefined) return this.passwordLogin(req, ...(await this.appendedCode(req, cred.password)), 'password');
        return this.passwordLogin(req, cred.password, cred.otp, 'password');
      case 'keyboard-interactive':
        return this.passwordLogin(req, cred.answers[0] ?? '', cred.answers[1], 'keyboard-interactive');
      case 'otp':
        return this.secondFactorStep(req, cred.code);
      case 'publickey':
        return this.publicKeyLogin(req, cred);
      case 'tls-certificate':
        return this.certificateLogin(req, cred.commonName);
      case 'apikey':
        return this.apiKeyLogin(req, cred.key);
    }
  }

  /** The connection checks of a front-end that does not run them itself: IP lists, defender ban, rate limit (scope `token`). */
  private async admit(req: Pick<LoginRequest, 'ip' | 'protocol'>, loginProtocol: LoginProtocol, rateLimited: boolean): Promise<void> {
    const listed = await this.ipLists.connectionRefusal(req.ip, loginProtocol);
    if (listed) throw refused(ErrorKind.Forbidden, 'ip-not-allowed', listed);
    const banned = await this.defender.banRefusal(req.ip, req.protocol);
    if (banned) throw refused(ErrorKind.Forbidden, 'banned', banned);
    if (!rateLimited) return;
    const limited = await this.limiter.check('token', req.ip, loginProtocol);
    if (!limited) return;
    if (limited.score) await this.score(req, 'limit_exceeded');
    const who = limited.limiter === 'host' ? `from ${req.ip}` : 'from all clients';
    throw refused(ErrorKind.TooManyRequests, 'rate-limited', `too many login attempts ${who}: retry in ${limited.retryAfterSeconds} s`, {
      retryAfterSeconds: limited.retryAfterSeconds,
    });
  }

  private log(req: LoginRequest, event: LogEventType, username: string, message: string, role = ''): void {
    this.bus.publish('log', { timestamp: nowNanos(), event, protocol: req.protocol, username, ip: req.ip, message, role, instance_id: this.instanceId });
  }

  private async score(req: Pick<LoginRequest, 'ip' | 'protocol'>, kind: DefenderEventKind): Promise<void> {
    await this.defender.addEvent(req.ip, kind, req.protocol);
  }

  /** A refused login: log event 1 (existing account) or 2 (none), the defender's score when given, then the refusal. */
  private async refuse(
    req: LoginRequest,
    o: { event: 1 | 2; username?: string; role?: string; score?: DefenderEventKind },
    err: LoginRefusedError,
  ): Promise<never> {
    this.log(req, o.event, o.username ?? req.username, err.logMessage, o.role);
    if (o.score) await this.score(req, o.score);
    throw err;
  }

  private async passwordLogin(req: LoginRequest, password: string, otp: string | undefined, kind: 'password' | 'keyboard-interactive'): Promise<LoginOutcome> {
    // keyboard-interactive asks the code in the same round: a missing one is refused
    const later = kind === 'password' && req.secondFactorLater === true;
    if (req.audience === 'admin') {
      const admin = await this.admins.checkPassword(req.username, password);
      if (!admin) {
        const exists = !!(await this.admins.findByUsername(req.username));
        return this.refuse(
          req,
          { event: exists ? 1 : 2, score: exists ? 'valid' : 'invalid' },
          refused(ErrorKind.Unauthorized, 'bad-credentials', 'invalid credentials', { logMessage: 'invalid admin credentials' }),
        );
      }
      await this.adminState(req, admin, 'password');
      return this.finish(req, 'admin', admin, undefined, kind, await this.secondFactor(req, 'admin', admin, otp, later));
    }
    const login = await this.users.checkLogin(req.username, password);
    if (!login) {
      const exists = !!(await this.users.findByUsername(req.username));
      return this.refuse(
        req,
        { event: exists ? 1 : 2, score: exists ? 'valid' : 'invalid' },
        refused(ErrorKind.Unauthorized, 'bad-credentials', 'invalid credentials', { logMessage: 'invalid user credentials' }),
      );
    }
    const method = stepMethod(kind, req.passed);
    await this.userState(req, login.view, method);
    return this.finish(req, 'user', login.user, login.view, method, await this.secondFactor(req, 'user', login.user, otp, later));
  }

  /**
   * A password that may end with the TOTP code (LoginCredential
   * `otpAppended`): split when the user's second factor applies to the
   * protocol and the password ends with 6 digits after at least one other
   * character; otherwise the whole is the password.
   */
  private async appendedCode(req: LoginRequest, sent: string): Promise<[string, string | undefined]> {
    if (req.audience === 'admin') return [sent, undefined];
    const user = await this.users.findByUsername(req.username);
    const m = /^([\s\S]+)(\d{6})$/.exec(sent);
    if (!user || !m || !this.twoFactor.applies('user', user, req.protocol)) return [sent, undefined];
    return [m[1]!, m[2]!];
  }

  /** The `otp` step after a password step answered `second-factor`. */
  private async secondFactorStep(req: LoginRequest, code: string): Promise<LoginOutcome> {
    const step = req.passed?.find((s) => s === 'password' || s === 'keyboard-interactive');
    if (!step) throw refused(ErrorKind.Unauthorized, 'bad-credentials', 'a second factor alone is no login: send the password first');
    if (req.audience === 'admin') {
      const admin = await this.admins.findForAuth(req.username);
      if (!admin) throw refused(ErrorKind.Unauthorized, 'bad-credentials', 'invalid credentials');
      await this.adminState(req, admin, 'password');
      return this.finish(req, 'admin', admin, undefined, 'password', await this.secondFactor(req, 'admin', admin, code, false));
    }
    const user = await this.users.findByUsername(req.username);
    if (!user) throw refused(ErrorKind.Unauthorized, 'bad-credentials', 'invalid credentials');
    const view = await this.users.loginView(user);
    const method = stepMethod(step, req.passed);
    await this.userState(req, view, method);
    return this.finish(req, 'user', user, view, method, await this.secondFactor(req, 'user', user, code, false));
  }

  /** A verified TLS client certificate (LoginCredential `tls-certificate`). */
  private async certificateLogin(req: LoginRequest, commonName: string): Promise<LoginOutcome> {
    const user = req.audience === 'admin' || commonName !== req.username ? null : await this.users.findByUsername(req.username);
    const view = user ? await this.users.loginView(user) : null;
    if (!user || !view || (view.filters as { tls_username?: string }).tls_username !== 'CommonName') {
      throw refused(ErrorKind.Unauthorized, 'certificate-not-accepted', 'the client certificate does not log in this account');
    }
    await this.userState(req, view, null);
    // a certificate is one factor: an account whose second factor applies logs in with the password and its code
    const alone = !this.methodDenied(view, 'TLSCertificate', req.protocol) && !this.twoFactor.applies('user', user, req.protocol);
    if (alone) return this.finish(req, 'user', user, view, 'TLSCertificate', 'none');
    if (!this.methodDenied(view, 'TLSCertificate+password', req.protocol)) return { result: { status: 'partial', next: ['password'] } };
    return this.refuse(req, { event: 1 }, this.methodRefusal('TLSCertificate'));
  }

  private async publicKeyLogin(req: LoginRequest, cred: Extract<LoginCredential, { method: 'publickey' }>): Promise<LoginOutcome> {
    const bad = (logMessage: string) => refused(ErrorKind.Unauthorized, 'bad-credentials', 'invalid credentials', { logMessage });
    // admins have no keys
    const user = req.audience === 'admin' ? null : await this.users.findByUsername(req.username);
    const key = user ? await matchingPublicKey(user.public_keys ?? [], cred.key) : null;
    if (!cred.signed) {
      // asking whether a key would do is no login attempt: clients offer their keys one after the other
      if (!key) throw bad('public key not accepted');
      return { result: { status: 'key-accepted' } };
    }
    if (!user) return this.refuse(req, { event: 2, score: 'invalid' }, bad('invalid public key: no such user'));
    if (!key || key.verify(cred.signed.data, cred.signed.signature, cred.signed.hashAlgo) !== true) {
      return this.refuse(req, { event: 1, score: 'valid' }, bad('invalid public key or signature'));
    }
    const view = await this.users.loginView(user);
    await this.userState(req, view, null);
    if (!this.methodDenied(view, 'publickey', req.protocol)) return this.finish(req, 'user', user, view, 'publickey', 'none');
    // a multi-step login: the key, then a password or keyboard-interactive answers (SSH)
    const next = (['password', 'keyboard-interactive'] as const).filter((m) => !this.methodDenied(view, `publickey+${m}`, req.protocol));
    if (next.length) return { result: { status: 'partial', next } };
    return this.refuse(req, { event: 1 }, this.methodRefusal('publickey'));
  }

  private async apiKeyLogin(req: LoginRequest, header: string): Promise<LoginOutcome> {
    const named = parseApiKeyHeader(header)?.username ?? '';
    const invalid = refused(ErrorKind.Unauthorized, 'bad-credentials', 'invalid API key');
    const found = await this.apiKeys.authenticate(header);
    if (!found) return this.refuse(req, { event: 2, username: named, score: 'invalid' }, invalid);
    const admins = req.audience === 'admin';
    // a key of the other audience: no credentials for this one (the REST API then tries its other strategy)
    if (found.key.scope !== (admins ? API_KEY_SCOPE.Admin : API_KEY_SCOPE.User)) {
      throw refused(ErrorKind.Unauthorized, 'api-key-audience', `this API key is not for ${admins ? 'admins' : 'users'}`);
    }
    const bound = admins ? found.key.admin : found.key.user;
    if (bound && found.username) {
      return this.refuse(
        req,
        { event: 1, username: bound.username },
        refused(ErrorKind.Unauthorized, 'api-key-bound', `this API key is bound to ${admins ? 'an admin' : 'a user'}`),
      );
    }
    const username = bound?.username ?? found.username ?? '';
    const notAllowed = (kind: AccountKind) => refused(ErrorKind.Forbidden, 'method-denied', `API key authentication is not enabled for this ${kind}`);
    if (admins) {
      const admin = username ? await this.admins.findForAuth(username) : null;
      if (!admin || admin.status !== AccountStatus.Enabled) {
        return this.refuse(req, { event: admin ? 1 : 2, username, role: admin ? roleOf(admin) : '', score: admin ? 'valid' : 'invalid' }, invalid);
      }
      const role = roleOf(admin);
      if (!admin.filters.allow_api_key_auth) return this.refuse(req, { event: 1, username: admin.username, role }, notAllowed('admin'));
      if (!adminAllowedFrom(admin, req.ip)) {
        return this.refuse(
          req,
          { event: 1, username: admin.username, role },
          refused(ErrorKind.Forbidden, 'ip-not-allowed', `access from ${req.ip} is not allowed`),
        );
      }
      return { ...(await this.finish(req, 'admin', admin, undefined, 'apikey', 'none')), apiKeyId: found.key.key_id };
    }
    const user = username ? await this.users.findByUsername(username) : null;
    const view = user ? await this.users.loginView(user) : null;
    if (!user || !view || accountRefusalOf(view, req.ip, req.protocol)) {
      return this.refuse(req, { event: user ? 1 : 2, username, role: user ? roleOf(user) : '', score: user ? 'valid' : 'invalid' }, invalid);
    }
    if (!(user.filters as { allow_api_key_auth?: boolean }).allow_api_key_auth) {
      return this.refuse(req, { event: 1, username: user.username, role: roleOf(user) }, notAllowed('user'));
    }
    return { ...(await this.finish(req, 'user', user, view, 'apikey', 'none')), apiKeyId: found.key.key_id };
  }

  /** An admin whose password was right: enabled, password login allowed, from an allowed address. */
  private async adminState(req: LoginRequest, admin: Admin, method: 'password'): Promise<void> {
    if (admin.status !== AccountStatus.Enabled) {
      await this.refuse(
        req,
        { event: 1, score: 'valid' },
        refused(ErrorKind.Unauthorized, 'disabled', 'the account is disabled', { logMessage: 'login refused: the account is disabled' }),
      );
    }
    if (method === 'password' && admin.filters.disable_password_auth) {
      const message = 'password login is disabled for this admin';
      await this.refuse(req, { event: 1 }, refused(ErrorKind.Forbidden, 'method-denied', message, { logMessage: `login refused: ${message}` }));
    }
    if (!adminAllowedFrom(admin, req.ip)) {
      const message = `login from ${req.ip} is not allowed for this admin`;
      await this.refuse(req, { event: 1 }, refused(ErrorKind.Forbidden, 'ip-not-allowed', message, { logMessage: `login refused: ${message}` }));
    }
  }

  /**
   * A user whose credential was right: its state (status, expiration,
   * protocol, addresses; a refusal scores score_valid), then the login
   * method of the step (`null`: checked by the caller).
   */
  private async userState(req: LoginRequest, view: EffectiveUser, method: LoginMethod | null): Promise<void> {
    const refusal = accountRefusalOf(view, req.ip, req.protocol);
    if (refusal) {
      const kind = refusal.reason === 'disabled' || refusal.reason === 'expired' ? ErrorKind.Unauthorized : ErrorKind.Forbidden;
      await this.refuse(req, { event: 1, score: 'valid' }, refused(kind, refusal.reason, refusal.message));
    }
    if (method && this.methodDenied(view, method, req.protocol)) await this.refuse(req, { event: 1 }, this.methodRefusal(method));
  }

  /** Whether the user's denied_login_methods refuse `method` over `protocol` (`password-over-SSH` denies passwords on SSH). */
  private methodDenied(view: EffectiveUser, method: LoginMethod, protocol: Protocol): boolean {
    const denied = (view.filters as { denied_login_methods?: string[] }).denied_login_methods ?? [];
    if (denied.includes(method)) return true;
    return method === 'password' && loginProtocolOf(protocol) === 'SSH' && denied.includes('password-over-SSH');
  }

  private methodRefusal(method: LoginMethod): LoginRefusedError {
    const message = `login method ${method} is not allowed for this account`;
    return refused(ErrorKind.Forbidden, 'method-denied', message, { logMessage: `login refused: ${message}` });
  }

  /**
   * The second factor of a password step: 'pending' when it applies, was
   * not sent and the front-end asks for it in a following step; a wrong,
   * replayed or missing one is a refused login scoring score_valid.
   */
  private async secondFactor(
    req: LoginRequest,
    kind: AccountKind,
    account: Admin | User,
    code: string | undefined,
    later: boolean,
  ): Promise<'none' | 'totp' | 'recovery' | 'pending'> {
    if (!code && later && this.twoFactor.applies(kind, account, req.protocol)) return 'pending';
    try {
      return await this.twoFactor.checkLogin(kind, account, code, req.protocol);
    } catch (err) {
      if (!(err instanceof LoginRefusedError)) throw err;
      return this.refuse(
        req,
        { event: 1, score: 'valid' },
        refused(ErrorKind.Unauthorized, err.reason, err.message, { logMessage: `login refused: ${err.message}` }),
      );
    }
  }

  /**
   * The end of a login whose checks passed: the two-factor setup the account
   * still needs (HTTP: told to the REST API; elsewhere a refusal), then log
   * event 5, unless an API key comes with every request.
   */
  private async finish(
    req: LoginRequest,
    kind: AccountKind,
    account: Admin | User,
    view: EffectiveUser | undefined,
    method: LoginMethod | 'apikey',
    secondFactor: 'none' | 'totp' | 'recovery' | 'pending',
  ): Promise<LoginOutcome> {
    if (secondFactor === 'pending') return { result: { status: 'second-factor' } };
    const setup = this.twoFactor.setupRequirement(kind, account.filters, view?.filters ?? account.filters, req.protocol);
    if (setup && loginProtocolOf(req.protocol) !== Protocol.HTTP) {
      const message = `two-factor authentication is required for this account on ${loginProtocolOf(req.protocol)}: set it up with the web client or the REST API first`;
      await this.refuse(req, { event: 1 }, refused(ErrorKind.Forbidden, 'second-factor-setup-required', message, { logMessage: `login refused: ${message}` }));
    }
    const role = roleOf(account);
    if (!(method === 'apikey' && req.perRequest)) {
      const how = method === 'password' ? '' : method === 'apikey' ? ' with an API key' : ` (${method})`;
      this.log(req, 5, account.username, `${kind} login${how}`, role);
    }
    const loginAccount: LoginAccount = { kind, id: account.id, username: account.username, role };
    return {
      result: { status: 'ok', account: loginAccount, method, secondFactor },
      ...(kind === 'admin' ? { admin: account as Admin } : { user: account as User, view }),
      ...(setup ? { mfaSetupRequired: setup } : {}),
    };
  }
}

/** The secrets a credential carries, for the well-formedness check. */
function secretsOf(cred: LoginCredential): string[] {
  switch (cred.method) {
    case 'password':
      return [cred.password, cred.otp ?? ''];
    case 'keyboard-interactive':
      return cred.answers;
    case 'otp':
      return [cred.code];
    default:
      return [];
  }
}

/** Why the username or a secret of the credential cannot be any account's, or null (API keys are checked by their own format). */
function malformed(username: string, cred: LoginCredential): string | null {
  if (cred.method === 'apikey') return null;
  for (const secret of ['', ...secretsOf(cred)]) {
    const problem = credentialsProblem(username, secret);
    if (problem) return problem;
  }
  return null;
}

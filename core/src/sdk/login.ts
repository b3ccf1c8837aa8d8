/**
 * The login contract front-ends use (SFTP, WebDAV, FTP, the web client, the
 * REST API's own strategies): one call for every credential kind, with
 * every check a login runs. Implemented by the core's login service
 * (`core/src/auth/login.service.ts`); service plugins reach it as
 * `ServiceHost.login`.
 */
import type { Protocol } from './protocols.js';

/**
 * The login methods an account's `filters.denied_login_methods` may deny
 * (LoginMethods of reference.yaml): `password` denies passwords on every
 * protocol, `password-over-SSH` only on SSH (SFTP, SCP); the `publickey+...`
 * methods are the two steps of a multi-step SSH login.
 */
export const LOGIN_METHODS = Object.freeze([
  'publickey',
  'password',
  'password-over-SSH',
  'keyboard-interactive',
  'publickey+password',
  'publickey+keyboard-interactive',
  'TLSCertificate',
  'TLSCertificate+password',
] as const);
export type LoginMethod = (typeof LOGIN_METHODS)[number];

/** A step of a login a connection already passed (see `LoginRequest.passed`). */
export type LoginStep = 'publickey' | 'password' | 'keyboard-interactive' | 'TLSCertificate';

/** What the client presented. */
export type LoginCredential =
  /** A password, with the second factor (TOTP code or recovery code) when the client sends it in the same step. */
  | {
      method: 'password';
      password: string;
      otp?: string;
      /**
       * The client sends its one-time code at the end of the password (FTP,
       * whose login has one step): when the account's second factor applies
       * to the protocol, the last 6 characters, all digits, are taken as the
       * TOTP code. A recovery code cannot be sent this way.
       */
      otpAppended?: boolean;
    }
  /**
   * An SSH public key: `key` is the public key in the SSH wire format (or an
   * OpenSSH `authorized_keys` line). Without `signed`, the client only asks
   * whether the key would be accepted (nothing is logged as a login); with
   * it, `signature` must verify over `data` with the key.
   */
  | { method: 'publickey'; algo?: string; key: Buffer | string; signed?: { data: Buffer; signature: Buffer; hashAlgo?: string } }
  /** Answers to the prompts of `LoginGate.keyboardInteractivePrompts`, in their order. */
  | { method: 'keyboard-interactive'; answers: string[] }
  /**
   * A TLS client certificate the front-end verified against its binding's
   * certificate authorities (FTPS): its subject's common name. It logs in
   * an account whose `filters.tls_username` is `CommonName` and whose
   * username is that name; `TLSCertificate` logs in alone,
   * `TLSCertificate+password` answers `partial` (then the password step
   * with `passed: ['TLSCertificate']`). An account that does not take the
   * certificate is refused with `certificate-not-accepted`, without a
   * login event or a defender score (the client then logs in otherwise).
   */
  | { method: 'tls-certificate'; commonName: string }
  /** An API key as sent in X-SERVICE-API-KEY (`key` or `key.username`). */
  | { method: 'apikey'; key: string }
  /** The second factor alone, after a step that asked for it (`LoginResult.status === 'second-factor'`). */
  | { method: 'otp'; code: string };

export interface LoginRequest {
  /** The account's username. */
  username: string;
  credential: LoginCredential;
  /** The client's address. */
  ip: string;
  /** The protocol of the front-end (SFTP, SCP, SSH, FTP, DAV, HTTP, ...): checked as its login protocol. */
  protocol: Protocol;
  /**
   * Steps this connection already passed: `['publickey']` for the second
   * step of a multi-step SSH login (after `partial`), `['password']` (or
   * `['keyboard-interactive']`) for the `otp` step after `second-factor`.
   * The front-end vouches for them.
   */
  passed?: readonly LoginStep[];
  /** Users (default) or admins. */
  audience?: 'user' | 'admin';
  /**
   * The front-end can ask for the second factor in a following `otp` step:
   * a password without its code then answers `second-factor` instead of
   * being refused (SSH, FTP). Without it a missing code is a refusal.
   */
  secondFactorLater?: boolean;
  /**
   * Every request of the front-end carries its credentials and was admitted
   * by the front-end's own checks (the REST API: IP lists, defender ban and
   * rate limits run on each request before authentication). The login
   * service then skips those checks, and an API key let in is not a login
   * event (it comes with every request, like a bearer token). Otherwise the
   * service runs them on each attempt (rate limit scope `token`) and an API
   * key let in is a login (event 5).
   */
  perRequest?: boolean;
}

/** The account a login let in. */
export interface LoginAccount {
  kind: 'user' | 'admin';
  id: number;
  username: string;
  /** The account's role name, '' for none. */
  role: string;
}

export type LoginResult =
  /** Logged in with `method` (the login method, `apikey` for an API key). */
  | { status: 'ok'; account: LoginAccount; method: LoginMethod | 'apikey'; secondFactor: 'none' | 'totp' | 'recovery' }
  /** A public key asked about without a signature would be accepted. */
  | { status: 'key-accepted' }
  /** This step passed, and the account's login methods need another one of `next`. */
  | { status: 'partial'; next: readonly ('password' | 'keyboard-interactive')[] }
  /** The credential passed; the account needs its second factor for this protocol (send `{method: 'otp'}`). */
  | { status: 'second-factor' };

/** The login service as front-ends see it. Refusals are thrown as `LoginRefusedError` (core/src/errors.ts). */
export interface LoginGate {
  authenticate(request: LoginRequest): Promise<LoginResult>;
  /** The prompts of a keyboard-interactive login for the account on that protocol (password, then the code when 2FA applies). */
  keyboardInteractivePrompts(username: string, protocol: Protocol): Promise<{ prompt: string; echo: boolean }[]>;
  /** A login to a user's share by an external party (see ShareLoginRequest). */
  authenticateShare(request: ShareLoginRequest): Promise<ShareLoginResult>;
}

/**
 * A login to a share (an external party reaching a user's shared files):
 * the share's password, or for an email-restricted share an allowed address
 * with one of the one-time codes mailed to it. The share's id stands for the
 * username in log events; a wrong credential scores the host like a refused
 * login of an existing account.
 */
export interface ShareLoginRequest {
  shareId: string;
  /** Absent for a share that needs none; a share with a password or addresses then refuses with `bad-credentials`. */
  credential?: { method: 'share-password'; password: string } | { method: 'share-code'; email: string; code: string };
  ip: string;
  /** The front-end's protocol (log events and defender scores name it). */
  protocol: Protocol;
  /** What the client will do: reads need a share of scope read (1) or read-write (3), writes write (2) or read-write. */
  access: 'read' | 'write';
}

/** The share a share login let in. */
export interface ShareLoginResult {
  shareId: string;
  /** The owner whose files (and permissions, quotas) the share serves. */
  owner: string;
  /** 1 read, 2 write, 3 read and write. */
  scope: number;
  /** The owner's virtual paths the share serves. */
  paths: readonly string[];
  /** The address a one-time code was for ('' for a password or an open share). */
  email: string;
}

/** The share logins the login service delegates to (shares/share-login.ts): the share's own checks. */
export interface ShareLogins {
  login(request: ShareLoginRequest): Promise<ShareLoginResult>;
}

/**
 * The login contract front-ends use (SFTP, WebDAV, FTP, the web client, the
 * REST API's own strategies): one call for every credential kind, with
 * every check a login runs. Implemented by the core's login service
 * (`core/src/auth/login.service.ts`); service plugins reach it as
 * `ServiceHost.login`.
 */
import type { Protocol } from './protocols.js';

/** What the client presented. */
export type LoginCredential =
  /** A password, with the second factor (TOTP code or recovery code) when the client sends it in the same step. */
  | { method: 'password'; password: string; otp?: string }
  /**
   * An SSH public key: `key` is the public key in the SSH wire format (or an
   * OpenSSH `authorized_keys` line). Without `signed`, the client only asks
   * whether the key would be accepted (nothing is logged as a login); with
   * it, `signature` must verify over `data` with the key.
   */
  | { method: 'publickey'; algo?: string; key: Buffer | string; signed?: { data: Buffer; signature: Buffer; hashAlgo?: string } }
  /** Answers to the prompts of `LoginGate.keyboardInteractivePrompts`, in their order. */
  | { method: 'keyboard-interactive'; answers: string[] }
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
  /** Steps this connection already passed (multi-step SSH logins: `['publickey']`). */
  passed?: readonly ('publickey' | 'password' | 'keyboard-interactive' | 'TLSCertificate')[];
  /** Users (default) or admins. */
  audience?: 'user' | 'admin';
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
  /** Logged in. */
  | { status: 'ok'; account: LoginAccount; method: string; secondFactor: 'none' | 'totp' | 'recovery' }
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
}

import { ipMatcher } from '../util/ip.js';
import { AccountStatus } from './account-numbers.js';
import { isProtocol, loginProtocolOf } from '../sdk/protocols.js';

/** What the access checks read: a User, or better its EffectiveUser (groups' filters and expiration merged). */
export interface AccessState {
  status: number;
  expiration_date?: number | null;
  filters: unknown;
}

/**
 * What an anonymous account (`filters.is_anonymous`) may use: FTP and
 * WebDAV, as logins, and the server's own work on its files (event actions,
 * data retention: no login protocol). SSH and HTTP (the REST API, the web
 * client, shares, OIDC) are refused like a denied protocol.
 */
const ANONYMOUS_PROTOCOLS: readonly string[] = ['FTP', 'DAV', 'DataRetention', 'EventAction'];

/** Why an account may not log in or use its files, in a word. */
export type AccountRefusalReason = 'disabled' | 'expired' | 'protocol-denied' | 'ip-not-allowed';

/**
 * Why a user may not log in (`login`) or use its files (`access`) now over
 * `protocol` (checked as its login protocol: SFTP and SCP as SSH) from `ip`,
 * or null when it may: disabled, expired, a denied protocol, a denied or not
 * allowed source address. Logins check the user as stored; file sessions
 * check the effective user again (groups may add restrictions).
 */
export function accountRefusalOf(
  user: AccessState,
  ip: string,
  protocol: string,
  o: { verb?: 'login' | 'access'; now?: number } = {},
): { reason: AccountRefusalReason; message: string } | null {
  const now = o.now ?? Date.now();
  if (user.status !== AccountStatus.Enabled) return { reason: 'disabled', message: 'the account is disabled' };
  if (user.expiration_date && user.expiration_date <= now) return { reason: 'expired', message: 'the account has expired' };
  const f = user.filters as { denied_protocols?: string[]; allowed_ip?: string[]; denied_ip?: string[]; is_anonymous?: boolean };
  // the server's own work (no login protocol) is checked as itself
  const checked = (isProtocol(protocol) && loginProtocolOf(protocol)) || protocol;
  if (f.denied_protocols?.includes(checked)) return { reason: 'protocol-denied', message: `protocol ${checked} is not allowed for this account` };
  if (f.is_anonymous === true && !ANONYMOUS_PROTOCOLS.includes(checked)) {
    return { reason: 'protocol-denied', message: `protocol ${checked} is not allowed for an anonymous account (FTP and WebDAV only)` };
  }
  const verb = o.verb ?? 'login';
  const denied = (f.denied_ip?.length && ipMatcher(f.denied_ip)(ip)) || (f.allowed_ip?.length && !ipMatcher(f.allowed_ip)(ip));
  if (denied) return { reason: 'ip-not-allowed', message: `${verb} from ${ip} is not allowed` };
  return null;
}

/** accountRefusalOf's message, or null when the account may log in or access its files. */
export function accountRefusal(user: AccessState, ip: string, protocol: string, o: { verb?: 'login' | 'access'; now?: number } = {}): string | null {
  return accountRefusalOf(user, ip, protocol, o)?.message ?? null;
}

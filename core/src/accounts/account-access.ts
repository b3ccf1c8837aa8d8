import { ipMatcher } from '../util/ip.js';
import { AccountStatus } from './account-numbers.js';

/** What the access checks read: a User, or better its EffectiveUser (groups' filters and expiration merged). */
export interface AccessState {
  status: number;
  expiration_date?: number | null;
  filters: unknown;
}

/**
 * Why a user may not log in (`login`) or use its files (`access`) now over
 * `protocol` from `ip`, or null when it may: disabled, expired, a denied
 * protocol, a denied or not allowed source address. Logins check the user as
 * stored; file sessions check the effective user again (groups may add
 * restrictions).
 */
export function accountRefusal(user: AccessState, ip: string, protocol = 'HTTP', o: { verb?: 'login' | 'access'; now?: number } = {}): string | null {
  const now = o.now ?? Date.now();
  if (user.status !== AccountStatus.Enabled) return 'the account is disabled';
  if (user.expiration_date && user.expiration_date <= now) return 'the account has expired';
  const f = user.filters as { denied_protocols?: string[]; allowed_ip?: string[]; denied_ip?: string[] };
  if (f.denied_protocols?.includes(protocol)) return `protocol ${protocol} is not allowed for this account`;
  const verb = o.verb ?? 'login';
  if (f.denied_ip?.length && ipMatcher(f.denied_ip)(ip)) return `${verb} from ${ip} is not allowed`;
  if (f.allowed_ip?.length && !ipMatcher(f.allowed_ip)(ip)) return `${verb} from ${ip} is not allowed`;
  return null;
}

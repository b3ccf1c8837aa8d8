/** Credentials that must be refused: forged, expired, unsigned and malformed JWTs, bad API keys, broken basic auth. */
import crypto from 'node:crypto';
import type { Rng } from './prng.js';
import type { World } from './world.js';
import { hostileString } from './values.js';

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export function jwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: string | null): string {
  const head = b64url(JSON.stringify(header));
  const body = b64url(JSON.stringify(claims));
  const sig =
    key === null
      ? ''
      : b64url(
          crypto
            .createHmac(header.alg === 'HS512' ? 'sha512' : 'sha256', key)
            .update(`${head}.${body}`)
            .digest(),
        );
  return `${head}.${body}.${sig}`;
}

const basic = (raw: Buffer | string) => 'Basic ' + Buffer.from(raw).toString('base64');

/** An Authorization / X-SERVICE-API-KEY header set that must not authenticate a route with these strategies. */
export function badCredentials(r: Rng, w: World, strategies: string[], permission: unknown): { label: string; headers: Record<string, string> } {
  const now = Math.floor(Date.now() / 1000);
  const admin = strategies.includes('jwt-admin');
  const user = strategies.includes('jwt-user');
  const aud = admin ? 'admin' : 'user';
  const sub = admin ? 'admin' : w.user;
  const uid = admin ? w.adminUid : w.userUid;
  const jti = () => crypto.randomBytes(16).toString('hex');
  const claims = (o: Record<string, unknown> = {}) => ({ sub, aud, jti: jti(), iat: now, exp: now + 600, uid, ...o });
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const opts: [string, () => Record<string, string>][] = [
    ['none', () => ({})],
    ['empty bearer', () => ({ authorization: 'Bearer ' })],
    ['garbage bearer', () => bearer(hostileString(r).replace(/[^\x21-\x7e]/g, 'x') || 'x')],
    ['three dots', () => bearer('a.b.c')],
    ['alg none', () => bearer(jwt({ alg: 'none', typ: 'JWT' }, claims(), null))],
    ['alg none signed', () => bearer(jwt({ alg: 'none', typ: 'JWT' }, claims(), 'x').replace(/\.[^.]*$/, '.'))],
    ['HS512', () => bearer(jwt({ alg: 'HS512', typ: 'JWT' }, claims(), w.jwtKey))],
    ['forged key', () => bearer(jwt({ alg: 'HS256', typ: 'JWT' }, claims(), 'not-the-key'))],
    ['expired', () => bearer(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ iat: now - 7200, exp: now - 3600 }), w.jwtKey))],
    ['not yet valid', () => bearer(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ nbf: now + 3600 }), w.jwtKey))],
    [
      'wrong audience',
      () =>
        bearer(
          jwt(
            { alg: 'HS256', typ: 'JWT' },
            claims({ aud: admin ? 'user' : 'admin', sub: admin ? w.user : 'admin', uid: admin ? w.userUid : w.adminUid }),
            w.jwtKey,
          ),
        ),
    ],
    ['unknown subject', () => bearer(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ sub: 'fz-nobody' }), w.jwtKey))],
    ['other uid', () => bearer(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ uid: uid + 1000 }), w.jwtKey))],
    ['no jti', () => bearer(jwt({ alg: 'HS256', typ: 'JWT' }, { ...claims(), jti: undefined }, w.jwtKey))],
    ['hostile subject', () => bearer(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ sub: hostileString(r) }), w.jwtKey))],
    [
      'tampered payload',
      () => {
        const good = admin ? w.adminToken : w.userToken;
        const [h, , s] = good.split('.');
        return bearer(`${h}.${b64url(JSON.stringify(claims({ sub: 'fz-other' })))}.${s}`);
      },
    ],
    ['revoked', () => bearer(admin ? w.revokedAdminToken : w.revokedUserToken)],
    ['other role token', () => bearer(admin ? w.userToken : w.adminToken)],
    ['bogus api key', () => ({ 'x-service-api-key': hostileString(r).replace(/[^\x20-\x7e]/g, '?') || '?' })],
    ['api key of other scope', () => ({ 'x-service-api-key': admin ? w.userKey : w.adminKey })],
    ['api key wrong secret', () => ({ 'x-service-api-key': (admin ? w.adminKey : w.userKey).replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')) })],
    ['api key dot user', () => ({ 'x-service-api-key': `${(admin ? w.adminKey : w.userKey).split('.')[0]}.fz-nobody` })],
    ['basic on bearer route', () => ({ authorization: basic(`${admin ? 'admin' : w.user}:wrong`) })],
    ['bearer token in basic', () => ({ authorization: `Basic ${admin ? w.adminToken : w.userToken}` })],
  ];
  // an admin with one unrelated permission: refused where that permission does not suffice
  const perms = permission === undefined ? ['*'] : Array.isArray(permission) ? permission : [permission];
  if (admin && !user && !perms.includes('any') && !perms.includes('view_status')) opts.push(['limited admin', () => bearer(w.limitedAdminToken)]);
  if (!admin && user) opts.push(['admin key on user route', () => ({ 'x-service-api-key': w.adminKey })]);
  // routes open to both: only credentials that are bad for every audience
  const filtered = admin && user ? opts.filter(([l]) => !['wrong audience', 'other role token', 'api key of other scope', 'limited admin'].includes(l)) : opts;
  const [label, make] = r.pick(filtered);
  return { label, headers: make() };
}

/**
 * Basic credentials that must not log in (token routes, password shares).
 * A share checks the password only: `passwordOnly` leaves out the variants
 * whose password is right.
 */
export function badBasic(r: Rng, username: string, password: string, passwordOnly = false): { label: string; headers: Record<string, string> } {
  const opts: [string, () => string][] = [
    ['wrong password', () => basic(`${username}:${password}x`)],
    ['unknown user', () => basic(`fz-nobody-${r.int(1000)}:${password}`)],
    ['empty', () => basic(':')],
    ['no colon', () => basic(username)],
    ['empty password', () => basic(`${username}:`)],
    ['NUL in password', () => basic(`${username}:${password}\u0000`)],
    ['NUL in username', () => basic(`${username}\u0000:${password}`)],
    ['non-UTF-8 username', () => basic(Buffer.concat([Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(`:${password}`)]))],
    ['non-UTF-8 password', () => basic(Buffer.concat([Buffer.from(`${username}:`), Buffer.from([0xc0, 0x80, 0xed, 0xa0, 0x80])]))],
    ['control characters', () => basic(`${username}\r\n:${password}\u0007`)],
    ['hostile username', () => basic(`${hostileString(r)}:${password}`)],
    ['huge', () => basic(`${'u'.repeat(r.pick([300, 5000]))}:${'p'.repeat(r.pick([10, 5000]))}`)],
    ['not base64', () => `Basic ${hostileString(r).replace(/[^\x21-\x7e]/g, '!') || '!!!'}`],
    ['scheme only', () => 'Basic'],
    ['other scheme', () => `Digest username="${username}"`],
    ['bearer', () => 'Bearer x.y.z'],
  ];
  const rightPassword = ['unknown user', 'NUL in username', 'non-UTF-8 username', 'hostile username'];
  const [label, make] = r.pick(passwordOnly ? opts.filter(([l]) => !rightPassword.includes(l)) : opts);
  return { label, headers: { authorization: make() } };
}

/**
 * Authentication, as the protocol's securitySchemes define it: HTTP Basic
 * (`BasicAuth`) and/or an API key in the `X-API-KEY` header (`ApiKeyAuth`).
 * A request passes when any configured scheme matches. Comparisons run on
 * SHA-256 digests with timingSafeEqual, so neither the length nor the
 * content of a secret leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * @typedef {object} AuthOptions
 * @property {string} [username] Basic auth user name
 * @property {string} [password] Basic auth password
 * @property {string} [apiKey] expected X-API-KEY value
 * @property {boolean} [allowAnonymous] accept every request when no scheme is configured
 */

/** @param {string} s */
const digest = (s) => createHash('sha256').update(s, 'utf8').digest();

/**
 * @param {string} a
 * @param {Buffer} expected digest
 */
const same = (a, expected) => timingSafeEqual(digest(a), expected);

/**
 * Builds the request check. Throws at startup when no scheme is configured
 * and anonymous access was not asked for explicitly.
 * @param {AuthOptions} opts
 * @returns {{ check(headers: import('node:http').IncomingHttpHeaders): boolean, challenge: Record<string, string> }}
 */
export function createAuthenticator(opts) {
  const basic = (opts.username ?? '') !== '' || (opts.password ?? '') !== '';
  const apiKey = (opts.apiKey ?? '') !== '';
  if (!basic && !apiKey && !opts.allowAnonymous) {
    throw new Error('configure --username/--password and/or --api-key (or --insecure-no-auth)');
  }
  const userDigest = digest(opts.username ?? '');
  const passDigest = digest(opts.password ?? '');
  const keyDigest = digest(opts.apiKey ?? '');
  /** @type {Record<string, string>} */
  const challenge = basic ? { 'www-authenticate': 'Basic realm="httpfs", charset="UTF-8"' } : {};

  return {
    challenge,
    check(headers) {
      if (!basic && !apiKey) return true;
      if (apiKey) {
        const presented = headers['x-api-key'];
        if (typeof presented === 'string' && same(presented, keyDigest)) return true;
      }
      if (basic) {
        const creds = parseBasic(headers.authorization);
        if (creds) {
          // Evaluate both comparisons: no early exit on the user name.
          const userOk = same(creds.user, userDigest);
          const passOk = same(creds.pass, passDigest);
          if (userOk && passOk) return true;
        }
      }
      return false;
    },
  };
}

/**
 * @param {string | undefined} header
 * @returns {{ user: string, pass: string } | undefined}
 */
function parseBasic(header) {
  if (typeof header !== 'string') return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  return { user: decoded.slice(0, i), pass: decoded.slice(i + 1) };
}

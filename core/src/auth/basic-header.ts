import { stringProblem } from '../util/well-formed.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Control characters (C0, DEL, C1): usernames never hold them (see util/common.input.ts). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why the credentials of a `Basic` Authorization header cannot be any account's,
 * or null when they may be. @hapi/basic decodes the header leniently (bytes
 * that are not UTF-8 become U+FFFD), so the header is decoded again here,
 * strictly: credentials that are not UTF-8, a username with control characters
 * (NUL included) or a password with a NUL are refused before any lookup.
 */
export function basicCredentialsProblem(authorization: string | undefined): string | null {
  const parts = (authorization ?? '').split(/\s+/);
  if (parts.length !== 2 || parts[0]!.toLowerCase() !== 'basic') return null; // @hapi/basic answers these itself
  let decoded: string;
  try {
    decoded = strictUtf8.decode(Buffer.from(parts[1]!, 'base64'));
  } catch {
    return 'the credentials are not valid UTF-8';
  }
  const sep = decoded.indexOf(':');
  if (sep < 0) return null;
  return credentialsProblem(decoded.slice(0, sep), decoded.slice(sep + 1));
}

/**
 * Why a username and secret (password, code) cannot be any account's, or
 * null when they may be: a username with lone surrogates or control
 * characters (NUL included), a secret with lone surrogates or a NUL.
 */
export function credentialsProblem(username: string, secret: string): string | null {
  const userProblem = stringProblem(username);
  if (userProblem) return `the username ${userProblem}`;
  if (CONTROL.test(username)) return 'the username contains control characters';
  const passwordProblem = stringProblem(secret);
  if (passwordProblem) return `the password ${passwordProblem}`;
  return null;
}

import { toWellFormed } from '../util/well-formed.js';

/**
 * The Location header of a created object: `base` followed by the segments,
 * each percent-encoded. Never throws, so an answer cannot fail after the object
 * was stored: encodeURIComponent throws on a lone surrogate, which the input
 * check (http/input-check.ts) refuses before any handler, and which would be
 * U+FFFD here if it ever came from elsewhere.
 */
export function locationOf(base: string, ...segments: (string | number)[]): string {
  return [base, ...segments.map((s) => encodeURIComponent(toWellFormed(String(s))))].join('/');
}

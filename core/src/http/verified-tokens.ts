import type { KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { setBounded } from '../util/bounded-map.js';

/** Tokens VerifiedTokens keeps (the oldest forgotten first). */
export const VERIFIED_TOKENS_KEPT = 1024;

type Claims = Record<string, unknown>;

/**
 * The check of a bearer token's signature and claims (jsonwebtoken's
 * `verify`, with the strategy's key and options), remembered by the
 * token's exact text: a client sends the same token with every request, and
 * decoding it twice and computing its HMAC was 6-7% of a small request's
 * CPU (docs/user-request-cost.md). A remembered token is the same string
 * that verified, so its signature and audience still hold; its time claims
 * (`exp`, `nbf`) are looked at again on every use, and a token out of its
 * time is checked afresh, which gives jsonwebtoken's own error. Only the
 * signature check is remembered: revocation and the account are read on
 * every request by the strategy's validation.
 */
export class VerifiedTokens {
  private readonly kept = new Map<string, Claims>();

  constructor(
    private readonly key: KeyObject,
    private readonly options: jwt.VerifyOptions & { complete?: false },
    private readonly max = VERIFIED_TOKENS_KEPT,
  ) {}

  /** The token's claims (an object of the caller's own); throws jsonwebtoken's error when the token does not verify now. */
  claims(token: string, now = Date.now()): Claims {
    const hit = this.kept.get(token);
    if (hit && inTime(hit, Math.floor(now / 1000))) return { ...hit };
    if (hit) this.kept.delete(token);
    const claims = jwt.verify(token, this.key, { ...this.options, clockTimestamp: Math.floor(now / 1000) });
    if (typeof claims !== 'object' || claims === null) throw new jwt.JsonWebTokenError('jwt payload is not an object');
    setBounded(this.kept, token, { ...claims }, this.max);
    return claims as Claims;
  }

  /** How many tokens are kept (for tests). */
  get size(): number {
    return this.kept.size;
  }
}

/** jsonwebtoken's rules for `exp` and `nbf` (no clock tolerance), at `seconds`. */
function inTime(c: Claims, seconds: number): boolean {
  if (c.exp !== undefined && !(typeof c.exp === 'number' && seconds < c.exp)) return false;
  if (c.nbf !== undefined && !(typeof c.nbf === 'number' && c.nbf <= seconds)) return false;
  return true;
}

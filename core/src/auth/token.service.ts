import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import { RevokedToken } from '../data/entities/index.js';
import { SettingsService } from '../ops/settings.service.js';
import { ChangeFeed } from '../data/change-feed.js';

export type TokenAudience = 'admin' | 'user';

export interface TokenClaims {
  sub: string;
  aud: TokenAudience;
  jti: string;
  iat: number;
  exp: number;
  /** Account id, to notice a deleted and re-created account. */
  uid: number;
  /** Issue time in milliseconds: compared with the account's tokens_valid_after (a password reset revokes earlier tokens). */
  iat_ms?: number;
  /** Set on tokens of an identity-provider (OIDC) login: the provider ran the second factor, Ferry's 2FA is not asked or required. */
  idp?: true;
}

/** True when a token issued at `claims` time predates the account's revocation time. */
export function issuedBeforeRevocation(claims: Pick<TokenClaims, 'iat' | 'iat_ms'>, tokensValidAfter: number): boolean {
  if (!tokensValidAfter) return false;
  const issued = typeof claims.iat_ms === 'number' ? claims.iat_ms : claims.iat * 1000;
  return issued < tokensValidAfter;
}

export interface IssuedToken {
  access_token: string;
  expires_at: string;
}

/** Short-lived JWTs (HS256) with database-backed revocation shared by every node. */
@injectable()
export class TokenService {
  private key?: string;
  private keyObject?: crypto.KeyObject;

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(SettingsService) private readonly settings: SettingsService,
    @inject(ChangeFeed) private readonly feed: ChangeFeed,
  ) {}

  async signingKey(): Promise<string> {
    this.key ??= await this.settings.signingKey(this.config.httpd.signing_passphrase);
    return this.key;
  }

  /**
   * The signing key as a KeyObject, for jsonwebtoken's sign and verify: given
   * a string, they first try (and fail) to parse it as a PEM key, about
   * 0.5 ms of CPU per token.
   */
  async signingKeyObject(): Promise<crypto.KeyObject> {
    this.keyObject ??= crypto.createSecretKey(Buffer.from(await this.signingKey()));
    return this.keyObject;
  }

  async issue(aud: TokenAudience, username: string, uid: number, o: { idp?: boolean } = {}): Promise<IssuedToken> {
    const nowMs = Date.now();
    const now = Math.floor(nowMs / 1000);
    const exp = now + this.config.httpd.token_lifetime * 60;
    const claims: TokenClaims = {
      sub: username,
      aud,
      jti: crypto.randomBytes(16).toString('hex'),
      iat: now,
      exp,
      uid,
      iat_ms: nowMs,
      ...(o.idp ? { idp: true as const } : {}),
    };
    const access_token = jwt.sign(claims, await this.signingKeyObject(), { algorithm: 'HS256', noTimestamp: true });
    return { access_token, expires_at: new Date(exp * 1000).toISOString() };
  }

  async revoke(jti: string, expSeconds: number): Promise<void> {
    const em = this.orm.em.fork();
    if (await em.count(RevokedToken, { jti })) return;
    await em.insert(RevokedToken, { jti, expires_at: expSeconds * 1000 });
    // every node stops taking the token from memory (accounts/account-cache.ts)
    this.feed.publish({ type: 'jti', name: jti });
    await em.nativeDelete(RevokedToken, { expires_at: { $lt: Date.now() } });
  }
}

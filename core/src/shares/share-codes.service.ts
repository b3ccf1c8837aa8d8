import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import { inject, Lifecycle, scoped } from 'tsyringe';
import { raw, type MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../ops/mailer.js';
import { Share, ShareCode } from '../data/entities/index.js';
import { ForbiddenError, InvalidError, NotFoundError } from '../errors.js';
import { TokenService } from '../auth/token.service.js';
import { ipMatcher } from '../util/ip.js';

/** Code alphabet: digits and upper-case letters without 0/O and 1/I/L, easy to read from a mail. */
const ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
/** 10 characters of 31: about 49 bits, for a code that lives minutes and is tried a few times at most. */
const CODE_LENGTH = 10;
const SHARE_AUDIENCE = 'share';

function newCode(): string {
  let out = '';
  while (out.length < CODE_LENGTH) {
    const b = crypto.randomBytes(1)[0]!;
    if (b < 248) out += ALPHABET[b % ALPHABET.length]; // 248 = 8 x 31: no modulo bias
  }
  return out;
}

/** The stored form of a code: SHA-256 of the share, the address and the code (spaces, dashes and case ignored); exported for tests that store a code without mailing it. */
export function hashCode(shareId: string, email: string, code: string): string {
  const norm = code.trim().toUpperCase().replace(/[\s-]/g, '');
  return crypto.createHash('sha256').update(`${shareId}\n${email}\n${norm}`).digest('hex');
}

/** Claims of a share token (audience "share"). */
interface ShareTokenClaims {
  aud: string;
  sub: string;
  email: string;
  iat: number;
  exp: number;
  /** The CSRF token of a share web session (cookie ferry_share_<id>); absent from bearer share tokens. */
  csrf?: string;
}

/** What a valid share token tells: the address ('' for the share password) and, for a web session's token, its CSRF token. */
export interface ShareTokenInfo {
  email: string;
  csrf?: string;
}

export interface IssuedShareToken {
  access_token: string;
  expires_at: string;
}

/**
 * One-time codes of email-restricted shares (docs/shares.md): an external
 * party asks for a code for one of the share's `emails`
 * (POST /api/v2/shares/{id}/codes), receives it by mail, and uses it instead
 * of the share password: as HTTP basic credentials (the address as user
 * name, the code as password) for one request, or exchanged once for a
 * short-lived share token (POST /api/v2/shares/{id}/token) sent as
 * `Authorization: Bearer` on the following requests (TUS uploads, several files).
 *
 * Codes are stored as SHA-256 hashes, expire after `share_codes.code_lifetime`
 * minutes, are spent by their first successful use, and are voided after
 * `max_attempts` wrong tries on the address; at most `max_codes` live codes
 * per share and address (further requests mail nothing). The request answers
 * the same whether or not the address is allowed, and mails in the background,
 * so the answer discloses nothing. Share tokens are JWTs signed with the
 * server's token key, bound to the share and the address, and void once the
 * share is changed or the address removed from it.
 */
@scoped(Lifecycle.ContainerScoped)
export class ShareCodesService {
  private readonly pending = new Set<Promise<void>>();
  private readonly log: Logger;

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Mailer) private readonly mailer: Mailer,
    @inject(TOKENS.Logger) logger: Logger,
    @inject(TokenService) private readonly tokens: TokenService,
  ) {
    this.log = logger.child({ component: 'share-codes' });
  }

  private get cfg() {
    return this.config.share_codes;
  }

  /**
   * POST /shares/{id}/codes: mails a code to `email` when the share lists it.
   * Refused for unknown (404), not email-restricted (400), expired or
   * address-restricted shares (403) and without a mail server (403); otherwise
   * the same answer for every address.
   */
  async request(id: string, email: string, ip: string): Promise<void> {
    const share = await this.orm.em.fork().findOne(Share, { share_id: id });
    if (!share) throw new NotFoundError(`share "${id}" not found`);
    if (!share.emails.length) throw new InvalidError('this share is not email-restricted: use its password');
    if (share.allow_from.length && !ipMatcher(share.allow_from)(ip)) throw new ForbiddenError(`the share is not accessible from ${ip}`);
    if (share.expires_at && share.expires_at <= Date.now()) throw new ForbiddenError('the share has expired');
    if (!this.mailer.configured) throw new ForbiddenError('one-time share codes are not available: no mail server is configured (config section smtp)');
    if (!share.emails.includes(email)) {
      this.log.info({ share: id, ip }, 'share code requested for an address the share does not list: nothing mailed');
      return;
    }
    const p = this.deliver(share, email, ip)
      .catch((err: unknown) => this.log.error({ err, share: id }, 'share code: mailing failed'))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Resolves when every code requested so far is mailed (or refused). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  private async deliver(share: Share, email: string, ip: string): Promise<void> {
    const em = this.orm.em.fork();
    const now = Date.now();
    await em.nativeDelete(ShareCode, { expires_at: { $lt: now } });
    const live = await em.count(ShareCode, { share_id: share.share_id, email, used_at: 0, expires_at: { $gt: now } });
    if (live >= this.cfg.max_codes) {
      this.log.info({ share: share.share_id, ip }, `share code requested: ${live} live codes already, nothing mailed`);
      return;
    }
    const code = newCode();
    em.create(ShareCode, {
      share_id: share.share_id,
      email,
      code_hash: hashCode(share.share_id, email, code),
      attempts: 0,
      created_at: now,
      expires_at: now + this.cfg.code_lifetime * 60_000,
      used_at: 0,
    });
    await em.flush();
    const minutes = this.cfg.code_lifetime;
    await this.mailer.send({
      to: [email],
      subject: `Your code for the shared files "${share.name}"`,
      body: [
        `Code: ${code}`,
        '',
        `It can be used once within ${minutes} minutes for share ${share.share_id}: as the password of the share`,
        `with your address as the user name, or exchanged for a share token (POST /api/v2/shares/${share.share_id}/token).`,
        '',
        'If you did not ask for it, ignore this message.',
      ].join('\n'),
    });
    this.log.info({ share: share.share_id, ip }, 'share code mailed');
  }

  /** Spends a code of `email` on the share: true when it matched a live code (which is then used up). */
  async spend(share: Share, email: string, code: string): Promise<boolean> {
    const em = this.orm.em.fork();
    const now = Date.now();
    const rows = await em.find(ShareCode, { share_id: share.share_id, email, used_at: 0, expires_at: { $gt: now }, attempts: { $lt: this.cfg.max_attempts } });
    const wanted = Buffer.from(hashCode(share.share_id, email, code));
    const row = rows.find((r) => r.code_hash.length === wanted.length && crypto.timingSafeEqual(Buffer.from(r.code_hash), wanted));
    if (!row) {
      // every live code of the address counts the wrong try; max_attempts voids them
      if (rows.length) await em.nativeUpdate(ShareCode, { id: { $in: rows.map((r) => r.id) } }, { attempts: raw('attempts + 1') });
      return false;
    }
    // the code is spent by whoever marks it first
    return (await em.nativeUpdate(ShareCode, { id: row.id, used_at: 0 }, { used_at: now })) > 0;
  }

  /** Lifetime of share tokens and share web sessions: httpd.token_lifetime minutes. */
  get tokenLifetimeSeconds(): number {
    return this.config.httpd.token_lifetime * 60;
  }

  /** A share token for `email` on the share, valid for httpd.token_lifetime minutes; `csrf` makes it a web session's token. */
  async issueToken(share: Share, email: string, o: { csrf?: string } = {}): Promise<IssuedShareToken> {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + this.tokenLifetimeSeconds;
    const claims: ShareTokenClaims = { aud: SHARE_AUDIENCE, sub: share.share_id, email, iat: now, exp, ...(o.csrf ? { csrf: o.csrf } : {}) };
    const access_token = jwt.sign(claims, await this.tokens.signingKeyObject(), { algorithm: 'HS256' });
    return { access_token, expires_at: new Date(exp * 1000).toISOString() };
  }

  /** The address of `token` ('' for a password token) when it is a valid share token of this share, for an address it still lists, issued after its last change; else null. */
  async verifyToken(share: Share, token: string): Promise<string | null> {
    return (await this.tokenInfo(share, token))?.email ?? null;
  }

  /** verifyToken, with the CSRF token a web session's token carries. */
  async tokenInfo(share: Share, token: string): Promise<ShareTokenInfo | null> {
    let claims: ShareTokenClaims;
    try {
      claims = jwt.verify(token, await this.tokens.signingKeyObject(), { algorithms: ['HS256'], audience: SHARE_AUDIENCE }) as ShareTokenClaims;
    } catch {
      return null;
    }
    if (claims.sub !== share.share_id || typeof claims.email !== 'string') return null;
    // '' : a token obtained with the share password
    if (claims.email === '' ? !share.password_hash : !share.emails.includes(claims.email)) return null;
    if (claims.iat < Math.floor(share.updated_at / 1000)) return null;
    return { email: claims.email, ...(typeof claims.csrf === 'string' ? { csrf: claims.csrf } : {}) };
  }
}

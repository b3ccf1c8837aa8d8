import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import { WebSession } from '../data/entities/index.js';

/** Hex SHA-256 of a cookie's session id: what the database keeps (the id is 256-bit random, a fast hash is safe). */
export function webSessionHash(id: string): string {
  return crypto.createHash('sha256').update(id).digest('hex');
}

/** Constant-time comparison of two strings (the CSRF token check). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

const DAY_MS = 86_400_000;

/** Whose browser session: a user's (the web client) or an admin's (the web admin). */
export type WebSessionKind = 'user' | 'admin';

/**
 * Whether the user must change the password before anything else (told to
 * the web client: v2.7 logins do not refuse such an account, GET
 * /api/v2/user/token issues its token as usual): `require_password_change`
 * set by an admin, or `password_expiration` days passed since the last
 * change (or the creation). `filters` are the effective ones (groups merged).
 */
export function passwordChangeRequired(
  user: { last_password_change: number; created_at: number },
  filters: Record<string, unknown>,
  now = Date.now(),
): boolean {
  if (filters.require_password_change === true) return true;
  const days = typeof filters.password_expiration === 'number' ? filters.password_expiration : 0;
  return days > 0 && (user.last_password_change || user.created_at) + days * DAY_MS <= now;
}

/**
 * Browser sessions of the REST API (http/web-session.ts), stored in the
 * database so every node and a restart see them: opened by a password (or
 * OIDC) login, each holds the CSRF token of its state-changing requests, an
 * idle expiry slid forward while it is used (httpd.web_session.idle_timeout)
 * and an absolute end (httpd.web_session.max_lifetime).
 */
@injectable()
export class WebSessionService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
  ) {}

  private get idleMs(): number {
    return this.config.httpd.web_session.idle_timeout * 1000;
  }

  /** Seconds from now to the absolute end of a session opened now (the cookie's Max-Age). */
  get maxLifetimeSeconds(): number {
    return this.config.httpd.web_session.max_lifetime;
  }

  /** Opens a session of `account` (a user's, or an admin's with kind 'admin'); returns the cookie's id (never stored) and the row. */
  async open(account: { id: number; username: string }, o: { idp?: boolean; kind?: WebSessionKind } = {}): Promise<{ id: string; session: WebSession }> {
    const now = Date.now();
    const id = crypto.randomBytes(32).toString('base64url');
    const max = now + this.maxLifetimeSeconds * 1000;
    const session: WebSession = {
      id_hash: webSessionHash(id),
      kind: o.kind ?? 'user',
      user_id: account.id,
      username: account.username,
      csrf_token: crypto.randomBytes(32).toString('hex'),
      idp: o.idp === true,
      created_at: now,
      expires_at: Math.min(now + this.idleMs, max),
      max_expires_at: max,
    };
    const em = this.orm.em.fork();
    // the ended sessions of everybody go as new ones come (the idle expiry never passes the absolute one)
    await em.nativeDelete(WebSession, { expires_at: { $lt: now } });
    await em.insert(WebSession, session);
    return { id, session };
  }

  /**
   * The live session of a cookie's id, or null (unknown, revoked, idle too
   * long, past its absolute end, or of the other kind: an admin's id in the
   * user cookie lets nobody in).
   */
  async find(id: string, kind: WebSessionKind = 'user'): Promise<WebSession | null> {
    const s = await this.orm.em.fork().findOne(WebSession, { id_hash: webSessionHash(id), kind });
    if (!s) return null;
    const now = Date.now();
    return s.expires_at <= now || s.max_expires_at <= now ? null : s;
  }

  /**
   * Slides the idle expiry of a session in use (never past its absolute
   * end). Written when it moves by a tenth of the idle timeout (at most a
   * minute) or `force`: not on every request of a busy tab.
   */
  async slide(s: WebSession, force = false): Promise<void> {
    const next = Math.min(Date.now() + this.idleMs, s.max_expires_at);
    const step = Math.min(60_000, this.idleMs / 10);
    if (next <= s.expires_at || (!force && next - s.expires_at < step)) return;
    s.expires_at = next;
    await this.orm.em.fork().nativeUpdate(WebSession, { id_hash: s.id_hash }, { expires_at: next });
  }

  /** Ends a session (logout, or its account no longer lets it in). */
  async revoke(idHash: string): Promise<void> {
    await this.orm.em.fork().nativeDelete(WebSession, { id_hash: idHash });
  }
}

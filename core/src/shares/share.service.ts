import { ForbiddenError, InvalidError, NotFoundError, UnauthorizedError } from '../errors.js';
import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Share, User, type Role } from '../data/entities/index.js';
import type { EventShares, ShareInfo } from '../event-manager/accounts.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { isSubPath, parentPath } from '../fs/path.js';
import type { ListQuery } from '../util/common.input.js';
import { REDACTED_PASSWORD, ShareScope, type ShareInput } from './share.input.js';
import { ipMatcher } from '../util/ip.js';
import type { FileSession } from '../vfs/file-session.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { FileSessions } from '../vfs/file-sessions.service.js';
import { hashPassword } from '../accounts/password.js';
import { PasswordCache } from '../accounts/password-cache.js';
import { DefenderService } from '../security/defender.service.js';
import { ShareCodesService } from './share-codes.service.js';
import { sameSecret } from '../auth/web-session.service.js';
import { ProviderEventsService, SYSTEM_ACTOR, type Actor } from '../events/provider-events.service.js';
import type { EventBus } from '../events/event-bus.js';
import { nowNanos, type LogEventType } from '../events/event-types.js';
import type { Protocol } from '../sdk/protocols.js';
import { applySharePolicy, policyChangeDisabled, sharePolicies } from './share-policy.js';

const DAY = 86_400_000;

type Obj = Record<string, unknown>;

interface SqlRunner {
  execute<T>(sql: string, params?: unknown[], method?: 'all' | 'get' | 'run'): Promise<T>;
}

/** web_client options of the owner that concern shares. */
const SHARES_DISABLED = 'shares-disabled';
const NO_PASSWORD_DISABLED = ['shares-without-password-disabled', 'share_no_password_disabled'];

function webClient(u: EffectiveUser): string[] {
  return (u.filters.web_client as string[] | undefined) ?? [];
}

/** The owner may create and use shares (no `shares-disabled` web client option). */
export function canShare(u: EffectiveUser): boolean {
  return !webClient(u).includes(SHARES_DISABLED);
}

/** The owner's shares must have a password. */
export function sharePasswordRequired(u: EffectiveUser): boolean {
  return webClient(u).some((o) => NO_PASSWORD_DISABLED.includes(o));
}

export const canRead = (scope: number) => scope === ShareScope.Read || scope === ShareScope.ReadWrite;
export const canWrite = (scope: number) => scope === ShareScope.Write || scope === ShareScope.ReadWrite;

/** How a request on a share was let in: no credentials needed, the share password, a one-time code or a share token. */
type ShareLogin = 'none' | 'password' | 'code' | 'token';

/** Credentials a public share request carries: HTTP basic (password, or address and one-time code) or a share token. */
export interface ShareCredentials {
  username?: string;
  password?: string;
  /** A share token (Authorization: Bearer), see share-codes.service.ts. */
  bearer?: string;
  /**
   * A share web session (cookie ferry_share_<id>, core/src/http/share-web-session.ts): its token, and the
   * request's X-CSRF-Token when the request changes something (null for GET and HEAD: nothing to check).
   */
  web?: { token: string; csrf: string | null };
}

/**
 * User shares: stored with an argon2id hash of their password, managed by
 * their owner through /user/shares and used by external parties through
 * /shares/{id}. Also the share store of the event manager (TOKENS.Shares):
 * the share expiration check lists and deletes shares through it.
 */
@injectable()
export class ShareService implements EventShares {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(FileSessions) private readonly sessions: FileSessions,
    @inject(PasswordCache) private readonly passwords: PasswordCache,
    @inject(DefenderService) private readonly defender: DefenderService,
    @inject(ShareCodesService) private readonly codes: ShareCodesService,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
  ) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  render(s: Share): Obj {
    return {
      id: s.share_id,
      name: s.name,
      description: s.description,
      scope: s.scope,
      paths: [...s.paths],
      username: (s.user as User).username,
      created_at: s.created_at,
      updated_at: s.updated_at,
      last_use_at: s.last_use_at,
      expires_at: s.expires_at,
      // hashes are never returned: a marker tells the share has a password
      password: s.password_hash ? REDACTED_PASSWORD : '',
      max_tokens: s.max_tokens,
      used_tokens: s.used_tokens,
      allow_from: [...s.allow_from],
      emails: [...s.emails],
    };
  }

  /** The effective owner, refused (403) when it may not use shares. */
  async owner(username: string): Promise<EffectiveUser> {
    const u = await this.sessions.effectiveUser(username);
    if (!u) throw new UnauthorizedError('the account no longer exists');
    if (!canShare(u)) throw new ForbiddenError('sharing is disabled for this account');
    return u;
  }

  /** Shares of one user, a page of them ordered by id. */
  async listOf(username: string, q: ListQuery): Promise<Share[]> {
    return this.em().find(Share, { user: { username } }, { orderBy: { share_id: q.order }, offset: q.offset, limit: q.limit, populate: ['user'] });
  }

  /** A share of `username` (404 for unknown ids and for other users' shares). */
  async get(username: string, id: string, em: EntityManager = this.em()): Promise<Share> {
    const s = await em.findOne(Share, { share_id: id, user: { username } }, { populate: ['user'] });
    if (!s) throw new NotFoundError(`share "${id}" not found`);
    return s;
  }

  /**
   * Checks share paths against the owner's tree (through a file session of
   * the owner): each exists and is readable (read scopes: list and download
   * on directories, download on files) or, for write scopes, is exactly one
   * directory with the upload permission. Returns the normalised paths.
   */
  async checkPaths(s: FileSession, scope: ShareScope, paths: string[]): Promise<string[]> {
    const list = [...new Set(paths)];
    const sorted = [...list].sort();
    for (let i = 1; i < sorted.length; i++) {
      if (isSubPath(sorted[i - 1]!, sorted[i]!)) throw new InvalidError(`"paths": "${sorted[i - 1]}" and "${sorted[i]}" overlap`);
    }
    if (canWrite(scope) && list.length !== 1) throw new InvalidError('"paths": a share with write scope needs exactly one directory path');
    for (const p of list) {
      let isDir: boolean;
      try {
        s.checkName(p, 'read');
        isDir = (await s.vfs.stat(p, { signal: s.signal })).isDir;
      } catch (err) {
        if (isFsError(err, FsErrorCode.NotFound) || isFsError(err, FsErrorCode.NotDirectory)) {
          throw new InvalidError(`"paths": ${p} does not exist`);
        }
        throw err;
      }
      if (canWrite(scope)) {
        if (!isDir) throw new InvalidError(`"paths": a share with write scope needs a directory, ${p} is a file`);
        s.requirePerm(p, `sharing ${p} for uploads`, 'upload');
      }
      if (canRead(scope)) {
        if (isDir) s.requirePerm(p, `sharing ${p}`, 'list');
        s.requirePerm(isDir ? p : parentPath(p), `sharing ${p}`, 'download');
      }
    }
    return list;
  }

  /** Expiry rules: in the future when set; the owner's default and maximum share expiration (days). */
  private expiry(u: EffectiveUser, expiresAt: number, isNew: boolean): number {
    const now = Date.now();
    const f = u.filters as { default_shares_expiration?: number; max_shares_expiration?: number };
    let at = expiresAt;
    if (!at && isNew && f.default_shares_expiration) at = now + f.default_shares_expiration * DAY;
    if (at && at <= now) throw new InvalidError('"expires_at" must be in the future');
    if (f.max_shares_expiration) {
      const max = now + f.max_shares_expiration * DAY;
      if (!at || at > max) {
        throw new InvalidError(
          `"expires_at": shares of this account must expire within ${f.max_shares_expiration} days (before ${new Date(max).toISOString()})`,
        );
      }
    }
    return at;
  }

  /** The scope of a share as sent, or the one its share policies give; refused beyond them under share_policy_change_disabled. */
  private scopeOf(u: EffectiveUser, input: ShareInput): ShareScope {
    return applySharePolicy(sharePolicies(u), policyChangeDisabled(u), [...new Set(input.paths)], input.scope);
  }

  private async passwordHash(u: EffectiveUser, password: string, current: string | null): Promise<string> {
    let hash: string;
    if (password === REDACTED_PASSWORD) {
      if (current === null) throw new InvalidError('"password" must be the password of the share, not the redacted marker');
      hash = current;
    } else {
      hash = password ? await hashPassword(password) : '';
    }
    if (!hash && sharePasswordRequired(u)) throw new InvalidError('"password": shares of this account must have a password');
    return hash;
  }

  /** Creates a share of the session's user; returns it. */
  async add(s: FileSession, input: ShareInput, actor: Actor): Promise<Share> {
    const u = s.user;
    if (!canShare(u)) throw new ForbiddenError('sharing is disabled for this account');
    const scope = this.scopeOf(u, input);
    const paths = await this.checkPaths(s, scope, input.paths);
    const expires_at = this.expiry(u, input.expires_at, true);
    const password_hash = await this.passwordHash(u, input.password, null);
    const em = this.em();
    const user = await em.findOne(User, { id: u.id });
    if (!user) throw new UnauthorizedError('the account no longer exists');
    const now = Date.now();
    const share = em.create(Share, {
      share_id: crypto.randomBytes(16).toString('base64url'),
      name: input.name,
      description: input.description,
      scope,
      paths,
      user,
      password_hash,
      expires_at,
      max_tokens: input.max_tokens,
      used_tokens: 0,
      allow_from: input.allow_from,
      emails: input.emails,
      created_at: now,
      updated_at: now,
      last_use_at: 0,
    });
    await em.flush();
    this.events.emit('add', 'share', share.share_id, this.render(share), actor);
    return share;
  }

  /** Updates a share of the session's user (used tokens, creation and last use are kept). */
  async update(s: FileSession, id: string, input: ShareInput, actor: Actor): Promise<void> {
    const u = s.user;
    if (!canShare(u)) throw new ForbiddenError('sharing is disabled for this account');
    const em = this.em();
    const share = await this.get(u.username, id, em);
    const scope = this.scopeOf(u, input);
    const paths = await this.checkPaths(s, scope, input.paths);
    const expires_at = this.expiry(u, input.expires_at, false);
    share.password_hash = await this.passwordHash(u, input.password, share.password_hash);
    share.name = input.name;
    share.description = input.description;
    share.scope = scope;
    share.paths = paths;
    share.expires_at = expires_at;
    share.max_tokens = input.max_tokens;
    share.allow_from = input.allow_from;
    share.emails = input.emails;
    share.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'share', id, this.render(share), actor);
  }

  /** Deletes a share of `username`. */
  async remove(username: string, id: string, actor: Actor): Promise<void> {
    const em = this.em();
    const share = await this.get(username, id, em);
    const data = this.render(share);
    await em.removeAndFlush(share);
    this.events.emit('delete', 'share', id, data, actor);
  }

  // ---- public access -----------------------------------------------------------

  /**
   * Checks a public request on a share: it exists (404), the client address
   * is allowed (403), the password matches when the share has one (401),
   * the route's scope is granted (403), the share is not expired and has
   * uses left (403; `ignoreTokens` for the next requests of a resumable
   * upload, which took its use when created), and its owner may still share (403).
   *
   * Logins on protected shares are log events (protocol of the front-end: HTTPShare for the REST API's share routes; the share
   * id as username, the owner's role): 5 for a request let in by the share
   * password or a one-time code (not for a share token: like a bearer token,
   * its use is not a login), 1 for a refused one (wrong password, code or
   * token, or refused after them: address, scope, expiration, uses, owner),
   * 3 when it carried no credentials, and 2 for credentials sent to a share
   * that does not exist.
   */
  async authorize(
    id: string,
    ip: string,
    creds: ShareCredentials,
    scopeOk: (scope: number) => boolean,
    o: { protocol: Protocol; ignoreTokens?: boolean },
  ): Promise<{ share: Share; owner: EffectiveUser; email: string; csrf?: string }> {
    const share = await this.em().findOne(Share, { share_id: id }, { populate: ['user', 'user.role'] });
    const sent = creds.bearer !== undefined || creds.password !== undefined || creds.web !== undefined;
    if (!share) {
      if (sent) this.loginEvent(o.protocol, 2, id, ip, `login to share "${id}": no such share`, '');
      throw new NotFoundError(`share "${id}" not found`);
    }
    const role = ((share.user as User).role as Role | null | undefined)?.name ?? '';
    const guarded = !!(share.password_hash || share.emails.length);
    let how: ShareLogin = 'none';
    try {
      if (share.allow_from.length && !ipMatcher(share.allow_from)(ip)) throw new ForbiddenError(`the share is not accessible from ${ip}`);
      const auth = await this.authenticate(share, ip, creds, o.protocol);
      how = auth.how;
      if (!scopeOk(share.scope)) throw new ForbiddenError('the scope of this share does not allow this operation');
      if (share.expires_at && share.expires_at <= Date.now()) throw new ForbiddenError('the share has expired');
      if (!o.ignoreTokens && share.max_tokens && share.used_tokens >= share.max_tokens)
        throw new ForbiddenError('the share has reached its maximum number of uses');
      const owner = await this.sessions.effectiveUser((share.user as User).username);
      if (!owner) throw new NotFoundError(`share "${id}" not found`);
      if (!canShare(owner)) throw new ForbiddenError('sharing is disabled for the owner of this share');
      if (!share.password_hash && sharePasswordRequired(owner)) throw new ForbiddenError('the owner of this share may only share with a password');
      if (how === 'password' || how === 'code') this.loginEvent(o.protocol, 5, id, ip, `share login with ${auth.what}`, role);
      return { share, owner, email: auth.email, ...(auth.csrf ? { csrf: auth.csrf } : {}) };
    } catch (err) {
      const refused = err instanceof UnauthorizedError || err instanceof ForbiddenError || err instanceof NotFoundError;
      if (guarded && refused) {
        if (!sent) this.loginEvent(o.protocol, 3, id, ip, `no login tried: ${err.message}`, role);
        else this.loginEvent(o.protocol, 1, id, ip, `share login refused: ${err.message}${creds.username ? ` (user name "${creds.username}")` : ''}`, role);
      }
      throw err;
    }
  }

  private loginEvent(protocol: Protocol, event: LogEventType, shareId: string, ip: string, message: string, role: string): void {
    this.bus.publish('log', { timestamp: nowNanos(), event, protocol, username: shareId, ip, message, role, instance_id: this.instanceId });
  }

  /**
   * The credentials of a public request on a protected share (a password,
   * email addresses or both): a share token (Bearer), the share password, or
   * for an email-restricted share a listed address with one of its one-time
   * codes (basic auth, spent by this request). Failures are 401 and score
   * score_valid in the defender. Returns how the request was let in and the
   * address a code or token was for ('' otherwise).
   */
  private async authenticate(
    share: Share,
    ip: string,
    creds: ShareCredentials,
    protocol: Protocol,
  ): Promise<{ email: string; how: ShareLogin; what: string; csrf?: string }> {
    if (!share.password_hash && !share.emails.length) return { email: '', how: 'none', what: '' };
    const challenge = { scheme: 'Basic', attributes: { realm: 'Ferry share' } };
    const fail = async (message: string, o: { challenge?: boolean } = {}): Promise<never> => {
      await this.defender.addEvent(ip, 'valid', protocol);
      throw new UnauthorizedError(message, o.challenge === false ? undefined : challenge);
    };
    if (creds.web !== undefined) {
      // a share web session: a share token with a CSRF token, in an HttpOnly cookie
      const info = await this.codes.tokenInfo(share, creds.web.token);
      // no Basic challenge: the browser of a share page would prompt for it
      if (!info?.csrf)
        return fail('the share web session has ended or is not valid: open the share again with its password or a one-time code', { challenge: false });
      if (creds.web.csrf !== null && !sameSecret(creds.web.csrf, info.csrf)) {
        throw new ForbiddenError(
          `missing or wrong X-CSRF-Token header: a request authenticated by the share web session cookie that changes something must carry the session's csrf_token (GET /api/v2/shares/${share.share_id}/web-session)`,
        );
      }
      return { email: info.email, how: 'token', what: 'a share web session', csrf: info.csrf };
    }
    if (creds.bearer !== undefined) {
      const email = await this.codes.verifyToken(share, creds.bearer);
      if (email === null) return fail('invalid or expired share token: authenticate with the share password or a one-time code again');
      return { email, how: 'token', what: 'a share token' };
    }
    if (creds.password === undefined) {
      throw new UnauthorizedError(
        share.emails.length ? 'this share needs a password or a one-time code sent to an allowed address' : 'this share needs a password',
        challenge,
      );
    }
    // a password verified for this share (same id, same last update, same hash) within auth_cache.ttl is not hashed again
    if (share.password_hash && (await this.passwords.verify('share', `${share.share_id}:${share.updated_at}`, share.password_hash, creds.password)))
      return { email: '', how: 'password', what: 'the share password' };
    const email = (creds.username ?? '').trim().toLowerCase();
    if (share.emails.length && share.emails.includes(email)) {
      if (await this.codes.spend(share, email, creds.password)) return { email, how: 'code', what: `a one-time code of ${email}` };
      return fail('invalid, expired or already used one-time code');
    }
    // a wrong share password is a failed login for the defender
    return fail(share.password_hash ? 'invalid share password' : 'invalid, expired or already used one-time code');
  }

  /**
   * What a public page may tell about share `id` before any credentials (null: no such share): whether it asks
   * for a password or one-time codes, whether it has expired, whether `ip` may reach it. The routes tell no more
   * than this already (a 401 challenge, POST /codes's 400, the 403 of an address or an expired share).
   */
  async guardsOf(id: string, ip: string): Promise<{ password: boolean; emails: boolean; expired: boolean; addressAllowed: boolean } | null> {
    const share = await this.em().findOne(Share, { share_id: id });
    if (!share) return null;
    return {
      password: !!share.password_hash,
      emails: share.emails.length > 0,
      expired: !!share.expires_at && share.expires_at <= Date.now(),
      addressAllowed: !share.allow_from.length || ipMatcher(share.allow_from)(ip),
    };
  }

  /**
   * Takes `n` uses of a share and records the last use, atomically: refused
   * (403) when that would pass max_tokens, so concurrent requests can never
   * use a share more often than allowed.
   */
  async consume(id: string, n = 1): Promise<void> {
    const sql = this.em().getConnection() as unknown as SqlRunner;
    const r = await sql.execute<{ affectedRows?: number; rowCount?: number }>(
      'update shares set used_tokens = used_tokens + ?, last_use_at = ? where share_id = ? and (max_tokens = 0 or used_tokens + ? <= max_tokens)',
      [n, Date.now(), id, n],
      'run',
    );
    if (!Number(r?.affectedRows ?? r?.rowCount ?? 0)) {
      throw new FsError(FsErrorCode.Permission, 'the share has reached its maximum number of uses');
    }
  }

  /** Gives back `n` uses taken by `consume` for an operation that then failed (never below 0). */
  async release(id: string, n = 1): Promise<void> {
    const sql = this.em().getConnection() as unknown as SqlRunner;
    await sql.execute('update shares set used_tokens = used_tokens - ? where share_id = ? and used_tokens >= ?', [n, id, n], 'run');
  }

  // ---- EventShares (share expiration check, event action 18) ----------------------

  /** Shares of these users (every share when `usernames` is undefined). */
  async list(sel: { usernames?: string[] }): Promise<ShareInfo[]> {
    if (sel.usernames && !sel.usernames.length) return [];
    const em = this.em();
    const out: ShareInfo[] = [];
    const names = sel.usernames;
    const BATCH = 500;
    const chunks = names ? Array.from({ length: Math.ceil(names.length / BATCH) }, (_, i) => names.slice(i * BATCH, (i + 1) * BATCH)) : [undefined];
    for (const chunk of chunks) {
      const rows = await em.find(Share, chunk ? { user: { username: { $in: chunk } } } : {}, { populate: ['user'], orderBy: { share_id: 'ASC' } });
      for (const s of rows) out.push({ share_id: s.share_id, name: s.name, username: (s.user as User).username, expires_at: s.expires_at });
      em.clear();
    }
    return out;
  }

  /** Deletes a share on behalf of the system (provider event without an actor). */
  async delete(shareId: string): Promise<void> {
    const em = this.em();
    const share = await em.findOne(Share, { share_id: shareId }, { populate: ['user'] });
    if (!share) throw new NotFoundError(`share "${shareId}" not found`);
    const data = this.render(share);
    await em.removeAndFlush(share);
    this.events.emit('delete', 'share', shareId, data, SYSTEM_ACTOR);
  }
}

import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { Admin, PasswordResetCode, User } from '../data/entities/index.js';
import { ForbiddenError, InvalidError, TooManyRequestsError } from '../errors.js';
import type { Mailer } from '../ops/mailer.js';
import { hashPassword } from '../accounts/password.js';
import { passwordStrengthProblem } from '../accounts/password-policy.js';
import { UserService } from '../accounts/user.service.js';
import { AdminService } from '../accounts/admin.service.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { DefenderService } from '../security/defender.service.js';
import type { AccountKind } from './two-factor.service.js';

/** Code alphabet: digits and upper-case letters without 0/O and 1/I/L, easy to read from a mail. */
const ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
/** 12 characters of 31: about 59 bits. */
const CODE_LENGTH = 12;

function newCode(): string {
  let out = '';
  while (out.length < CODE_LENGTH) {
    const b = crypto.randomBytes(1)[0]!;
    if (b < 248) out += ALPHABET[b % ALPHABET.length]; // 248 = 8 × 31: no modulo bias
  }
  return out;
}

const hashCode = (code: string) => crypto.createHash('sha256').update(code.trim().toUpperCase().replace(/[\s-]/g, '')).digest('hex');

const INVALID_CODE = 'the code is not valid for this account, or it has expired or been used: ask for a new one (POST .../forgot-password)';

/**
 * Forgot/reset password by a code mailed to the account's email address.
 *
 * A forgot-password request answers after the same work whatever the
 * account: the per-host count (429 beyond config password_reset.max_requests_per_host)
 * and one row recorded. Looking the account up, checking what refuses a code
 * (no such account, no email address, the users' password-reset-disabled
 * option, an admin without password login, the per-account limit) and mailing
 * happen afterwards, in the background, so neither the status, the body nor
 * the response time tell whether the account exists. Codes are stored as
 * SHA-256 hashes, expire after code_lifetime minutes, are spent by one reset
 * (or by max_attempts wrong tries), and a reset revokes the account's tokens.
 */
/** Milliseconds (plus as much at random) between a forgot-password answer and the start of its account's work. */
const DELIVERY_DELAY_MS = 100;

@injectable()
export class PasswordResetService {
  private readonly pending = new Set<Promise<void>>();
  /** The tail of the deliveries' serial steps on this node. */
  private chain: Promise<void> = Promise.resolve();
  private readonly log: Logger;

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Mailer) private readonly mailer: Mailer,
    @inject(TOKENS.Logger) logger: Logger,
    @inject(UserService) private readonly users: UserService,
    @inject(AdminService) private readonly admins: AdminService,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(DefenderService) private readonly defender: DefenderService,
  ) {
    this.log = logger.child({ component: 'password-reset' });
  }

  private get cfg() {
    return this.config.password_reset;
  }

  /**
   * POST /admins|users/{username}/forgot-password. `answered` resolves once
   * the answer has been written (the route's response finish): the account's
   * work waits for it.
   */
  async forgot(kind: AccountKind, username: string, ip: string, answered: Promise<unknown> = Promise.resolve()): Promise<void> {
    if (!this.mailer.configured) throw new InvalidError('password reset by email is not available: no mail server is configured (config section smtp)');
    const now = Date.now();
    const em = this.orm.em.fork();
    const since = now - this.cfg.window * 60_000;
    const fromHost = await em.count(PasswordResetCode, { ip, created_at: { $gte: since } });
    if (fromHost >= this.cfg.max_requests_per_host) {
      // a slot frees when the oldest counted request leaves the window
      const oldest = await em.findOne(PasswordResetCode, { ip, created_at: { $gte: since } }, { orderBy: { created_at: 'asc' }, fields: ['created_at'] });
      const retryAfterSeconds = Math.max(1, Math.ceil(((oldest?.created_at ?? now) + this.cfg.window * 60_000 - now) / 1000));
      throw new TooManyRequestsError(`too many password reset requests from ${ip}: try again in ${retryAfterSeconds} s`, undefined, { retryAfterSeconds });
    }
    await em.nativeDelete(PasswordResetCode, { created_at: { $lt: now - Math.max(this.cfg.window, this.cfg.code_lifetime) * 60_000 } });
    const row = em.create(PasswordResetCode, {
      kind,
      username,
      ip,
      created_at: now,
      expires_at: now + this.cfg.code_lifetime * 60_000,
      account_id: 0,
      code_hash: '',
      attempts: 0,
    });
    await em.flush();
    // none of the account's work (lookups, the mail) runs before the answer is written, whatever the
    // account: it starts once the response has finished (the SQLite driver is synchronous: a lookup
    // started earlier would hold the answer of a known account), and DELIVERY_DELAY_MS later, so the
    // mail's CPU does not compete with the client reading the answer on the same machine either
    const later = () => new Promise<void>((resolve) => setTimeout(resolve, DELIVERY_DELAY_MS + crypto.randomInt(DELIVERY_DELAY_MS)));
    this.track(answered.then(later).then(() => this.deliver(row.id, kind, username, ip, now)));
  }

  private track(p: Promise<void>): void {
    const q = p.catch((err: unknown) => this.log.error({ err }, 'password reset: mailing the code failed')).finally(() => this.pending.delete(q));
    this.pending.add(q);
  }

  /** Resolves when every code requested so far is mailed (or refused); the app's stop and tests wait for it. */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /** App stop: waits for the mails being sent, at most `ms` (a stuck mail server must not hold the shutdown). */
  async stop(ms = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** Why no code is mailed for this request, or the account and its address. */
  private async target(kind: AccountKind, username: string, since: number): Promise<{ refusal: string } | { id: number; email: string }> {
    const em = this.orm.em.fork();
    const account = (await em.findOne(kind === 'admin' ? Admin : User, { username } as never)) as Admin | User | null;
    if (!account) return { refusal: 'no such account' };
    if (!account.email) return { refusal: 'the account has no email address' };
    if (kind === 'admin' && (account as Admin).filters.disable_password_auth) return { refusal: 'password login is disabled for this admin' };
    if (kind === 'user') {
      const eff = await this.users.findEffectiveUser(username, { folders: false });
      if (((eff?.filters.web_client as string[] | undefined) ?? []).includes('password-reset-disabled')) {
        return { refusal: 'the account has the password-reset-disabled restriction' };
      }
    }
    const mailed = await em.count(PasswordResetCode, { kind, username, account_id: { $gt: 0 }, created_at: { $gte: since } });
    if (mailed >= this.cfg.max_codes_per_account) return { refusal: `${mailed} codes were mailed to this account within ${this.cfg.window} minutes` };
    return { id: account.id, email: account.email };
  }

  /**
   * Runs `fn` after the ones queued before it on this node: two deliveries for
   * one account cannot both count the codes mailed and then both add one.
   */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async deliver(rowId: number, kind: AccountKind, username: string, ip: string, now: number): Promise<void> {
    // the per-account limit's count and the code's row are one step (serial); the mail is sent outside it
    const claimed = await this.serial(async () => {
      const t = await this.target(kind, username, now - this.cfg.window * 60_000);
      if ('refusal' in t) return t;
      const code = newCode();
      await this.orm.em.fork().nativeUpdate(PasswordResetCode, { id: rowId }, { account_id: t.id, code_hash: hashCode(code) });
      return { ...t, code };
    });
    if ('refusal' in claimed) {
      this.log.info({ kind, username, ip, reason: claimed.refusal }, 'password reset requested: no code mailed');
      return;
    }
    const { code, email } = claimed;
    const minutes = this.cfg.code_lifetime;
    await this.mailer.send({
      to: [email],
      subject: 'Ferry password reset code',
      body: [
        `A password reset was requested for the ${kind} account "${username}" (from ${ip}).`,
        '',
        `Code: ${code}`,
        '',
        `It can be used once within ${minutes} minutes: POST /api/v2/${kind}s/${encodeURIComponent(username)}/reset-password with {"code": "...", "password": "<new password>"}.`,
        'If you did not ask for it, ignore this mail: your password stays as it is.',
      ].join('\n'),
    });
    this.log.info({ kind, username, ip }, 'password reset code mailed');
  }

  /** POST /admins|users/{username}/reset-password: sets the password, spends the account's codes, revokes its tokens. */
  async reset(kind: AccountKind, username: string, code: string, password: string, ip: string, actor: Actor): Promise<void> {
    const now = Date.now();
    const em = this.orm.em.fork();
    const account = (await em.findOne(kind === 'admin' ? Admin : User, { username } as never, { populate: ['role'] as never })) as Admin | User | null;
    const rows = await em.find(PasswordResetCode, { kind, username, account_id: account?.id ?? -1, code_hash: { $ne: '' }, expires_at: { $gt: now } });
    const wanted = Buffer.from(hashCode(code));
    const row = rows.find((r) => crypto.timingSafeEqual(Buffer.from(r.code_hash), wanted));
    if (!account || !row) {
      for (const r of rows) {
        r.attempts++;
        if (r.attempts >= this.cfg.max_attempts) r.code_hash = '';
      }
      await em.flush();
      await this.defender.addEvent(ip, account ? 'valid' : 'invalid', 'HTTP');
      throw new InvalidError(INVALID_CODE);
    }
    let minEntropy: number | undefined;
    if (kind === 'user') {
      const eff = await this.users.findEffectiveUser(username, { folders: false });
      if (((eff?.filters.web_client as string[] | undefined) ?? []).includes('password-reset-disabled')) {
        throw new ForbiddenError('this account is not allowed to reset its password (password-reset-disabled)');
      }
      minEntropy = eff?.filters.password_strength as number | undefined;
    } else if ((account as Admin).filters.disable_password_auth) {
      throw new ForbiddenError('password login is disabled for this admin: its password cannot be reset');
    } else {
      this.admins.assertPasswordPolicy(password); // admin_password_policy.min_entropy
    }
    const weak = passwordStrengthProblem(password, minEntropy);
    if (weak) throw new InvalidError(`"password": ${weak}`);
    const passwordHash = await hashPassword(password);
    // the code is spent by whoever changes its hash first
    if (!(await em.nativeUpdate(PasswordResetCode, { id: row.id, code_hash: row.code_hash }, { code_hash: '' }))) throw new InvalidError(INVALID_CODE);
    await em.nativeUpdate(PasswordResetCode, { kind, username, code_hash: { $ne: '' } }, { code_hash: '' });
    const done = Date.now();
    account.password_hash = passwordHash;
    account.filters = { ...account.filters, require_password_change: false } as never;
    if (kind === 'user') (account as User).last_password_change = done; // password_expiration counts from now
    account.tokens_valid_after = done + 1; // every token issued until now is refused
    account.updated_at = done;
    await em.flush();
    this.log.info({ kind, username, ip }, 'password reset');
    const data = kind === 'admin' ? await this.admins.render(account as Admin, em) : await this.users.render(account as User, {}, em);
    this.events.emit('update', kind, username, data, actor);
  }
}

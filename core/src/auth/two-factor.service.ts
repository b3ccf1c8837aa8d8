import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { FerryConfig, TotpConfigEntry } from '../config/schema.js';
import { Admin, User } from '../data/entities/index.js';
import { ErrorKind, ForbiddenError, InvalidError, LoginRefusedError, NotFoundError, type LoginRefusalReason } from '../errors.js';
import { isSecret, type Secret, type SecretsService } from '../secrets/secret.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';
import { UserService } from '../accounts/user.service.js';
import { AdminService } from '../accounts/admin.service.js';
import type { AdminIdentity } from './credentials.js';
import { isValidTotpSecret, matchTotp, newTotpSecret, totpUrl, type TotpAlgo } from './totp.js';
import { MFA_PROTOCOLS, type TotpSaveInput } from './two-factor.input.js';
import { lazyModule } from '../sdk/lazy-module.js';
import { loginProtocolOf, Protocol } from '../sdk/protocols.js';

/** qrcode and its PNG encoder, imported when a TOTP secret is first generated. */
const qrcodeModule = lazyModule(() => import('qrcode'));

export type AccountKind = 'admin' | 'user';
type Account = Admin | User;
type Obj = Record<string, unknown>;

/** filters.totp_config as stored: the secret encrypted, the algorithm of the configuration it was enrolled with. */
export interface StoredTotpConfig {
  enabled: boolean;
  config_name: string;
  secret?: Secret;
  algo?: TotpAlgo;
  /** Users only: the protocols the code is asked on. */
  protocols?: string[];
}

/** filters.recovery_codes as stored (reference.yaml RecoveryCode). */
export interface StoredRecoveryCode {
  secret: Secret;
  used: boolean;
}

export interface GeneratedTotp {
  config_name: string;
  issuer: string;
  secret: string;
  url: string;
  /** PNG, base64. */
  qr_code: string;
}

/** Recovery codes made per account: each replaces one TOTP code once. */
export const RECOVERY_CODES = 12;

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A recovery code: 16 base32 characters (80 bits) in groups of four. */
function newRecoveryCode(): string {
  const bytes = crypto.randomBytes(16);
  const chars = [...bytes].map((b) => B32[b & 31]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

const normalizeRecovery = (code: string) => code.toUpperCase().replace(/[\s-]/g, '');

function entityOf(kind: AccountKind): typeof Admin | typeof User {
  return kind === 'admin' ? Admin : User;
}

export function storedTotp(filters: unknown): StoredTotpConfig | undefined {
  const t = (filters as { totp_config?: StoredTotpConfig } | undefined)?.totp_config;
  return t && typeof t === 'object' ? t : undefined;
}

function storedRecovery(filters: unknown): StoredRecoveryCode[] {
  const r = (filters as { recovery_codes?: StoredRecoveryCode[] } | undefined)?.recovery_codes;
  return Array.isArray(r) ? r.filter((c) => isSecret(c?.secret)) : [];
}

/**
 * The protocols a user's TOTP is asked on: as saved (the save route always
 * stores them); a configuration stored without them (written before they
 * existed) applies to the REST API only.
 */
const totpProtocols = (t: StoredTotpConfig): readonly string[] => t.protocols ?? [Protocol.HTTP];

/** The setup routes an account is sent to when it must have two-factor authentication. */
const setupRoute = (kind: AccountKind) => `POST /api/v2/${kind}/totp/generate, then POST /api/v2/${kind}/totp/save`;

/**
 * Two-factor authentication of admins and users: TOTP configurations
 * (config `mfa.totp`), enrolment (generate, validate, save), recovery codes,
 * the code check at login with replay protection, the admin's disable, and
 * the "must have 2FA" requirement (admins' require_two_factor, users'
 * two_factor_protocols).
 */
@injectable()
export class TwoFactorService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Secrets) private readonly secrets: SecretsService,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
    @inject(UserService) private readonly users: UserService,
    @inject(AdminService) private readonly admins: AdminService,
  ) {}

  /** GET .../totp/configs (reference.yaml TOTPConfig). */
  configs(): TotpConfigEntry[] {
    return this.config.mfa.totp.map((c) => ({ name: c.name, issuer: c.issuer, algo: c.algo }));
  }

  private configNamed(name: string): TotpConfigEntry {
    const c = this.config.mfa.totp.find((x) => x.name === name);
    if (!c) throw new InvalidError(`"config_name": no TOTP configuration is named "${name}" (see GET .../totp/configs)`);
    return c;
  }

  private async load(kind: AccountKind, username: string, em: EntityManager): Promise<Account> {
    const account = await em.findOne(entityOf(kind) as typeof User, { username }, { populate: ['role'] });
    if (!account) throw new NotFoundError(`${kind} "${username}" not found`);
    return account;
  }

  /** Users with the web client option `mfa-disabled` cannot change their two-factor settings. */
  private async assertUserMayChange(kind: AccountKind, username: string): Promise<void> {
    if (kind !== 'user') return;
    const eff = await this.users.findEffectiveUser(username);
    if (((eff?.filters.web_client as string[] | undefined) ?? []).includes('mfa-disabled')) {
      throw new ForbiddenError('this account is not allowed to change its two-factor authentication settings (web_client option mfa-disabled)');
    }
  }

  /** The protocols a user must use 2FA on (two_factor_protocols, groups merged). */
  private async requiredProtocols(username: string): Promise<string[]> {
    const eff = await this.users.findEffectiveUser(username);
    return (eff?.filters.two_factor_protocols as string[] | undefined) ?? [];
  }

  /** POST .../totp/generate: a new secret, its otpauth URL and QR code (nothing is stored yet). */
  async generate(kind: AccountKind, username: string, configName: string): Promise<GeneratedTotp> {
    await this.assertUserMayChange(kind, username);
    const c = this.configNamed(configName);
    const secret = newTotpSecret(c.algo);
    const url = totpUrl(secret, c.algo, c.issuer, username);
    const png = await (await qrcodeModule.load()).default.toBuffer(url, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 256 });
    return { config_name: c.name, issuer: c.issuer, secret, url, qr_code: png.toString('base64') };
  }

  /**
   * POST .../totp/validate: whether `passcode` is the current code of
   * `secret` (before saving it). An unknown configuration or a malformed
   * secret is an InvalidError; a wrong passcode is `false` (the route scores it).
   */
  validate(configName: string, passcode: string, secret: string): boolean {
    const c = this.configNamed(configName);
    if (!isValidTotpSecret(secret)) throw new InvalidError('"secret" must be a base32 TOTP secret of at least 80 bits');
    return matchTotp(secret.toUpperCase(), passcode, c.algo) !== null;
  }

  /** POST .../totp/save: enables (secret encrypted at rest, recovery codes made when there are none) or disables 2FA. */
  async save(kind: AccountKind, username: string, input: TotpSaveInput, actor: Actor): Promise<void> {
    await this.assertUserMayChange(kind, username);
    const em = this.orm.em.fork();
    const account = await this.load(kind, username, em);
    const filters = { ...(account.filters as Obj) };
    const current = storedTotp(filters);
    const required = kind === 'user' ? await this.requiredProtocols(username) : [];
    if (!input.enabled) {
      if (kind === 'admin' && (account as Admin).filters.require_two_factor) {
        throw new ForbiddenError('two-factor authentication is required for this admin (require_two_factor) and cannot be disabled');
      }
      if (required.length) throw new ForbiddenError(`two-factor authentication is required for this user on ${required.join(', ')} and cannot be disabled`);
      delete filters.totp_config;
      delete filters.recovery_codes;
      account.filters = filters as never;
      account.totp_last_step = 0;
    } else {
      const c = this.configNamed(input.config_name!);
      let protocols: string[] | undefined;
      if (kind === 'user') {
        protocols = input.protocols ?? [...MFA_PROTOCOLS];
        const missing = required.filter((p) => !protocols!.includes(p));
        if (missing.length) throw new InvalidError(`"protocols" must include ${missing.join(', ')}: two-factor authentication is required for this user there`);
      }
      let secret: Secret;
      if (input.secret?.status === 'Plain') {
        const plain = (input.secret.payload ?? '').trim().toUpperCase();
        if (!isValidTotpSecret(plain))
          throw new InvalidError('"secret.payload" must be a base32 TOTP secret of at least 80 bits (from POST .../totp/generate)');
        secret = await this.secrets.encrypt(plain, `${kind}:${username}`);
        account.totp_last_step = 0;
      } else if (current?.enabled && current.secret && current.config_name === c.name) {
        secret = current.secret; // the stored secret read back, or none sent: the current one stays
      } else {
        throw new InvalidError('"secret" is required: {"status": "Plain", "payload": "<the secret from POST .../totp/generate>"}');
      }
      filters.totp_config = { enabled: true, config_name: c.name, secret, algo: c.algo, ...(protocols ? { protocols } : {}) } satisfies StoredTotpConfig;
      if (!storedRecovery(filters).length) filters.recovery_codes = await this.newRecoveryCodes(kind, username, []);
      account.filters = filters as never;
    }
    account.updated_at = Date.now();
    await em.flush();
    await this.emitUpdate(kind, account, em, actor);
  }

  private async newRecoveryCodes(kind: AccountKind, username: string, out: string[]): Promise<StoredRecoveryCode[]> {
    const codes: StoredRecoveryCode[] = [];
    for (let i = 0; i < RECOVERY_CODES; i++) {
      const code = newRecoveryCode();
      out.push(code);
      codes.push({ secret: await this.secrets.encrypt(code, `${kind}:${username}`), used: false });
    }
    return codes;
  }

  /** GET .../2fa/recoverycodes: the codes decrypted, with their used flags. */
  async recoveryCodes(kind: AccountKind, username: string): Promise<{ secret: Secret; used: boolean }[]> {
    const account = await this.load(kind, username, this.orm.em.fork());
    const out: { secret: Secret; used: boolean }[] = [];
    for (const c of storedRecovery(account.filters))
      out.push({ secret: { status: 'Plain', payload: await this.secrets.decrypt(c.secret) }, used: Boolean(c.used) });
    return out;
  }

  /** POST .../2fa/recoverycodes: a new set (the old codes stop working); needs 2FA enabled. */
  async regenerateRecoveryCodes(kind: AccountKind, username: string, actor: Actor): Promise<string[]> {
    await this.assertUserMayChange(kind, username);
    const em = this.orm.em.fork();
    const account = await this.load(kind, username, em);
    if (!storedTotp(account.filters)?.enabled)
      throw new InvalidError('two-factor authentication is not enabled: recovery codes come with it (POST .../totp/save)');
    const plain: string[] = [];
    account.filters = { ...(account.filters as Obj), recovery_codes: await this.newRecoveryCodes(kind, username, plain) } as never;
    account.updated_at = Date.now();
    await em.flush();
    await this.emitUpdate(kind, account, em, actor);
    return plain;
  }

  /** PUT /admins|users/{username}/2fa/disable: TOTP and recovery codes removed (role scoping as for the other admin routes). */
  async disable(kind: AccountKind, username: string, caller: AdminIdentity, actor: Actor): Promise<void> {
    const em = this.orm.em.fork();
    const account = kind === 'admin' ? await this.admins.get(username, caller, em) : await this.users.get(username, caller, em);
    if (!storedTotp(account.filters)?.enabled) throw new InvalidError(`two-factor authentication is not enabled for ${kind} "${username}"`);
    const filters = { ...(account.filters as Obj) };
    delete filters.totp_config;
    delete filters.recovery_codes;
    account.filters = filters as never;
    account.totp_last_step = 0;
    account.updated_at = Date.now();
    await em.flush();
    await this.emitUpdate(kind, account, em, actor);
  }

  private async emitUpdate(kind: AccountKind, account: Account, em: EntityManager, actor: Actor): Promise<void> {
    const data = kind === 'admin' ? await this.admins.render(account as Admin, em) : await this.users.render(account as User, {}, em);
    this.events.emit('update', kind, account.username, data, actor);
  }

  /**
   * Whether a login of the account over `protocol` needs its second factor:
   * admins whenever they have TOTP enabled, users when their TOTP names the
   * protocol's login protocol (SFTP as SSH).
   */
  applies(kind: AccountKind, account: Account, protocol: Protocol): boolean {
    const totp = storedTotp(account.filters);
    if (!totp?.enabled) return false;
    return kind === 'admin' || totpProtocols(totp).includes(loginProtocolOf(protocol) ?? protocol);
  }

  /**
   * The second factor of a password login over `protocol`: nothing when the
   * account has no TOTP for it; otherwise `code` must be a TOTP code of a
   * time step later than the last one accepted (one use per code, on every
   * node: the step is kept in the database) or an unused recovery code.
   * Refusals are LoginRefusedError (second-factor-required, -invalid, -replayed).
   */
  async checkLogin(kind: AccountKind, account: Account, code: string | undefined, protocol: Protocol): Promise<'none' | 'totp' | 'recovery'> {
    if (!this.applies(kind, account, protocol)) return 'none';
    const totp = storedTotp(account.filters)!;
    const refuse = (reason: LoginRefusalReason, message: string) => new LoginRefusedError(ErrorKind.Unauthorized, reason, message);
    if (!code) throw refuse('second-factor-required', 'a two-factor authentication code is required');
    if (!isSecret(totp.secret)) throw refuse('second-factor-invalid', 'two-factor authentication is misconfigured for this account');
    code = code.trim();
    if (/^\d{6}$/.test(code)) {
      const algo = totp.algo ?? this.config.mfa.totp.find((c) => c.name === totp.config_name)?.algo ?? 'sha1';
      const step = matchTotp(await this.secrets.decrypt(totp.secret), code, algo);
      if (step === null) throw refuse('second-factor-invalid', 'invalid two-factor authentication code');
      const em = this.orm.em.fork();
      const taken = await em.nativeUpdate(entityOf(kind) as typeof User, { id: account.id, totp_last_step: { $lt: step } }, { totp_last_step: step });
      if (!taken) throw refuse('second-factor-replayed', 'this two-factor authentication code has already been used: wait for the next one');
      return 'totp';
    }
    if (await this.useRecoveryCode(kind, account.id, code)) return 'recovery';
    throw refuse('second-factor-invalid', 'invalid two-factor authentication code');
  }

  /**
   * Marks an unused recovery code used. The filters are rewritten only if
   * the account was not changed since they were read (updated_at as a
   * version), so two concurrent logins cannot both use one code.
   */
  private async useRecoveryCode(kind: AccountKind, id: number, code: string): Promise<boolean> {
    const wanted = Buffer.from(normalizeRecovery(code));
    for (let attempt = 0; attempt < 5; attempt++) {
      const em = this.orm.em.fork();
      const account = await em.findOne(entityOf(kind) as typeof User, { id });
      if (!account) return false;
      const codes = storedRecovery(account.filters);
      let hit = -1;
      for (const [i, c] of codes.entries()) {
        const plain = Buffer.from(normalizeRecovery(await this.secrets.decrypt(c.secret)));
        if (!c.used && plain.length === wanted.length && crypto.timingSafeEqual(plain, wanted)) hit = i;
      }
      if (hit < 0) return false;
      const next = codes.map((c, i) => (i === hit ? { ...c, used: true } : c));
      const version = account.updated_at;
      const changed = await em.nativeUpdate(
        entityOf(kind) as typeof User,
        { id, updated_at: version },
        {
          filters: { ...(account.filters as Obj), recovery_codes: next },
          updated_at: Math.max(Date.now(), version + 1),
        },
      );
      if (changed) return true;
    }
    return false;
  }

  /**
   * Why an authenticated account must set up 2FA before logging in over
   * `protocol` (checked as its login protocol), or null: admins with
   * require_two_factor and users whose two_factor_protocols (groups merged:
   * `effectiveFilters`) name that protocol, without TOTP enabled for it.
   */
  setupRequirement(kind: AccountKind, filters: unknown, effectiveFilters: unknown, protocol: Protocol): string | null {
    const totp = storedTotp(filters);
    if (kind === 'admin') {
      if (!(filters as { require_two_factor?: boolean }).require_two_factor || totp?.enabled) return null;
      return `two-factor authentication is required for this admin: set it up first (${setupRoute('admin')})`;
    }
    const p = loginProtocolOf(protocol) ?? protocol;
    const required = ((effectiveFilters as { two_factor_protocols?: string[] }).two_factor_protocols ?? []).includes(p);
    if (!required || (totp?.enabled && totpProtocols(totp).includes(p))) return null;
    return `two-factor authentication is required for this user on ${p}: set it up first (${setupRoute('user')}, with protocols including ${p})`;
  }
}

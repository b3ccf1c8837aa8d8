/**
 * The settings a user has and a group gives its users (no React here: the
 * unit tests read it): limits and quotas, filters (reference.yaml
 * BaseUserFilters, and UserFilters for a user), virtual folders. Each is
 * turned into the state of its form and back onto the object as read: what
 * the form does not show is kept, and a filter the object did not hold is
 * only added when the form gives it a value (for a user, a false flag is a
 * choice that stops the primary group's value: it is not written unasked).
 */
import type { GroupInput, GroupRow, GroupSettings, UserInput, UserRow } from './account-types.js';

export type UserFilters = NonNullable<UserInput['filters']>;
export type BaseFilters = NonNullable<GroupSettings['filters']>;
export type LoginMethod = NonNullable<BaseFilters['denied_login_methods']>[number];
export type Protocol = NonNullable<BaseFilters['denied_protocols']>[number];
export type MfaProtocol = NonNullable<BaseFilters['two_factor_protocols']>[number];
export type WebClientOption = NonNullable<BaseFilters['web_client']>[number];
export type UserType = NonNullable<BaseFilters['user_type']>;
export type DayOfWeek = NonNullable<BaseFilters['access_time']>[number]['day_of_week'];
type Obj = Record<string, unknown>;

/*
 * The choices of the API's types, in the order shown: records of those types,
 * so the build fails when the OpenAPI document adds or removes one.
 */
const keysOf = <K extends string | number>(r: Record<K, true>) => Object.keys(r) as K[];
export const LOGIN_METHODS = keysOf<LoginMethod>({
  publickey: true,
  password: true,
  'password-over-SSH': true,
  'keyboard-interactive': true,
  'publickey+password': true,
  'publickey+keyboard-interactive': true,
  TLSCertificate: true,
  'TLSCertificate+password': true,
});
export const PROTOCOLS = keysOf<Protocol>({ SSH: true, FTP: true, DAV: true, HTTP: true });
export const MFA_PROTOCOLS = keysOf<MfaProtocol>({ SSH: true, FTP: true, HTTP: true });
export const WEB_CLIENT_OPTIONS = keysOf<WebClientOption>({
  'write-disabled': true,
  'password-change-disabled': true,
  'password-reset-disabled': true,
  'publickey-change-disabled': true,
  'tls-cert-change-disabled': true,
  'mfa-disabled': true,
  'api-key-auth-change-disabled': true,
  'info-change-disabled': true,
  'shares-disabled': true,
  'shares-without-password-disabled': true,
  share_no_password_disabled: true,
  share_policy_change_disabled: true,
});
export const USER_TYPES = keysOf<UserType>({ '': true, LDAPUser: true, OSUser: true });
export const DAYS = [1, 2, 3, 4, 5, 6, 0] as const satisfies readonly DayOfWeek[];
/** The values of tls_username the server knows ('': no login by certificate name). */
export const TLS_USERNAMES = ['', 'CommonName'] as const;

/** The numeric limits of a user (and of a group's user_settings): 0 is none or unlimited. */
export const USER_LIMITS = [
  'quota_size',
  'quota_files',
  'max_sessions',
  'upload_bandwidth',
  'download_bandwidth',
  'upload_data_transfer',
  'download_data_transfer',
  'total_data_transfer',
] as const;
/** A group's limits add the expiration of its new users (days). */
export const GROUP_LIMITS = [...USER_LIMITS, 'expires_in'] as const;
export type LimitKey = (typeof GROUP_LIMITS)[number];
export type LimitFields = Partial<Record<LimitKey, string>>;

/** Numeric filters (0: none). */
export const FILTER_NUMBERS = [
  'max_upload_file_size',
  'password_expiration',
  'password_strength',
  'default_shares_expiration',
  'max_shares_expiration',
  'external_auth_cache_time',
] as const;
export type FilterNumber = (typeof FILTER_NUMBERS)[number];
/** Flags of the filters; require_password_change is a user's only. */
export const FILTER_FLAGS = ['allow_api_key_auth', 'disable_fs_checks', 'is_anonymous', 'require_password_change'] as const;
export type FilterFlag = (typeof FILTER_FLAGS)[number];
export const HOOKS = ['external_auth_disabled', 'pre_login_disabled', 'check_password_disabled'] as const;
export type HookFlag = (typeof HOOKS)[number];

export interface PatternRow {
  path: string;
  /** Comma-separated, as typed. */
  allowed: string;
  denied: string;
  deny_policy: 0 | 1;
  /** The entry as read (what the row does not show is kept). */
  kept?: Obj;
}
export interface BandwidthRow {
  /** IP addresses or CIDR networks, comma-separated as typed. */
  sources: string;
  upload: string;
  download: string;
  kept?: Obj;
}
/** A share policy: the permissions a share of `path` (and below) gets by default. */
export interface SharePolicyRow {
  path: string;
  permissions: string[];
  kept?: Obj;
}
/** The share permissions offered (as the server stores them: read; write or upload). */
export const SHARE_PERMISSIONS = ['read', 'write', 'upload'] as const;
export interface AccessTimeRow {
  day_of_week: DayOfWeek;
  from: string;
  to: string;
}
export interface FolderRow {
  name: string;
  virtual_path: string;
  /** -1: counted in the user's own quota. */
  quota_size: string;
  quota_files: string;
  kept?: Obj;
}

export interface FilterFields {
  /** One IP address or CIDR network a line (or comma-separated). */
  allowed_ip: string;
  denied_ip: string;
  denied_protocols: Protocol[];
  denied_login_methods: LoginMethod[];
  two_factor_protocols: MfaProtocol[];
  web_client: WebClientOption[];
  file_patterns: PatternRow[];
  bandwidth_limits: BandwidthRow[];
  access_time: AccessTimeRow[];
  default_shares_policies: SharePolicyRow[];
  numbers: Record<FilterNumber, string>;
  flags: Record<FilterFlag, boolean>;
  hooks: Record<HookFlag, boolean>;
  tls_username: string;
  start_directory: string;
  user_type: UserType;
  ftp_security: 0 | 1;
  /** A user's only: one address a line. */
  additional_emails: string;
  /** A user's only: its TLS certificates, PEM blocks one after the other. */
  tls_certs: string;
}

/** Everything the sections edit: limits, filters, virtual folders. */
export interface AccountSettings {
  limits: LimitFields;
  filters: FilterFields;
  folders: FolderRow[];
}

/** Items of a list typed as text: split at new lines and commas, trimmed, empty ones left out. */
export const itemsOf = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
const textOf = (list: unknown, sep = '\n'): string => (Array.isArray(list) ? list.map(String).join(sep) : '');
const strOf = (v: unknown): string => (typeof v === 'number' || typeof v === 'string' ? String(v) : '');
/** A number typed in a form: empty or not a number is `empty`. */
const numOf = (s: string, empty = 0): number => (s.trim() === '' || Number.isNaN(Number(s)) ? empty : Number(s));
const listOf = <V>(v: unknown): V[] => (Array.isArray(v) ? ([...v] as V[]) : []);
const objOf = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
/** An entry as read without the members its row shows. */
const keptOf = (v: Obj, shown: string[]): Obj => Object.fromEntries(Object.entries(v).filter(([k]) => !shown.includes(k)));

/** The limits of `o` (a user, or a group's user_settings) the form shows. */
export function limitsOf(o: Obj, keys: readonly LimitKey[]): LimitFields {
  return Object.fromEntries(keys.map((k) => [k, strOf(o[k] ?? 0) || '0']));
}

export function filterFieldsOf(raw: unknown): FilterFields {
  const f = objOf(raw);
  const hooks = objOf(f.hooks);
  return {
    allowed_ip: textOf(f.allowed_ip),
    denied_ip: textOf(f.denied_ip),
    denied_protocols: listOf(f.denied_protocols),
    denied_login_methods: listOf(f.denied_login_methods),
    two_factor_protocols: listOf(f.two_factor_protocols),
    web_client: listOf(f.web_client),
    file_patterns: listOf<Obj>(f.file_patterns).map((p) => ({
      path: strOf(p.path),
      allowed: textOf(p.allowed_patterns, ', '),
      denied: textOf(p.denied_patterns, ', '),
      deny_policy: p.deny_policy === 1 ? 1 : 0,
      kept: keptOf(p, ['path', 'allowed_patterns', 'denied_patterns', 'deny_policy']),
    })),
    bandwidth_limits: listOf<Obj>(f.bandwidth_limits).map((b) => ({
      sources: textOf(b.sources, ', '),
      upload: strOf(b.upload_bandwidth ?? 0),
      download: strOf(b.download_bandwidth ?? 0),
      kept: keptOf(b, ['sources', 'upload_bandwidth', 'download_bandwidth']),
    })),
    access_time: listOf<Obj>(f.access_time).map((a) => ({
      day_of_week: (DAYS as readonly unknown[]).includes(a.day_of_week) ? (a.day_of_week as DayOfWeek) : 1,
      from: strOf(a.from),
      to: strOf(a.to),
    })),
    default_shares_policies: listOf<Obj>(f.default_shares_policies).map((p) => ({
      path: strOf(p.path),
      permissions: listOf<string>(p.permissions),
      kept: keptOf(p, ['path', 'permissions']),
    })),
    numbers: Object.fromEntries(FILTER_NUMBERS.map((k) => [k, strOf(f[k] ?? 0) || '0'])) as Record<FilterNumber, string>,
    flags: Object.fromEntries(FILTER_FLAGS.map((k) => [k, f[k] === true])) as Record<FilterFlag, boolean>,
    hooks: Object.fromEntries(HOOKS.map((k) => [k, hooks[k] === true])) as Record<HookFlag, boolean>,
    tls_username: strOf(f.tls_username),
    start_directory: strOf(f.start_directory),
    user_type: (USER_TYPES as unknown[]).includes(f.user_type) ? (f.user_type as UserType) : '',
    ftp_security: f.ftp_security === 1 ? 1 : 0,
    additional_emails: textOf(f.additional_emails),
    tls_certs: textOf(f.tls_certs),
  };
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/** The PEM certificates of a text, in order; text outside them is kept as an entry of its own (the server judges it, nothing typed is dropped). */
export function certificatesOf(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  for (const m of text.matchAll(PEM)) {
    const before = text.slice(at, m.index).trim();
    if (before) out.push(before);
    out.push(m[0]);
    at = m.index + m[0].length;
  }
  const rest = text.slice(at).trim();
  if (rest) out.push(rest);
  return out;
}

/** "Nothing set" for a filter: what it is when absent (false, 0, '', an empty list or object). */
function isUnset(v: unknown): boolean {
  if (v === undefined || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object' && v) return Object.values(v).every(isUnset);
  return false;
}

/**
 * The filters `base` (as read) with the form's values: members the form does
 * not show are kept; a shown one is written when `base` held it or the form
 * sets it (never added empty). `user` adds the user-only filters.
 */
export function filtersInputOf(f: FilterFields, raw: unknown, user: boolean): Obj {
  const base = objOf(raw);
  const out: Obj = { ...base };
  const put = (k: string, v: unknown) => {
    if (k in base || !isUnset(v)) out[k] = v;
  };
  put('allowed_ip', itemsOf(f.allowed_ip));
  put('denied_ip', itemsOf(f.denied_ip));
  put('denied_protocols', [...f.denied_protocols]);
  put('denied_login_methods', [...f.denied_login_methods]);
  put('two_factor_protocols', [...f.two_factor_protocols]);
  put('web_client', [...f.web_client]);
  put(
    'file_patterns',
    f.file_patterns
      .filter((p) => p.path.trim() || p.allowed.trim() || p.denied.trim())
      .map((p) => ({
        ...p.kept,
        path: p.path.trim(),
        allowed_patterns: itemsOf(p.allowed),
        denied_patterns: itemsOf(p.denied),
        deny_policy: p.deny_policy,
      })),
  );
  put(
    'bandwidth_limits',
    f.bandwidth_limits
      .filter((b) => b.sources.trim() || numOf(b.upload) || numOf(b.download))
      .map((b) => ({ ...b.kept, sources: itemsOf(b.sources), upload_bandwidth: numOf(b.upload), download_bandwidth: numOf(b.download) })),
  );
  put(
    'access_time',
    f.access_time.map((a) => ({ ...a })),
  );
  put(
    'default_shares_policies',
    f.default_shares_policies
      .filter((p) => p.path.trim() || p.permissions.length)
      .map((p) => ({ ...p.kept, path: p.path.trim(), permissions: [...p.permissions] })),
  );
  for (const k of FILTER_NUMBERS) put(k, numOf(f.numbers[k]));
  for (const k of FILTER_FLAGS) if (user || k !== 'require_password_change') put(k, f.flags[k]);
  const hooks = { ...objOf(base.hooks) };
  for (const k of HOOKS) if (k in hooks || f.hooks[k]) hooks[k] = f.hooks[k];
  put('hooks', hooks);
  put('tls_username', f.tls_username);
  put('start_directory', f.start_directory.trim());
  put('user_type', f.user_type);
  put('ftp_security', f.ftp_security);
  if (user) {
    put('additional_emails', itemsOf(f.additional_emails));
    // unchanged text: the certificates as read (their own line ends kept)
    put('tls_certs', f.tls_certs === textOf(base.tls_certs) && Array.isArray(base.tls_certs) ? base.tls_certs : certificatesOf(f.tls_certs));
  }
  return out;
}

export function folderRowsOf(list: unknown): FolderRow[] {
  return listOf<Obj>(list).map((v) => ({
    name: strOf(v.name),
    virtual_path: strOf(v.virtual_path),
    quota_size: strOf(v.quota_size ?? -1),
    quota_files: strOf(v.quota_files ?? -1),
    kept: keptOf(v, ['name', 'virtual_path', 'quota_size', 'quota_files']),
  }));
}

/** The mappings to send: rows with neither a name nor a path are left out (the server checks the others); an empty quota is -1. */
export const foldersInputOf = (rows: FolderRow[]) =>
  rows
    .filter((r) => r.name.trim() || r.virtual_path.trim())
    .map((r) => ({
      ...r.kept,
      name: r.name.trim(),
      virtual_path: r.virtual_path.trim(),
      quota_size: numOf(r.quota_size, -1),
      quota_files: numOf(r.quota_files, -1),
    }));

export const newFolderRow = (): FolderRow => ({ name: '', virtual_path: '', quota_size: '-1', quota_files: '-1' });
export const newPatternRow = (): PatternRow => ({ path: '/', allowed: '', denied: '', deny_policy: 0 });
export const newBandwidthRow = (): BandwidthRow => ({ sources: '', upload: '0', download: '0' });
export const newSharePolicyRow = (): SharePolicyRow => ({ path: '/', permissions: ['read'] });
export const newAccessTimeRow = (): AccessTimeRow => ({ day_of_week: 1, from: '08:00', to: '18:00' });

/** A user's settings as the sections edit them (null: a new user). */
export function userSettingsOf(u: UserRow | null): AccountSettings {
  const o = (u ?? {}) as Obj;
  return { limits: limitsOf(o, USER_LIMITS), filters: filterFieldsOf(o.filters), folders: folderRowsOf(o.virtual_folders) };
}

/** `input` (the user form's object) with the sections' settings over what `base` held. */
export function withUserSettings(input: UserInput, s: AccountSettings, base: UserRow | null): UserInput {
  const out: Obj = { ...input };
  for (const k of USER_LIMITS) out[k] = numOf(s.limits[k] ?? '');
  out.filters = filtersInputOf(s.filters, (base as Obj | null)?.filters, true);
  out.virtual_folders = foldersInputOf(s.folders);
  return out as UserInput;
}

/** A group's settings (its user_settings, and its own virtual folders) as the sections edit them. */
export function groupSettingsOf(g: GroupRow | null): AccountSettings {
  const us = objOf((g as Obj | null)?.user_settings);
  return { limits: limitsOf(us, GROUP_LIMITS), filters: filterFieldsOf(us.filters), folders: folderRowsOf((g as Obj | null)?.virtual_folders) };
}

/** `input` (the group form's object, its user_settings already holding the other members) with the sections' settings. */
export function withGroupSettings(input: GroupInput, s: AccountSettings, base: GroupRow | null): GroupInput {
  const us: Obj = { ...objOf(input.user_settings) };
  for (const k of GROUP_LIMITS) us[k] = numOf(s.limits[k] ?? '');
  us.filters = filtersInputOf(s.filters, objOf((base as Obj | null)?.user_settings).filters, false);
  return { ...input, user_settings: us as GroupSettings, virtual_folders: foldersInputOf(s.folders) } as GroupInput;
}

/**
 * The share form's values and the API's Share object, each way, with the
 * checks the form makes before sending (pure: unit-tested under node). The
 * server checks everything again; its validation messages name a field
 * ("expires_at" must be…), which `fieldOfMessage` finds so the form shows
 * the message next to it.
 */
import { BASE } from './routes.js';

/**
 * A share as GET /api/v2/user/shares answers it (written out rather than
 * taken from the generated types, so node's unit tests compile this module
 * alone; Shares.tsx passes the generated types through these, so a change
 * of the API that breaks them still fails the app's typecheck).
 */
export interface Share {
  id: string;
  name: string;
  description?: string;
  scope: Scope;
  paths: string[];
  username: string;
  created_at?: number;
  updated_at?: number;
  last_use_at?: number;
  expires_at?: number;
  /** '' or the redacted marker. */
  password?: string;
  max_tokens?: number;
  used_tokens?: number;
  allow_from?: string[];
  emails?: string[];
}
/** The body of POST /api/v2/user/shares and PUT /api/v2/user/shares/{id}. */
export interface ShareBody {
  name: string;
  description: string;
  scope: Scope;
  paths: string[];
  expires_at: number;
  password: string;
  max_tokens: number;
  allow_from: string[];
  emails: string[];
}
/** A share policy rule: `scope` is what its permissions allow (a bit set: 0 nothing, 1 read, 2 write, 3 both). */
export interface SharePolicyRule {
  path: string;
  permissions: string[];
  scope: number;
}
/** GET /api/v2/user/share-policy. */
export interface SharePolicy {
  shares_allowed: boolean;
  password_required: boolean;
  default_expiration_days: number;
  max_expiration_days: number;
  policies: SharePolicyRule[];
  /** share_policy_change_disabled: a scope beyond the rules is refused. */
  policy_change_disabled: boolean;
}

/** ShareScope: 1 read, 2 write, 3 read and write. */
export type Scope = 1 | 2 | 3;
export const SCOPES: readonly Scope[] = [1, 2, 3];

/** The marker the API answers for a share's password, and takes back to keep it. */
export const REDACTED_PASSWORD = '[**redacted**]';

/** The fields of the form, named as the API names them (so an API message finds its field). */
export type Field = 'name' | 'description' | 'scope' | 'paths' | 'expires_at' | 'password' | 'max_tokens' | 'allow_from' | 'emails';
export const FIELDS: readonly Field[] = ['name', 'description', 'scope', 'paths', 'expires_at', 'password', 'max_tokens', 'allow_from', 'emails'];

export interface ShareForm {
  name: string;
  description: string;
  scope: Scope;
  /** One path a line. */
  paths: string;
  /** The last day of the share, YYYY-MM-DD in local time ('' for none). */
  expires: string;
  /** The expiry the share had when the form was opened, kept when the day is left unchanged. */
  expiresAt: number;
  /** A new password ('' keeps the current one of a protected share, or means none). */
  password: string;
  /** The share being edited has a password. */
  hasPassword: boolean;
  /** Remove the current password. */
  removePassword: boolean;
  /** '' or 0 for unlimited. */
  maxTokens: string;
  /** One address or network a line. */
  allowFrom: string;
  /** One email address a line: an email-restricted share. */
  emails: string;
}

export type FieldErrors = Partial<Record<Field, string>>;

/** What the form checks itself (the server's rules, told before a round trip). */
export interface FormMessages {
  nameRequired: string;
  pathsRequired: string;
  writeNeedsOneFolder: string;
  expiryInPast: string;
  expiryTooLate: (days: number) => string;
  expiryRequired: (days: number) => string;
  passwordRequired: string;
  maxTokensInvalid: string;
  scopeBeyondPolicy: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** YYYY-MM-DD of a time, in local time. */
export function localDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The last millisecond of a local day YYYY-MM-DD (NaN if it is not one). */
export function endOfDay(day: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return NaN;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59, 999);
  return d.getMonth() === Number(m[2]) - 1 ? d.getTime() : NaN;
}

/** The distinct non-blank items of a text, one a line (or, with `commas`, also separated by commas). */
const lines = (s: string, commas = false): string[] => [
  ...new Set(
    s
      .split(commas ? /[\n,]/ : /\n/)
      .map((x) => x.trim())
      .filter(Boolean),
  ),
];

/** The paths of the form's text: one a line, from the home ('/' added), without a trailing '/', each once. */
export function pathsOf(text: string): string[] {
  return [...new Set(lines(text).map((p) => (p.startsWith('/') ? p : `/${p}`).replace(/(.)\/+$/, '$1')))];
}

/** `parent` is `child` or one of its parents, segment by segment (/pub is one of /pub/a, not of /public). */
const isUnder = (parent: string, child: string) => parent === '/' || child === parent || child.startsWith(`${parent}/`);

/** The rule of a share path: the one whose path is its longest prefix, segment by segment (null: none), as the server finds it. */
export function ruleOf(rules: readonly SharePolicyRule[], path: string): SharePolicyRule | null {
  let best: SharePolicyRule | null = null;
  for (const r of rules) if (isUnder(r.path, path) && (!best || r.path.length > best.path.length)) best = r;
  return best;
}

/** What the share policy says of a share of `paths`. */
export interface ScopePolicy {
  /** The scopes the rules of the paths allow together (a bit set; 3 when no rule applies). */
  allowed: number;
  /** A rule applies to one of the paths at least. */
  applies: boolean;
  /** A scope beyond `allowed` is refused (share_policy_change_disabled), rather than only not preselected. */
  locked: boolean;
}

export function scopePolicy(policy: SharePolicy | null, paths: readonly string[]): ScopePolicy {
  let allowed = 3;
  let applies = false;
  for (const p of paths) {
    const rule = ruleOf(policy?.policies ?? [], p);
    if (rule) {
      applies = true;
      allowed &= rule.scope;
    }
  }
  return { allowed, applies, locked: !!policy?.policy_change_disabled };
}

/** The scope is offered: within the rules, or anything when they are only a default. */
export const scopeOffered = (sp: ScopePolicy, scope: Scope) => !sp.locked || (scope & ~sp.allowed) === 0;

/** Paths chosen in the file browser for a new share; `oneFile`: a single path that is a file (no uploads into it). */
export interface ShareChoice {
  paths: string[];
  oneFile: boolean;
}

/**
 * The scope a new share of `count` paths starts with: what the rules allow (download only for several
 * paths or a file, uploads needing exactly one folder, when the rules allow downloads), else download.
 */
export function defaultScope(sp: ScopePolicy, count: number, oneFile = false): Scope {
  if (!sp.applies || !sp.allowed) return 1;
  if ((count > 1 || oneFile) && sp.allowed & 1) return 1;
  return sp.allowed as Scope;
}

/** A new share's form: the paths chosen in the file browser, the scope and expiry the policy sets by default. */
export function newForm(paths: readonly string[], policy: SharePolicy | null, now = Date.now(), oneFile = false): ShareForm {
  const days = policy?.default_expiration_days ?? 0;
  const name = paths.length === 1 ? (paths[0]!.split('/').filter(Boolean).at(-1) ?? '') : '';
  const chosen = pathsOf(paths.join('\n'));
  return {
    name,
    description: '',
    scope: defaultScope(scopePolicy(policy, chosen), chosen.length, oneFile),
    paths: paths.join('\n'),
    expires: days ? localDay(now + days * 86_400_000) : '',
    expiresAt: 0,
    password: '',
    hasPassword: false,
    removePassword: false,
    maxTokens: '',
    allowFrom: '',
    emails: '',
  };
}

/** The form of an existing share. */
export function formOf(s: Share): ShareForm {
  const expiresAt = s.expires_at ?? 0;
  return {
    name: s.name,
    description: s.description ?? '',
    scope: s.scope,
    paths: s.paths.join('\n'),
    expires: expiresAt ? localDay(expiresAt) : '',
    expiresAt,
    password: '',
    hasPassword: !!s.password,
    removePassword: false,
    maxTokens: s.max_tokens ? String(s.max_tokens) : '',
    allowFrom: (s.allow_from ?? []).join('\n'),
    emails: (s.emails ?? []).join('\n'),
  };
}

/**
 * The API object of a form, or the errors of its fields. The expiry is the
 * end of the chosen day (or the share's own when the day is unchanged).
 */
export function bodyOf(f: ShareForm, policy: SharePolicy | null, m: FormMessages, now = Date.now()): { body: ShareBody } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const name = f.name.trim();
  if (!name) errors.name = m.nameRequired;
  const paths = pathsOf(f.paths);
  if (!paths.length) errors.paths = m.pathsRequired;
  else if (f.scope !== 1 && paths.length !== 1) errors.paths = m.writeNeedsOneFolder;
  if (paths.length && !scopeOffered(scopePolicy(policy, paths), f.scope)) errors.scope = m.scopeBeyondPolicy;

  let expires_at = 0;
  if (f.expires) {
    expires_at = f.expiresAt && localDay(f.expiresAt) === f.expires ? f.expiresAt : endOfDay(f.expires);
    if (Number.isNaN(expires_at) || expires_at <= now) errors.expires_at = m.expiryInPast;
  }
  const maxDays = policy?.max_expiration_days ?? 0;
  if (maxDays && !errors.expires_at) {
    if (!expires_at) errors.expires_at = m.expiryRequired(maxDays);
    else if (expires_at > now + maxDays * 86_400_000) {
      // the last allowed day is offered: its end may pass the limit by hours, so cap it
      if (localDay(expires_at) === localDay(now + maxDays * 86_400_000)) expires_at = now + maxDays * 86_400_000;
      else errors.expires_at = m.expiryTooLate(maxDays);
    }
  }

  let password: string;
  if (f.password) password = f.password;
  else if (f.hasPassword && !f.removePassword) password = REDACTED_PASSWORD;
  else password = '';
  if (!password && policy?.password_required) errors.password = m.passwordRequired;

  const tokens = f.maxTokens.trim() === '' ? 0 : Number(f.maxTokens);
  if (!Number.isInteger(tokens) || tokens < 0 || tokens > 2147483647) errors.max_tokens = m.maxTokensInvalid;

  if (Object.keys(errors).length) return { errors };
  return {
    body: {
      name,
      description: f.description.trim(),
      scope: f.scope,
      paths,
      expires_at,
      password,
      max_tokens: tokens,
      allow_from: lines(f.allowFrom, true),
      emails: lines(f.emails, true).map((e) => e.toLowerCase()),
    },
  };
}

/**
 * The form field an API validation message names: joi's `"field"` or
 * `"field[2]"` at its start (`"expires_at" must be in the future`,
 * `"paths": /x does not exist`, `"allow_from[0]" must be…`); null when it
 * names none of them.
 */
export function fieldOfMessage(message: string): Field | null {
  const m = /^"([a-z_]+)(?:\[\d+\])?"/.exec(message);
  const name = m?.[1] as Field | undefined;
  return name && FIELDS.includes(name) ? name : null;
}

/** The public page of a share, for external parties. */
export function shareLink(origin: string, id: string): string {
  return `${origin}${BASE}/pub/${encodeURIComponent(id)}`;
}

/** Uses left of a share (null: unlimited). */
export function usesLeft(s: Pick<Share, 'max_tokens' | 'used_tokens'>): number | null {
  return s.max_tokens ? Math.max(0, s.max_tokens - (s.used_tokens ?? 0)) : null;
}

/** The share can no longer be used: expired, or all its uses spent. */
export function isSpent(s: Pick<Share, 'max_tokens' | 'used_tokens' | 'expires_at'>, now = Date.now()): boolean {
  return (!!s.expires_at && s.expires_at <= now) || usesLeft(s) === 0;
}

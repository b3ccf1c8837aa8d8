import path from 'node:path';
import type { Folder, StoredFilesystem, User } from '../data/entities/index.js';
import { getPath, setPath } from '../util/dotted-path.js';
import { normalizeVirtualPath } from '../fs/path.js';
import type { StoredGroupSettings } from './account-lookup.js';
import { interpolatePlaceholders, missingPlaceholdersError, type EffectiveUser, type EffectiveVirtualFolder } from './effective-user.js';
import { SHARE_WEB_CLIENT_OPTIONS } from './account.input.js';
import { GroupType } from './account-numbers.js';

type Obj = Record<string, unknown>;

export interface MergeGroup {
  id: number;
  name: string;
  /** 1 primary, 2 secondary, 3 membership. */
  type: number;
  settings: StoredGroupSettings;
}

export interface MergeFolderMapping {
  folder: Folder;
  virtual_path: string;
  quota_size: number;
  quota_files: number;
}

export interface MergeInput {
  user: User;
  role: string;
  groups: MergeGroup[];
  userFolders: MergeFolderMapping[];
  /** Folder mappings of the user's primary and secondary groups, keyed by group id. */
  groupFolders: Map<number, MergeFolderMapping[]>;
  /** The provider plugin's placeholderFields (empty for an unknown provider). */
  placeholderFields(provider: number): string[];
}

/** Filters whose lists add up across the user, its primary and its secondary groups. */
const ADDITIVE_FILTERS = ['allowed_ip', 'denied_ip', 'denied_login_methods', 'denied_protocols', 'bandwidth_limits'];
/** Share policies: supplied by every group, membership groups included. */
const SHARE_FILTERS = ['default_shares_policies', 'default_shares_expiration', 'max_shares_expiration'];

/** "Left empty" for a setting: unset, '', 0, an empty list or object (false is a choice, not empty). */
function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as Obj).length === 0;
  return false;
}

function union(a: unknown, b: unknown): unknown[] {
  const out = [...((a as unknown[] | undefined) ?? [])];
  const seen = new Set(out.map((x) => JSON.stringify(x)));
  for (const x of (b as unknown[] | undefined) ?? []) {
    const k = JSON.stringify(x);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(x);
    }
  }
  return out;
}

/** Entries with a `path` not already present (the user's, or an earlier group's, win). */
function mergeByPath(a: unknown, b: unknown, interp: (s: string) => string): Obj[] {
  const out = [...((a as Obj[] | undefined) ?? [])];
  const paths = new Set(out.map((x) => x.path));
  for (const x of (b as Obj[] | undefined) ?? []) {
    const p = safePath(interp(String(x.path ?? '')));
    if (p && !paths.has(p)) {
      paths.add(p);
      out.push({ ...x, path: p });
    }
  }
  return out;
}

/** A virtual path after interpolation, or null when the result is not a valid path. */
function safePath(p: string): string | null {
  try {
    return normalizeVirtualPath(p);
  } catch {
    return null;
  }
}

/** A local directory after interpolation, normalised; '' when the result is not usable. */
function localDir(template: string, interp: (s: string) => string): string {
  if (!template) return '';
  const v = interp(template);
  if (v.replace(/\\/g, '/').split('/').includes('..')) return '';
  return path.normalize(v);
}

function interpolateFs(fs: StoredFilesystem, fields: string[], interp: (s: string) => string): StoredFilesystem {
  if (!fields.length) return fs;
  const out = structuredClone(fs);
  for (const key of Object.keys(out)) {
    const cfg = out[key];
    if (key === 'provider' || !cfg || typeof cfg !== 'object') continue;
    for (const f of fields) {
      const v = getPath(cfg as Obj, f);
      if (typeof v === 'string') setPath(cfg as Obj, f, interp(v));
    }
  }
  return out;
}

/**
 * Builds the effective view of a user (see EffectiveUser):
 * - the primary group (type 1) fills what the user leaves empty: home_dir,
 *   filesystem (a user on provider 0 takes the group's other provider),
 *   permissions per path, quotas, bandwidth and transfer limits, the
 *   expiration (expires_in days after creation) and every filter;
 * - primary and secondary (type 2) groups add virtual folders, permissions of
 *   sub-paths, file patterns and the additive filters (IP lists, denied
 *   protocols and login methods, bandwidth limits);
 * - every group, membership (type 3) included, adds share policies
 *   (default_shares_policies, share web_client options, share expirations).
 * The user's own values always win; among groups, the primary then the
 * others by name. %username%, %role%, %custom1%..%custom10% are interpolated
 * in home directories, mapped paths, virtual paths, permission paths and the
 * providers' placeholder fields.
 *
 * A placeholder without a value (%role% for a user without a role, a custom
 * value unset or empty) refuses the user with a 403 naming it (see
 * missingPlaceholdersError) rather than becoming '': a group home_dir
 * '/srv/team/%custom1%' must not collapse into one '/srv/team' shared by
 * every member lacking the value, nor a permission path '/%custom1%' become
 * '/'. Only templates the user actually gets count (a group home_dir the
 * user overrides does not), and virtual folders only when they are merged.
 */
export function mergeEffectiveUser(m: MergeInput): EffectiveUser {
  const u = m.user;
  const missing = new Map<string, string>();
  const interp = (s: string) =>
    interpolatePlaceholders(s, { username: u.username, role: m.role, custom_placeholders: u.custom_placeholders }, (ph) => {
      if (!missing.has(ph)) missing.set(ph, s);
    });
  const groups = [...m.groups].sort((a, b) => a.type - b.type || a.name.localeCompare(b.name));
  const primary = groups.find((g) => g.type === GroupType.Primary);
  const ps = primary?.settings ?? {};

  let filesystem: StoredFilesystem = u.filesystem ?? { provider: 0 };
  if (filesystem.provider === 0 && ps.filesystem && ps.filesystem.provider !== 0) filesystem = ps.filesystem;
  filesystem = interpolateFs(filesystem, m.placeholderFields(filesystem.provider), interp);

  const pick = (own: number, group: number | undefined) => (own ? own : (group ?? 0));
  let expiration = u.expiration_date;
  if (!expiration && ps.expires_in) expiration = u.created_at + ps.expires_in * 86_400_000;

  // permissions: the user's, then the primary group's per path, then sub-paths of secondary groups
  const permissions: Record<string, string[]> = { ...u.permissions };
  for (const g of groups.filter((x) => x.type !== 3)) {
    for (const [k, v] of Object.entries(g.settings.permissions ?? {})) {
      if (k === '/' && g.type !== GroupType.Primary) continue;
      const p = safePath(interp(k));
      if (p && !permissions[p]) permissions[p] = v;
    }
  }

  // filters
  const filters: Obj = structuredClone(u.filters ?? {});
  for (const g of groups) {
    const gf = (g.settings.filters ?? {}) as Obj;
    for (const [k, v] of Object.entries(gf)) {
      if (SHARE_FILTERS.includes(k)) {
        if (k === 'default_shares_policies') filters[k] = mergeByPath(filters[k], v, interp);
        else if (isEmpty(filters[k])) filters[k] = v;
        continue;
      }
      if (k === 'web_client') {
        const shareOpts = ((v as string[]) ?? []).filter((o) => SHARE_WEB_CLIENT_OPTIONS.includes(o));
        if (g.type === GroupType.Primary && isEmpty(filters[k])) filters[k] = [...(v as string[])];
        else filters[k] = union(filters[k], shareOpts);
        continue;
      }
      if (g.type === GroupType.Membership) continue;
      if (k === 'start_directory') {
        // a virtual path: placeholders interpolated like the other paths a group supplies
        if (g.type === GroupType.Primary && isEmpty(filters[k])) filters[k] = safePath(interp(String(v ?? ''))) ?? '';
        continue;
      }
      if (ADDITIVE_FILTERS.includes(k)) filters[k] = union(filters[k], v);
      else if (k === 'file_patterns') filters[k] = mergeByPath(filters[k], v, interp);
      else if (g.type === GroupType.Primary && (filters[k] === undefined || (typeof filters[k] !== 'boolean' && isEmpty(filters[k])))) {
        filters[k] = structuredClone(v);
      }
    }
  }
  for (const k of ['web_client', 'default_shares_policies']) if (Array.isArray(filters[k]) && !(filters[k] as unknown[]).length) delete filters[k];

  // virtual folders: the user's, then the primary and secondary groups' at paths still free
  const vfolders: EffectiveVirtualFolder[] = [];
  const used = new Set<string>();
  const addFolder = (f: MergeFolderMapping, fromGroup: boolean) => {
    const vp = fromGroup ? safePath(interp(f.virtual_path)) : f.virtual_path;
    if (!vp || vp === '/' || used.has(vp)) return;
    used.add(vp);
    const fs = f.folder.filesystem ?? { provider: 0 };
    vfolders.push({
      folder_id: f.folder.id,
      name: f.folder.name,
      virtual_path: vp,
      quota_size: f.quota_size,
      quota_files: f.quota_files,
      mapped_path: localDir(f.folder.mapped_path, interp),
      filesystem: interpolateFs(fs, m.placeholderFields(fs.provider), interp),
      used_quota_size: f.folder.used_quota_size,
      used_quota_files: f.folder.used_quota_files,
    });
  };
  for (const f of m.userFolders) addFolder(f, false);
  for (const g of groups.filter((x) => x.type !== 3)) for (const f of m.groupFolders.get(g.id) ?? []) addFolder(f, true);
  vfolders.sort((a, b) => a.virtual_path.localeCompare(b.virtual_path));
  const homeDir = localDir(u.home_dir || ps.home_dir || '', interp);
  if (missing.size) throw missingPlaceholdersError(u.username, missing);

  return {
    id: u.id,
    username: u.username,
    role: m.role,
    email: u.email,
    status: u.status,
    expiration_date: expiration,
    home_dir: homeDir,
    filesystem,
    permissions,
    virtual_folders: vfolders,
    max_sessions: pick(u.max_sessions, ps.max_sessions),
    quota_size: pick(u.quota_size, ps.quota_size),
    quota_files: pick(u.quota_files, ps.quota_files),
    used_quota_size: u.used_quota_size,
    used_quota_files: u.used_quota_files,
    upload_bandwidth: pick(u.upload_bandwidth, ps.upload_bandwidth),
    download_bandwidth: pick(u.download_bandwidth, ps.download_bandwidth),
    upload_data_transfer: pick(u.upload_data_transfer, ps.upload_data_transfer),
    download_data_transfer: pick(u.download_data_transfer, ps.download_data_transfer),
    total_data_transfer: pick(u.total_data_transfer, ps.total_data_transfer),
    used_upload_data_transfer: u.used_upload_data_transfer,
    used_download_data_transfer: u.used_download_data_transfer,
    first_upload: u.first_upload,
    first_download: u.first_download,
    filters,
    groups: groups.map((g) => ({ name: g.name, type: g.type })),
    custom_placeholders: [...(u.custom_placeholders ?? [])],
  };
}

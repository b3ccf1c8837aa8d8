import { DomainError, ForbiddenError } from '../errors.js';
import type { StoredFilesystem } from '../data/entities/index.js';

/** A virtual folder as mounted for one user (group and user mappings merged). */
export interface EffectiveVirtualFolder {
  folder_id: number;
  name: string;
  /** Normalised virtual path where the folder is mounted ('/shared'). */
  virtual_path: string;
  /** -1: counts against the user's quota. */
  quota_size: number;
  quota_files: number;
  /** Local root for providers 0 and 4 (placeholders interpolated). */
  mapped_path: string;
  /** Secrets still encrypted; placeholders interpolated. */
  filesystem: StoredFilesystem;
  used_quota_size: number;
  used_quota_files: number;
}

/**
 * A user as it logs in: its own settings with the groups' settings merged in
 * (primary group fills what the user leaves empty; secondary groups add
 * virtual folders; membership groups add shared policies) and %username%,
 * %role%, %customN% interpolated. Computed at login/token time by
 * UserService.effectiveUser(); the file API works only with this view.
 */
export interface EffectiveUser {
  id: number;
  username: string;
  role: string;
  email: string;
  status: number;
  expiration_date: number;
  /** Local root of the user's own filesystem (providers 0 and 4). */
  home_dir: string;
  filesystem: StoredFilesystem;
  permissions: Record<string, string[]>;
  virtual_folders: EffectiveVirtualFolder[];
  max_sessions: number;
  quota_size: number;
  quota_files: number;
  used_quota_size: number;
  used_quota_files: number;
  upload_bandwidth: number;
  download_bandwidth: number;
  upload_data_transfer: number;
  download_data_transfer: number;
  total_data_transfer: number;
  used_upload_data_transfer: number;
  used_download_data_transfer: number;
  /**
   * When the first upload and download were recorded, as read with the user
   * (0: not yet). A transfer records its kind's only while this says 0, and
   * the database update stays guarded (another session may have been first).
   */
  first_upload?: number;
  first_download?: number;
  /** BaseUserFilters merged (file_patterns, max_upload_file_size, web_client, denied_protocols, bandwidth_limits ...). */
  filters: Record<string, unknown>;
  groups: { name: string; type: number }[];
  /** Values of %custom1% .. %custom10%. */
  custom_placeholders: string[];
}

/** Any placeholder interpolated at login: %username%, %role%, %custom1%..%custom10%. */
const PLACEHOLDER = /%(username|role|custom(?:10|[1-9]))%/g;

/** Whether a template holds a placeholder interpolated at login. */
export function hasPlaceholders(s: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(s);
}

/**
 * Replaces %username%, %role% and %custom1%..%custom10% in a string. A
 * placeholder without a value (no role, a custom value unset or empty)
 * becomes '' and is reported to `onMissing`: the merge refuses such a user
 * (see mergeEffectiveUser), since '/srv/team/%custom1%' would otherwise
 * collapse to one '/srv/team' shared by every user lacking the value.
 */
export function interpolatePlaceholders(
  s: string,
  u: { username: string; role?: string; custom_placeholders?: string[] },
  onMissing?: (placeholder: string) => void,
): string {
  return s.replace(PLACEHOLDER, (m: string, name: string) => {
    const v = name === 'username' ? u.username : name === 'role' ? u.role : u.custom_placeholders?.[Number(name.slice(6)) - 1];
    if (!v) onMissing?.(m);
    return v ?? '';
  });
}

/** Data of the 403 that refuses a user whose templates need a value it lacks. */
export interface MissingPlaceholdersData {
  missing_placeholders: string[];
}

/**
 * The refusal of a user whose home directory, prefix, mapped or virtual path
 * (its own or a group's) uses placeholders it has no value for. `missing`:
 * placeholder -> the first template that uses it.
 */
export function missingPlaceholdersError(username: string, missing: Map<string, string>): DomainError<MissingPlaceholdersData> {
  const parts = [...missing].map(([ph, template]) => {
    const why = ph === '%role%' ? 'the user has no role' : `custom_placeholders[${Number(ph.slice(7, -1)) - 1}] is not set`;
    return `"${template}" needs ${ph} (${why})`;
  });
  return new ForbiddenError<MissingPlaceholdersData>(`user "${username}" cannot be used until its placeholders have values: ${parts.join('; ')}`, {
    missing_placeholders: [...missing.keys()],
  });
}

/** Whether an error is the refusal built by missingPlaceholdersError(). */
export function isMissingPlaceholdersError(err: unknown): err is DomainError<MissingPlaceholdersData> {
  return err instanceof DomainError && Array.isArray((err.data as Partial<MissingPlaceholdersData> | null)?.missing_placeholders);
}

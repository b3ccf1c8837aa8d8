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
  /** BaseUserFilters merged (file_patterns, max_upload_file_size, web_client, denied_protocols, bandwidth_limits ...). */
  filters: Record<string, unknown>;
  groups: { name: string; type: number }[];
  /** Values of %custom1% .. %custom10%. */
  custom_placeholders: string[];
}

/** Replaces %username%, %role% and %custom1%..%custom10% in a string. */
export function interpolatePlaceholders(
  s: string,
  u: { username: string; role?: string; custom_placeholders?: string[] },
): string {
  return s
    .replace(/%username%/g, u.username)
    .replace(/%role%/g, u.role ?? '')
    .replace(/%custom(10|[1-9])%/g, (_m, n: string) => u.custom_placeholders?.[Number(n) - 1] ?? '');
}

import { ForbiddenError } from '../errors.js';
import type { AdminIdentity } from '../auth/credentials.js';

export const ADMIN_PERMISSIONS = [
  '*',
  'add_users',
  'edit_users',
  'del_users',
  'view_users',
  'view_conns',
  'close_conns',
  'view_status',
  'manage_folders',
  'manage_groups',
  'quota_scans',
  'manage_defender',
  'view_defender',
  'view_events',
  'disable_mfa',
  'manage_ip_lists',
] as const;
export type AdminPermission = (typeof ADMIN_PERMISSIONS)[number];

export const USER_PERMISSIONS = [
  '*',
  'list',
  'download',
  'upload',
  'overwrite',
  'delete',
  'delete_files',
  'delete_dirs',
  'rename',
  'rename_files',
  'rename_dirs',
  'create_dirs',
  'create_symlinks',
  'chmod',
  'chown',
  'chtimes',
  'copy',
] as const;

export function hasAdminPermission(admin: AdminIdentity, perm: AdminPermission): boolean {
  return admin.permissions.includes('*') || admin.permissions.includes(perm);
}

/** Throws 403 unless the admin holds `*` or one of `perms`. */
export function assertAdminPermission(admin: AdminIdentity, ...perms: AdminPermission[]): void {
  if (perms.some((p) => hasAdminPermission(admin, p))) return;
  throw new ForbiddenError(`permission denied: this operation requires the "${perms.join('" or "')}" permission`);
}

/** Super admin: `*` and no role. Only super admins manage roles and other roles' objects. */
export function isSuperAdmin(admin: AdminIdentity): boolean {
  return admin.permissions.includes('*') && !admin.role;
}

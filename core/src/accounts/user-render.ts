// How a user is shown: the API form, or the backup form (UserService loads the rows in batches).
import type { Role, User } from '../data/entities/index.js';
import { renderSecretsIn } from './filesystem-config.js';
import type { FolderMappingRow, GroupMappingRow } from './user-rows.js';

type Obj = Record<string, unknown>;

export interface RenderOptions {
  /** Secrets in their encrypted form (confidential_data=1 by a `*` admin). */
  confidential?: boolean;
  /** Backup form: password hash, 2FA material, no ids or read-only extras. */
  dump?: boolean;
}

/** Renders a stored filesystem config (FilesystemConfigService.render): secrets redacted unless `confidential`. */
export type RenderFilesystem = (fs: User['filesystem'], confidential: boolean) => Obj;

/** Renders a user's filters: 2FA shown as a summary (dumps keep it whole, encrypted). */
function renderFilters(f: Obj, o: RenderOptions): Obj {
  const out: Obj = { ...f };
  if (o.dump) return renderSecretsIn(out, true);
  const totp = (f.totp_config ?? null) as Obj | null;
  delete out.recovery_codes;
  if (totp) out.totp_config = { enabled: Boolean(totp.enabled), config_name: totp.config_name ?? '', protocols: totp.protocols ?? [] };
  return out;
}

/**
 * A user as the API shows it (`dump`: as a backup holds it), from its row
 * and its group and folder mappings (loaded in batches by UserService).
 */
export function renderUser(u: User, groups: GroupMappingRow[], folders: FolderMappingRow[], o: RenderOptions, renderFs: RenderFilesystem): Obj {
  const conf = Boolean(o.confidential || o.dump);
  const out: Obj = {
    id: u.id,
    status: u.status,
    username: u.username,
    email: u.email,
    description: u.description,
    expiration_date: u.expiration_date,
    has_password: Boolean(u.password_hash),
    public_keys: u.public_keys ?? [],
    home_dir: u.home_dir,
    virtual_folders: folders
      .map((m) =>
        o.dump
          ? { name: m.folder.name, virtual_path: m.virtual_path, quota_size: m.quota_size, quota_files: m.quota_files }
          : {
              id: m.folder.id,
              name: m.folder.name,
              description: m.folder.description,
              mapped_path: m.folder.mapped_path,
              filesystem: renderFs(m.folder.filesystem, conf),
              used_quota_size: m.folder.used_quota_size,
              used_quota_files: m.folder.used_quota_files,
              last_quota_update: m.folder.last_quota_update,
              virtual_path: m.virtual_path,
              quota_size: m.quota_size,
              quota_files: m.quota_files,
            },
      )
      .sort((a, b) => a.virtual_path.localeCompare(b.virtual_path)),
    uid: u.uid,
    gid: u.gid,
    max_sessions: u.max_sessions,
    quota_size: u.quota_size,
    quota_files: u.quota_files,
    permissions: u.permissions ?? {},
    used_quota_size: u.used_quota_size,
    used_quota_files: u.used_quota_files,
    last_quota_update: u.last_quota_update,
    upload_bandwidth: u.upload_bandwidth,
    download_bandwidth: u.download_bandwidth,
    upload_data_transfer: u.upload_data_transfer,
    download_data_transfer: u.download_data_transfer,
    total_data_transfer: u.total_data_transfer,
    used_upload_data_transfer: u.used_upload_data_transfer,
    used_download_data_transfer: u.used_download_data_transfer,
    created_at: u.created_at,
    updated_at: u.updated_at,
    last_login: u.last_login,
    first_download: u.first_download,
    first_upload: u.first_upload,
    last_password_change: u.last_password_change,
    filters: renderFilters(u.filters ?? {}, o),
    filesystem: renderFs(u.filesystem, conf),
    additional_info: u.additional_info,
    groups: groups.map((g) => ({ name: g.name, type: g.type })).sort((a, b) => a.name.localeCompare(b.name)),
    oidc_custom_fields: u.oidc_custom_fields ?? {},
    role: u.role ? (u.role as Role).name : '',
    custom_placeholders: u.custom_placeholders ?? [],
  };
  if (o.dump) {
    delete out.id;
    delete out.has_password;
    if (u.password_hash) out.password = u.password_hash;
  }
  return out;
}

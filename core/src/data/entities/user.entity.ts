import { EntitySchema, type Opt, type Rel } from '@mikro-orm/core';
import { counter, json, msTime, name, text } from './columns.js';
import { Role } from './role.entity.js';

/** A filesystem config as stored: provider plus the one selected sub-object (secrets encrypted). */
export type StoredFilesystem = { provider: number } & Record<string, unknown>;

export class User {
  id!: number;
  username!: string;
  email = '';
  status = 1;
  expiration_date = 0;
  password_hash = '';
  public_keys: string[] = [];
  home_dir = '';
  uid = 0;
  gid = 0;
  max_sessions = 0;
  quota_size = 0;
  quota_files = 0;
  permissions: Record<string, string[]> = {};
  used_quota_size = 0;
  used_quota_files = 0;
  last_quota_update = 0;
  upload_bandwidth = 0;
  download_bandwidth = 0;
  upload_data_transfer = 0;
  download_data_transfer = 0;
  total_data_transfer = 0;
  used_upload_data_transfer = 0;
  used_download_data_transfer = 0;
  filters: Record<string, unknown> = {};
  filesystem: StoredFilesystem = { provider: 0 };
  description = '';
  additional_info = '';
  /** Values of %custom1% .. %custom10%. */
  custom_placeholders: string[] = [];
  oidc_custom_fields: Record<string, unknown> = {};
  role?: Rel<Role> | null;
  created_at = 0;
  updated_at = 0;
  last_login = 0;
  first_download = 0;
  first_upload = 0;
  last_password_change = 0;
  /** Last TOTP time step accepted at login: a code of that step or an earlier one is a replay (auth/two-factor.service.ts). */
  totp_last_step: Opt<number> = 0;
  /** Tokens issued before this time (ms) are refused: set by a password reset (auth/password-reset.service.ts). */
  tokens_valid_after: Opt<number> = 0;
}

export const UserSchema = new EntitySchema<User>({
  class: User,
  tableName: 'users',
  // a role's users by name: a role admin's pages of users walk this index alone (core/src/accounts/user-rows.ts)
  indexes: [{ properties: ['role', 'username'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    username: name(),
    email: { type: 'string', length: 255, default: '', index: true },
    status: { type: 'integer', default: 1 },
    expiration_date: msTime(),
    password_hash: { ...text(), default: '' },
    public_keys: json(),
    home_dir: { ...text(), default: '' },
    uid: { type: 'integer', default: 0 },
    gid: { type: 'integer', default: 0 },
    max_sessions: { type: 'integer', default: 0 },
    quota_size: counter(),
    quota_files: { type: 'integer', default: 0 },
    permissions: json(),
    used_quota_size: counter(),
    used_quota_files: { type: 'integer', default: 0 },
    last_quota_update: msTime(),
    upload_bandwidth: { type: 'integer', default: 0 },
    download_bandwidth: { type: 'integer', default: 0 },
    upload_data_transfer: counter(),
    download_data_transfer: counter(),
    total_data_transfer: counter(),
    used_upload_data_transfer: counter(),
    used_download_data_transfer: counter(),
    filters: json(),
    filesystem: json(),
    description: { ...text(), default: '' },
    additional_info: { ...text(), default: '' },
    custom_placeholders: json(),
    oidc_custom_fields: json(),
    role: { kind: 'm:1', entity: () => Role, nullable: true, index: true, deleteRule: 'no action' },
    created_at: msTime(),
    updated_at: msTime(),
    last_login: msTime({ index: true }),
    first_download: msTime(),
    first_upload: msTime(),
    last_password_change: msTime(),
    totp_last_step: counter(),
    tokens_valid_after: msTime(),
  },
});

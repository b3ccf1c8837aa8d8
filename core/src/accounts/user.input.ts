import Joi from 'joi';
import {
  absoluteDir,
  accountName,
  baseFilterKeys,
  customPlaceholders,
  filesystemInput,
  folderMappings,
  nonNegative,
  permissionsMap,
  type FolderMappingInput,
} from './account.input.js';
import { timestampMs } from '../util/common.input.js';
import { GroupType } from './account-numbers.js';

/**
 * Fields only a restore (loaddata) may set: with `context.restore` they are
 * validated and kept, otherwise accepted and stripped (read-only on the API).
 */
const restoreOnly = (schema: Joi.Schema) => Joi.when('$restore', { is: true, then: schema, otherwise: Joi.any().strip() });

const PUBLIC_KEY =
  /^(ssh-(rsa|dss|ed25519)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com|ssh-[a-z0-9-]+-cert-v01@openssh\.com)\s+[A-Za-z0-9+/]+={0,3}(\s.*)?$/;

const userFilters = Joi.object({
  ...baseFilterKeys,
  require_password_change: Joi.boolean(),
  tls_certs: Joi.array().items(Joi.string().max(16384)),
  additional_emails: Joi.array().items(Joi.string().email({ tlds: false })),
  // 2FA material is set up through the 2FA routes: never applied from create/update
  totp_config: restoreOnly(Joi.object().unknown(true)),
  recovery_codes: restoreOnly(Joi.array().items(Joi.object().unknown(true))),
})
  .rename('webclient', 'web_client')
  .default({});

/** User as accepted by POST/PUT /users and by loaddata (reference.yaml User). */
export const userInput = Joi.object({
  id: Joi.any().strip(),
  username: accountName.alter({ create: (s) => s.required() }),
  // loaddata: a hash from a dump (kept as is) or a cleartext (hashed)
  password: Joi.string().min(1).max(4096).allow(''),
  has_password: Joi.any().strip(),
  status: Joi.number().valid(0, 1).default(1),
  email: Joi.string().email({ tlds: false }).allow('').max(255).default(''),
  description: Joi.string().allow('').max(4096).default(''),
  expiration_date: timestampMs.default(0),
  public_keys: Joi.array().items(Joi.string().trim().pattern(PUBLIC_KEY, 'an OpenSSH public key')).unique().default([]),
  home_dir: absoluteDir.default(''),
  virtual_folders: folderMappings,
  uid: Joi.number().integer().min(0).max(2147483647).default(0),
  gid: Joi.number().integer().min(0).max(2147483647).default(0),
  max_sessions: nonNegative.default(0),
  quota_size: nonNegative.default(0),
  quota_files: nonNegative.default(0),
  permissions: permissionsMap(false).default({}),
  upload_bandwidth: nonNegative.default(0),
  download_bandwidth: nonNegative.default(0),
  upload_data_transfer: nonNegative.default(0),
  download_data_transfer: nonNegative.default(0),
  total_data_transfer: nonNegative.default(0),
  used_quota_size: restoreOnly(nonNegative),
  used_quota_files: restoreOnly(nonNegative),
  last_quota_update: restoreOnly(timestampMs),
  used_upload_data_transfer: restoreOnly(nonNegative),
  used_download_data_transfer: restoreOnly(nonNegative),
  created_at: restoreOnly(timestampMs),
  updated_at: restoreOnly(timestampMs),
  last_login: restoreOnly(timestampMs),
  first_download: restoreOnly(timestampMs),
  first_upload: restoreOnly(timestampMs),
  last_password_change: restoreOnly(timestampMs),
  filters: userFilters,
  filesystem: filesystemInput.default({ provider: 0 }),
  additional_info: Joi.string().allow('').max(4096).default(''),
  groups: Joi.array()
    .items(Joi.object({ name: accountName.required(), type: Joi.number().valid(1, 2, 3).required() }))
    .unique('name')
    .default([])
    .custom((list: { type: number }[], h) =>
      list.filter((g) => g.type === GroupType.Primary).length > 1
        ? h.message({ custom: '{{#label}}: a user can have at most one primary group (type 1)' })
        : list,
    ),
  oidc_custom_fields: Joi.object().unknown(true).default({}),
  role: Joi.string().allow('').max(255).default(''),
  custom_placeholders: customPlaceholders.default([]),
});

export interface UserInput {
  username: string;
  password?: string;
  status: number;
  email: string;
  description: string;
  expiration_date: number;
  public_keys: string[];
  home_dir: string;
  virtual_folders: FolderMappingInput[];
  uid: number;
  gid: number;
  max_sessions: number;
  quota_size: number;
  quota_files: number;
  permissions: Record<string, string[]>;
  upload_bandwidth: number;
  download_bandwidth: number;
  upload_data_transfer: number;
  download_data_transfer: number;
  total_data_transfer: number;
  filters: Record<string, unknown>;
  filesystem: { provider: number } & Record<string, unknown>;
  additional_info: string;
  groups: { name: string; type: number }[];
  oidc_custom_fields: Record<string, unknown>;
  role: string;
  custom_placeholders: string[];
  // restore only
  used_quota_size?: number;
  used_quota_files?: number;
  last_quota_update?: number;
  used_upload_data_transfer?: number;
  used_download_data_transfer?: number;
  created_at?: number;
  updated_at?: number;
  last_login?: number;
  first_download?: number;
  first_upload?: number;
  last_password_change?: number;
}

export const userCreateInput = userInput.tailor('create');
export const userUpdateInput = userInput;

export const disconnectQuery = Joi.object({ disconnect: Joi.number().integer().valid(0, 1).default(0) });

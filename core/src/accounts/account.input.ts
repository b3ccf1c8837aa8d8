import path from 'node:path';
import Joi from 'joi';
import { USER_PERMISSIONS } from './permissions.js';
import { normalizeVirtualPath } from '../fs/path.js';
import { FsError } from '../fs/fs-error.js';
import { LOGIN_PROTOCOLS, MFA_PROTOCOLS } from '../sdk/protocols.js';
import { LOGIN_METHODS } from '../sdk/login.js';
import { objectName } from '../util/common.input.js';
import { ipOrNet } from './admin.input.js';

/**
 * Pieces shared by the users, groups and folders schemas (reference.yaml
 * User, Group, GroupUserSettings, BaseVirtualFolder, VirtualFolder,
 * BaseUserFilters). Read-only fields are accepted and stripped, so a client
 * can send back an object it read.
 */

/** Object names that are also used in paths: no control characters, '/', '\', and not '.' or '..'. */
export const accountName = objectName.invalid('.', '..').messages({ 'any.invalid': '{{#label}} must not be "." or ".."' });

/** A virtual path: normalised ('/a/b'), no '..' segments or control characters. */
export const virtualPath = Joi.string()
  .min(1)
  .max(4096)
  .custom((v: string, h) => {
    try {
      return normalizeVirtualPath(v);
    } catch (err) {
      return h.message({ custom: `{{#label}} is not a valid path: ${err instanceof FsError ? err.message : String(err)}` });
    }
  }, 'virtual path');

/** An absolute local directory (placeholders such as %username% allowed), normalised. */
export const absoluteDir = Joi.string()
  .max(4096)
  .allow('')
  .custom((v: string, h) => {
    if (v === '') return v;
    if (/[\u0000-\u001f\u007f]/.test(v)) return h.message({ custom: '{{#label}} must not contain control characters' });
    if (!path.isAbsolute(v)) return h.message({ custom: '{{#label}} must be an absolute path' });
    if (v.replace(/\\/g, '/').split('/').includes('..')) return h.message({ custom: '{{#label}} must not contain ".." segments' });
    return path.normalize(v);
  }, 'absolute directory');

const permissionList = Joi.array()
  .items(Joi.string().valid(...USER_PERMISSIONS))
  .min(1)
  .unique();

/**
 * Map of virtual path → permission strings. Keys are normalised; two keys
 * naming the same path are refused. `requireRoot` makes '/' mandatory.
 */
export const permissionsMap = (requireRoot: boolean) =>
  Joi.object()
    .pattern(Joi.string(), permissionList)
    .custom((v: Record<string, string[]>, h) => {
      const out: Record<string, string[]> = {};
      for (const [k, perms] of Object.entries(v)) {
        let key: string;
        try {
          key = normalizeVirtualPath(k);
        } catch (err) {
          return h.message({ custom: `{{#label}}: "${k}" is not a valid path: ${err instanceof FsError ? err.message : String(err)}` });
        }
        if (out[key]) return h.message({ custom: `{{#label}}: "${k}" names the same path as another entry (${key})` });
        out[key] = perms;
      }
      if (requireRoot && !out['/']) return h.message({ custom: '{{#label}} must hold the permissions of the root directory "/"' });
      return out;
    }, 'permissions map');

/** A virtual folder mapping of a user or group: the folder must exist; -1/-1 counts against the user's quota. */
export const folderMapping = Joi.object({
  name: accountName.required(),
  virtual_path: virtualPath.required(),
  quota_size: Joi.number().integer().min(-1).default(-1),
  quota_files: Joi.number().integer().min(-1).default(-1),
  // BaseVirtualFolder fields: a mapping only references the folder by name
  id: Joi.any().strip(),
  description: Joi.any().strip(),
  mapped_path: Joi.any().strip(),
  filesystem: Joi.any().strip(),
  used_quota_size: Joi.any().strip(),
  used_quota_files: Joi.any().strip(),
  last_quota_update: Joi.any().strip(),
  users: Joi.any().strip(),
  groups: Joi.any().strip(),
  subpath: Joi.any().strip(),
}).custom((v: FolderMappingInput, h) => {
  if (v.virtual_path === '/') return h.message({ custom: '{{#label}}.virtual_path cannot be "/": a virtual folder is mounted below the root' });
  if ((v.quota_size === -1) !== (v.quota_files === -1)) {
    return h.message({ custom: '{{#label}}: quota_size and quota_files must both be -1 (counted in the user quota) or both be >= 0' });
  }
  return v;
});

export interface FolderMappingInput {
  name: string;
  virtual_path: string;
  quota_size: number;
  quota_files: number;
}

/** Refuses two mappings of one folder, or two mounted at the same or nested virtual paths. */
export const folderMappings = Joi.array()
  .items(folderMapping)
  .unique('name')
  .default([])
  .custom((list: FolderMappingInput[], h) => {
    const paths = list.map((f) => f.virtual_path).sort();
    for (let i = 1; i < paths.length; i++) {
      const a = paths[i - 1]!;
      const b = paths[i]!;
      if (a === b || b.startsWith(a + '/')) return h.message({ custom: `{{#label}}: virtual paths "${a}" and "${b}" overlap` });
    }
    return list;
  });

/** FilesystemConfig as sent: `provider` plus config objects; the provider's config is validated by its plugin. */
export const filesystemInput = Joi.object({
  provider: Joi.number().integer().min(0).required(),
}).pattern(Joi.string(), Joi.alternatives().try(Joi.object().unknown(true), Joi.valid(null)));

/** WebClientOptions of reference.yaml, plus the share options named by the API specification. */
export const WEB_CLIENT_OPTIONS = [
  'publickey-change-disabled',
  'tls-cert-change-disabled',
  'write-disabled',
  'mfa-disabled',
  'password-change-disabled',
  'api-key-auth-change-disabled',
  'info-change-disabled',
  'shares-disabled',
  'password-reset-disabled',
  'shares-without-password-disabled',
  'share_no_password_disabled',
  'share_policy_change_disabled',
];
/** web_client options that are share policies (merged from every group, membership groups included). */
export const SHARE_WEB_CLIENT_OPTIONS = ['shares-disabled', 'shares-without-password-disabled', 'share_no_password_disabled', 'share_policy_change_disabled'];

const hhmm = Joi.string().pattern(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM');

/** BaseUserFilters (reference.yaml) plus default_shares_policies (API specification). */
export const baseFilterKeys = {
  allowed_ip: Joi.array().items(ipOrNet),
  denied_ip: Joi.array().items(ipOrNet),
  denied_login_methods: Joi.array()
    .items(Joi.string().valid(...LOGIN_METHODS))
    .unique(),
  denied_protocols: Joi.array()
    .items(Joi.string().valid(...LOGIN_PROTOCOLS))
    .unique(),
  file_patterns: Joi.array()
    .items(
      Joi.object({
        path: virtualPath.required(),
        allowed_patterns: Joi.array().items(Joi.string().min(1).max(255)),
        denied_patterns: Joi.array().items(Joi.string().min(1).max(255)),
        deny_policy: Joi.number().valid(0, 1),
      }),
    )
    .unique('path'),
  max_upload_file_size: Joi.number().integer().min(0),
  tls_username: Joi.string().allow('').max(255),
  hooks: Joi.object({
    external_auth_disabled: Joi.boolean(),
    pre_login_disabled: Joi.boolean(),
    check_password_disabled: Joi.boolean(),
  }),
  disable_fs_checks: Joi.boolean().description(
    "sessions do not check or create the storage's root (a missing local home directory or folder mapped path is left missing)",
  ),
  web_client: Joi.array()
    .items(Joi.string().valid(...WEB_CLIENT_OPTIONS))
    .unique(),
  allow_api_key_auth: Joi.boolean(),
  user_type: Joi.string().valid('', 'LDAPUser', 'OSUser'),
  bandwidth_limits: Joi.array().items(
    Joi.object({
      sources: Joi.array().items(ipOrNet).min(1).required(),
      upload_bandwidth: Joi.number().integer().min(0).default(0),
      download_bandwidth: Joi.number().integer().min(0).default(0),
    }),
  ),
  external_auth_cache_time: Joi.number().integer().min(0),
  start_directory: virtualPath
    .allow('')
    .description(
      "the virtual directory sessions start in (SFTP's and FTP's working directory, the web client's first folder); '' is '/'; a missing one starts in '/'",
    ),
  two_factor_protocols: Joi.array()
    .items(Joi.string().valid(...MFA_PROTOCOLS))
    .unique(),
  ftp_security: Joi.number().valid(0, 1),
  is_anonymous: Joi.boolean().description('read-only (list and download only, whatever the permissions say) and logins over FTP and WebDAV only'),
  default_shares_expiration: Joi.number().integer().min(0),
  max_shares_expiration: Joi.number().integer().min(0),
  password_expiration: Joi.number().integer().min(0),
  password_strength: Joi.number().integer().min(0).max(100),
  access_time: Joi.array().items(Joi.object({ day_of_week: Joi.number().valid(0, 1, 2, 3, 4, 5, 6).required(), from: hhmm.required(), to: hhmm.required() })),
  default_shares_policies: Joi.array()
    .items(
      Joi.object({
        path: virtualPath.required(),
        permissions: Joi.array()
          .items(Joi.string().pattern(/^[a-z_]{1,32}$/, 'share permission'))
          .min(1)
          .unique()
          .required(),
      }),
    )
    .unique('path'),
};

/** BaseUserFilters: the filters a group may supply. `webclient` is accepted as an alias of `web_client`. */
export const baseUserFilters = Joi.object(baseFilterKeys).rename('webclient', 'web_client');

/** Values of %custom1%..%custom10%: used inside paths, so no control characters or '..' segments. */
export const customPlaceholders = Joi.array()
  .items(
    Joi.string()
      .allow('')
      .max(255)
      .custom((v: string, h) => {
        if (/[\u0000-\u001f\u007f]/.test(v)) return h.message({ custom: '{{#label}} must not contain control characters' });
        if (v.replace(/\\/g, '/').split('/').includes('..')) return h.message({ custom: '{{#label}} must not contain ".." segments' });
        return v;
      }),
  )
  .max(10)
  .messages({ 'array.max': '{{#label}} holds at most 10 values (%custom1% .. %custom10%)' });

export const nonNegative = Joi.number().integer().min(0);

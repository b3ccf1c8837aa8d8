import Joi from 'joi';
import {
  absoluteDir,
  accountName,
  baseUserFilters,
  filesystemInput,
  folderMappings,
  nonNegative,
  permissionsMap,
  type FolderMappingInput,
} from './account.input.js';
import { timestampMs } from '../util/common.input.js';

const restoreOnly = (schema: Joi.Schema) => Joi.when('$restore', { is: true, then: schema, otherwise: Joi.any().strip() });

/** GroupUserSettings: what a group supplies to its users (every field optional). */
export const groupUserSettings = Joi.object({
  home_dir: absoluteDir,
  max_sessions: nonNegative,
  quota_size: nonNegative,
  quota_files: nonNegative,
  permissions: permissionsMap(false),
  upload_bandwidth: nonNegative,
  download_bandwidth: nonNegative,
  upload_data_transfer: nonNegative,
  download_data_transfer: nonNegative,
  total_data_transfer: nonNegative,
  /** Days after the user's creation its account expires (when the user has no expiration of its own). */
  expires_in: nonNegative,
  filters: baseUserFilters,
  filesystem: filesystemInput,
}).default({});

/** Group as accepted by POST/PUT /groups and by loaddata. A group may consist of only a name. */
export const groupInput = Joi.object({
  id: Joi.any().strip(),
  name: accountName.alter({ create: (s) => s.required() }),
  description: Joi.string().allow('').max(4096).default(''),
  user_settings: groupUserSettings,
  virtual_folders: folderMappings,
  users: Joi.any().strip(),
  admins: Joi.any().strip(),
  created_at: restoreOnly(timestampMs),
  updated_at: restoreOnly(timestampMs),
});

export interface GroupSettingsInput {
  home_dir?: string;
  max_sessions?: number;
  quota_size?: number;
  quota_files?: number;
  permissions?: Record<string, string[]>;
  upload_bandwidth?: number;
  download_bandwidth?: number;
  upload_data_transfer?: number;
  download_data_transfer?: number;
  total_data_transfer?: number;
  expires_in?: number;
  filters?: Record<string, unknown>;
  filesystem?: { provider: number } & Record<string, unknown>;
}

export interface GroupInput {
  name: string;
  description: string;
  user_settings: GroupSettingsInput;
  virtual_folders: FolderMappingInput[];
  created_at?: number;
  updated_at?: number;
}

export const groupCreateInput = groupInput.tailor('create');

import Joi from 'joi';
import { absoluteDir, accountName, filesystemInput, nonNegative } from './account.input.js';
import { timestampMs } from '../util/common.input.js';

const restoreOnly = (schema: Joi.Schema) => Joi.when('$restore', { is: true, then: schema, otherwise: Joi.any().strip() });

/** BaseVirtualFolder as accepted by POST/PUT /folders and by loaddata. */
export const folderInput = Joi.object({
  id: Joi.any().strip(),
  name: accountName.alter({ create: (s) => s.required() }),
  description: Joi.string().allow('').max(4096).default(''),
  mapped_path: absoluteDir.default(''),
  filesystem: filesystemInput.default({ provider: 0 }),
  used_quota_size: restoreOnly(nonNegative),
  used_quota_files: restoreOnly(nonNegative),
  last_quota_update: restoreOnly(timestampMs),
  created_at: restoreOnly(timestampMs),
  updated_at: restoreOnly(timestampMs),
  users: Joi.any().strip(),
  groups: Joi.any().strip(),
});

export interface FolderInput {
  name: string;
  description: string;
  mapped_path: string;
  filesystem: { provider: number } & Record<string, unknown>;
  used_quota_size?: number;
  used_quota_files?: number;
  last_quota_update?: number;
  created_at?: number;
  updated_at?: number;
}

export const folderCreateInput = folderInput.tailor('create');

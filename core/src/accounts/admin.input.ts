import Joi from 'joi';
import { ADMIN_PERMISSIONS } from './permissions.js';
import { parseIpOrNet } from '../util/ip.js';
import { objectName } from '../util/common.input.js';

export const ipOrNet = Joi.string()
  .custom((v: string, h) => (parseIpOrNet(v) ? v.trim() : h.error('string.ipOrNet')), 'IP or CIDR network')
  .messages({ 'string.ipOrNet': '{{#label}} must be an IP address or a CIDR network' });

const adminFilters = Joi.object({
  allow_list: Joi.array().items(ipOrNet).default([]),
  allow_api_key_auth: Joi.boolean().default(false),
  require_two_factor: Joi.boolean().default(false),
  require_password_change: Joi.boolean().default(false),
  disable_password_auth: Joi.boolean().default(false),
  preferences: Joi.object({
    hide_user_page_sections: Joi.number().integer().min(0),
    default_users_expiration: Joi.number().integer().min(0),
  }).default({}),
  // 2FA material is managed through the 2FA routes only: accepted (so a read
  // object can be sent back) but never applied from create/update.
  totp_config: Joi.any().strip(),
  recovery_codes: Joi.any().strip(),
}).default({});

/** Admin as accepted by POST/PUT /admins (read-only fields are accepted and ignored). */
export const adminInput = Joi.object({
  id: Joi.any().strip(),
  username: objectName.required(),
  password: Joi.string().min(1).max(4096).allow(''),
  email: Joi.string().email({ tlds: false }).allow('').default(''),
  status: Joi.number().valid(0, 1).default(1),
  description: Joi.string().allow('').max(4096).default(''),
  additional_info: Joi.string().allow('').max(4096).default(''),
  permissions: Joi.array()
    .items(Joi.string().valid(...ADMIN_PERMISSIONS))
    .min(1)
    .unique()
    .required(),
  filters: adminFilters,
  groups: Joi.array()
    .items(
      Joi.object({
        name: objectName.required(),
        options: Joi.object({ add_to_users_as: Joi.number().valid(0, 1, 2).default(0) }).default({}),
      }),
    )
    .unique('name')
    .default([]),
  role: Joi.string().allow('').max(255).default(''),
  created_at: Joi.any().strip(),
  updated_at: Joi.any().strip(),
  last_login: Joi.any().strip(),
});

export interface AdminInput {
  username: string;
  password?: string;
  email: string;
  status: number;
  description: string;
  additional_info: string;
  permissions: string[];
  filters: {
    allow_list: string[];
    allow_api_key_auth: boolean;
    require_two_factor: boolean;
    require_password_change: boolean;
    disable_password_auth: boolean;
    preferences: Record<string, number>;
  };
  groups: { name: string; options: { add_to_users_as: number } }[];
  role: string;
}

export const adminProfileInput = Joi.object({
  email: Joi.string().email({ tlds: false }).allow(''),
  allow_api_key_auth: Joi.boolean(),
  description: Joi.string().allow('').max(4096),
});

export const pwdChangeInput = Joi.object({
  current_password: Joi.string().required(),
  new_password: Joi.string().min(1).max(4096).required(),
});

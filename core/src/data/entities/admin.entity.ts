import { EntitySchema, type Opt, type Rel } from '@mikro-orm/core';
import { counter, json, msTime, name, text } from './columns.js';
import { Role } from './role.entity.js';

export interface AdminFiltersData {
  allow_list?: string[];
  allow_api_key_auth?: boolean;
  require_two_factor?: boolean;
  require_password_change?: boolean;
  /** Password login disabled: API key (or identity provider) only. */
  disable_password_auth?: boolean;
  totp_config?: Record<string, unknown>;
  recovery_codes?: Record<string, unknown>[];
  preferences?: { hide_user_page_sections?: number; default_users_expiration?: number };
}

export class Admin {
  id!: number;
  username!: string;
  /** argon2id hash; empty when password login is impossible. */
  password_hash = '';
  email = '';
  status = 1;
  description = '';
  additional_info = '';
  permissions: string[] = [];
  filters: AdminFiltersData = {};
  role?: Rel<Role> | null;
  created_at = 0;
  updated_at = 0;
  last_login = 0;
  /** Last TOTP time step accepted at login: a code of that step or an earlier one is a replay (auth/two-factor.service.ts). */
  totp_last_step: Opt<number> = 0;
  /** Tokens issued before this time (ms) are refused: set by a password reset (auth/password-reset.service.ts). */
  tokens_valid_after: Opt<number> = 0;
}

export const AdminSchema = new EntitySchema<Admin>({
  class: Admin,
  tableName: 'admins',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    username: name(),
    password_hash: { ...text(), default: '' },
    email: { type: 'string', length: 255, default: '' },
    status: { type: 'integer', default: 1 },
    description: { ...text(), default: '' },
    additional_info: { ...text(), default: '' },
    permissions: json(),
    filters: json(),
    role: { kind: 'm:1', entity: () => Role, nullable: true, index: true, deleteRule: 'no action' },
    created_at: msTime(),
    updated_at: msTime(),
    last_login: msTime(),
    totp_last_step: counter(),
    tokens_valid_after: msTime(),
  },
});

import { EntitySchema, type Rel } from '@mikro-orm/core';
import { msTime, text } from './columns.js';
import { Admin } from './admin.entity.js';
import { User } from './user.entity.js';

export class ApiKey {
  /** Public id (also the first part of the key). */
  key_id!: string;
  name!: string;
  /** SHA-256 of the secret part (keys are 256-bit random, so a fast hash is safe). */
  key_hash!: string;
  /** 1 admin, 2 user. */
  scope!: number;
  description = '';
  user?: Rel<User> | null;
  admin?: Rel<Admin> | null;
  created_at = 0;
  updated_at = 0;
  last_use_at = 0;
  expires_at = 0;
}

export const ApiKeySchema = new EntitySchema<ApiKey>({
  class: ApiKey,
  tableName: 'api_keys',
  properties: {
    key_id: { type: 'string', length: 64, primary: true },
    name: { type: 'string', length: 255 },
    key_hash: { type: 'string', length: 128 },
    scope: { type: 'integer' },
    description: { ...text(), default: '' },
    user: { kind: 'm:1', entity: () => User, nullable: true, index: true, deleteRule: 'cascade' },
    admin: { kind: 'm:1', entity: () => Admin, nullable: true, index: true, deleteRule: 'cascade' },
    created_at: msTime(),
    updated_at: msTime(),
    last_use_at: msTime(),
    expires_at: msTime(),
  },
});

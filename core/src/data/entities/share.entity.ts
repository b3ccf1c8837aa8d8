import { EntitySchema, type Rel } from '@mikro-orm/core';
import { json, msTime } from './columns.js';
import { User } from './user.entity.js';

/** A user's public share of files or a directory (reference.yaml Share). */
export class Share {
  /** Public id, part of the share URLs. */
  share_id!: string;
  name!: string;
  /** Free text for the owner (reference.yaml Share.description). */
  description = '';
  /** 1 read, 2 write, 3 read and write. */
  scope!: number;
  /** Normalised virtual paths of the owner's tree. */
  paths: string[] = [];
  user!: Rel<User>;
  /** argon2id hash of the share password, '' for a share without one. */
  password_hash = '';
  /** Unix ms, 0 never expires. */
  expires_at = 0;
  /** 0: unlimited. */
  max_tokens = 0;
  used_tokens = 0;
  /** IPs or CIDR networks the share may be used from (empty: anywhere). */
  allow_from: string[] = [];
  /**
   * Email-restricted share: the addresses (lower case) that may ask for a
   * one-time code by mail and use it instead of the password (docs/shares.md).
   * Empty: not email-restricted.
   */
  emails: string[] = [];
  created_at = 0;
  updated_at = 0;
  last_use_at = 0;
}

export const ShareSchema = new EntitySchema<Share>({
  class: Share,
  tableName: 'shares',
  properties: {
    share_id: { type: 'string', length: 64, primary: true },
    name: { type: 'string', length: 255 },
    description: { type: 'text', default: '' },
    scope: { type: 'integer' },
    paths: json(),
    user: { kind: 'm:1', entity: () => User, index: true, deleteRule: 'cascade' },
    password_hash: { type: 'text', default: '' },
    expires_at: msTime({ index: true }),
    max_tokens: { type: 'integer', default: 0 },
    used_tokens: { type: 'integer', default: 0 },
    allow_from: json(),
    emails: { type: 'json', default: '[]' },
    created_at: msTime(),
    updated_at: msTime(),
    last_use_at: msTime(),
  },
});

/**
 * A one-time code mailed for an email-restricted share: stored as the
 * SHA-256 HMAC of the code (keyed with the share id and address), valid until
 * `expires_at`, used once (`used_at`), and refused after `attempts` wrong tries.
 */
export class ShareCode {
  id!: number;
  share_id!: string;
  email!: string;
  code_hash!: string;
  attempts = 0;
  created_at = 0;
  expires_at = 0;
  used_at = 0;
}

export const ShareCodeSchema = new EntitySchema<ShareCode>({
  class: ShareCode,
  tableName: 'share_codes',
  indexes: [{ properties: ['share_id', 'email'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    share_id: { type: 'string', length: 64 },
    email: { type: 'string', length: 255 },
    code_hash: { type: 'string', length: 128 },
    attempts: { type: 'integer', default: 0 },
    created_at: msTime(),
    expires_at: msTime({ index: true }),
    used_at: msTime(),
  },
});

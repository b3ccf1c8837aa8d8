import { EntitySchema } from '@mikro-orm/core';
import { msTime } from './columns.js';

/**
 * A forgot-password request (auth/password-reset.service.ts). Every request
 * leaves a row, for unknown accounts too (account_id 0): the rows are the
 * per-account and per-host request counts. Only a hash of the mailed code is
 * kept; a used, expired or invalidated code has an empty hash. Rows are
 * deleted once older than both the code lifetime and the counting window.
 */
export class PasswordResetCode {
  id!: number;
  /** 'admin' or 'user'. */
  kind!: string;
  username!: string;
  /** The account the code was mailed for (a deleted and re-created account does not inherit it); 0: none. */
  account_id = 0;
  /** Hex SHA-256 of the code; '' once spent. */
  code_hash = '';
  /** Source address of the request. */
  ip!: string;
  /** Wrong codes tried while this one was pending. */
  attempts = 0;
  created_at = 0;
  expires_at = 0;
}

export const PasswordResetCodeSchema = new EntitySchema<PasswordResetCode>({
  class: PasswordResetCode,
  tableName: 'password_reset_codes',
  indexes: [{ properties: ['kind', 'username', 'created_at'] }, { properties: ['ip', 'created_at'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    kind: { type: 'string', length: 16 },
    username: { type: 'string', length: 255 },
    account_id: { type: 'integer', default: 0 },
    code_hash: { type: 'string', length: 64, default: '' },
    ip: { type: 'string', length: 64 },
    attempts: { type: 'integer', default: 0 },
    created_at: msTime({ index: true }),
    expires_at: msTime(),
  },
});

import { EntitySchema } from '@mikro-orm/core';
import { msTime } from './columns.js';

/**
 * A browser session of the REST API (http/web-session.ts): the cookie holds
 * a random id, the database only its SHA-256 (the id is 256-bit random, so a
 * fast hash is safe). Shared by every node; rows past their expiry are
 * deleted as new sessions are opened.
 */
export class WebSession {
  /** Hex SHA-256 of the cookie's session id. */
  id_hash!: string;
  /** Whose session: a user's (cookie ferry_web) or an admin's (cookie ferry_admin). */
  kind: 'user' | 'admin' = 'user';
  /** The account's id when the session was opened (a deleted and re-created account does not inherit it). */
  user_id!: number;
  username!: string;
  /** The anti-CSRF token state-changing requests must echo in X-CSRF-Token. */
  csrf_token!: string;
  /** Opened by an identity-provider (OIDC) login: the provider ran the second factor. */
  idp = false;
  created_at = 0;
  /** Idle expiry, slid forward while the session is used, never past max_expires_at. */
  expires_at = 0;
  /** Absolute end of the session (created_at + httpd.web_session.max_lifetime). */
  max_expires_at = 0;
}

export const WebSessionSchema = new EntitySchema<WebSession>({
  class: WebSession,
  tableName: 'web_sessions',
  properties: {
    id_hash: { type: 'string', length: 64, primary: true },
    kind: { type: 'string', length: 8, default: 'user' },
    user_id: { type: 'integer', index: true },
    username: { type: 'string', length: 255 },
    csrf_token: { type: 'string', length: 64 },
    idp: { type: 'boolean', default: false },
    created_at: msTime(),
    expires_at: msTime({ index: true }),
    max_expires_at: msTime(),
  },
});

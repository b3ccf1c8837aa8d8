/**
 * The revocation list of bearer tokens (table revoked_tokens, shared by every
 * node): an SQL expression, true when the token id bound to its `?` is
 * revoked (a primary-key probe). A query that reads the account of a request
 * selects it too, so a bearer request asks the database once. Read its value
 * with revokedValue.
 */
export const REVOKED_JTI_SQL = 'exists (select 1 from revoked_tokens where jti = ?)';

/** The value of REVOKED_JTI_SQL as the driver answers it (1/0 on SQLite, a boolean on PostgreSQL). */
export function revokedValue(v: unknown): boolean {
  return v === true || Number(v) === 1;
}

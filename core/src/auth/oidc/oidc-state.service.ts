import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../../tokens.js';
import { Setting } from '../../data/entities/index.js';
import type { OidcLoginKind } from './oidc-claims.js';

/** What the callback needs of a login started by GET /oidc/login. */
export interface PendingOidcLogin {
  nonce: string;
  pkce_verifier: string;
  target: OidcLoginKind;
  /** The identity provider and client the login was started with (`<config_url> <client_id>`). */
  client: string;
  /** Unix ms after which the callback is refused. */
  expires_at: number;
  /** The login ends in a web session cookie (GET /api/v2/oidc/login?web=1; a user's or an admin's, by target), not a token. */
  web?: true;
}

const PREFIX = 'oidc_pending:';
/** Older rows are removed whatever their own TTL (the longest allowed state_ttl). */
const MAX_AGE_MS = 3600_000;

/**
 * Logins in progress, kept in the database (`settings` rows keyed by a hash
 * of the state) so that any node sharing it can finish a login another node
 * started. Each state is taken once: the node whose delete removed the row
 * wins, a replayed or concurrent callback finds nothing.
 */
@injectable()
export class OidcStateStore {
  constructor(@inject(TOKENS.Orm) private readonly orm: MikroORM) {}

  private static key(state: string): string {
    return PREFIX + crypto.createHash('sha256').update(state).digest('hex');
  }

  async put(state: string, pending: PendingOidcLogin): Promise<void> {
    const em = this.orm.em.fork();
    const now = Date.now();
    await em.nativeDelete(Setting, { key: { $like: `${PREFIX}%` }, updated_at: { $lt: now - MAX_AGE_MS } });
    await em.insert(Setting, { key: OidcStateStore.key(state), value: JSON.stringify(pending), updated_at: now });
  }

  /** The pending login of `state`, removed; null when unknown, expired or already taken. */
  async take(state: string): Promise<PendingOidcLogin | null> {
    const em = this.orm.em.fork();
    const key = OidcStateStore.key(state);
    const row = await em.findOne(Setting, { key });
    if (!row) return null;
    if ((await em.nativeDelete(Setting, { key })) !== 1) return null;
    let pending: PendingOidcLogin;
    try {
      pending = JSON.parse(row.value) as PendingOidcLogin;
    } catch {
      return null;
    }
    return pending.expires_at > Date.now() ? pending : null;
  }
}

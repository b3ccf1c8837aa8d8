/**
 * What account changes need from the sessions layer: ending a user's open
 * sessions when the account is disabled, deleted or changed so that its
 * sessions no longer hold. Declared here and implemented by
 * vfs/connection-manager.ts (registered in container.ts), so accounts do
 * not depend on the virtual filesystem.
 */
export interface AccountSessions {
  disconnectUser(username: string): void;
}

/** Container token of the AccountSessions implementation. */
export const ACCOUNT_SESSIONS = Symbol.for('ferry.AccountSessions');

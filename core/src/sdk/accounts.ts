import type { Fs } from '../fs/fs.contract.js';

// What event actions and plugins need from accounts and shares (PluginHost.accounts, PluginHost.shares):
// narrow ports the core implements (event-manager/accounts.ts, shares/share.service.ts).

/** Who performed a change, for provider events and audit logs. */
export interface Actor {
  username: string;
  ip: string;
  role: string;
}

/**
 * A name pattern of rule conditions: shell wildcards as Go's path.Match
 * understands them, and `**` (see event-manager/patterns.ts).
 */
export interface ConditionPattern {
  pattern: string;
  inverse_match?: boolean;
}

/** A user as maintenance actions see it. */
export interface AccountUser {
  username: string;
  email: string;
  status: number;
  role: string;
  groups: string[];
  /** Unix ms, 0 never. */
  expiration_date: number;
  last_login: number;
  created_at: number;
  last_password_change: number;
  filters: Record<string, unknown>;
}

/** One storage root of a user: its home ('/') or a virtual folder. */
export interface AccountMount {
  virtual_path: string;
  /** Folder name for virtual folders. */
  folder?: string;
  fs: Fs;
}

export interface UserSelection {
  /** Just this user (filesystem, provider and IDP triggers). */
  username?: string;
  /** Otherwise every user matching these (scheduled and on-demand rules). */
  conditions?: { names?: ConditionPattern[]; group_names?: ConditionPattern[]; role_names?: ConditionPattern[] };
}

/**
 * What the built-in maintenance actions need from accounts (users, folders,
 * quotas, storage), resolved through TOKENS.EventAccounts. This narrow port
 * keeps the actions independent of how accounts are stored; the default
 * implementation (DbEventAccounts) delegates to core's account services.
 */
export interface EventAccounts {
  users(sel: UserSelection): Promise<AccountUser[]>;
  /** Folder names: just `name`, or every folder matching the names patterns. */
  folders(sel: { name?: string; names?: ConditionPattern[] }): Promise<string[]>;
  /** The user's storage roots (home and virtual folders); close each fs when done. */
  mounts(username: string): Promise<AccountMount[]>;
  /** Recomputes the user's used quota from its storage (virtual folders mapped with quota -1 included), as a quota scan. */
  rescanUserQuota(username: string): Promise<{ size: number; files: number }>;
  rescanFolderQuota(name: string): Promise<{ size: number; files: number }>;
  resetTransferQuota(username: string): Promise<void>;
  setUserStatus(username: string, status: number, actor?: Actor): Promise<void>;
  deleteUser(username: string, actor?: Actor): Promise<void>;
  /**
   * Creates an account from `data` (the shape POST /users or /admins takes,
   * validated the same way), or when it exists updates it with `data`
   * (mode 'create-or-update') or leaves it (mode 'create-only'). Refusals are
   * InvalidError naming the field.
   */
  provision(kind: 'user' | 'admin', data: Record<string, unknown>, mode: ProvisionMode, actor?: Actor): Promise<ProvisionResult>;
}

export type ProvisionMode = 'create-or-update' | 'create-only';
export type ProvisionResult = 'created' | 'updated' | 'unchanged';

/** A share as the share expiration check sees it. */
export interface ShareInfo {
  share_id: string;
  name: string;
  username: string;
  /** Unix ms, 0 never expires. */
  expires_at: number;
}

/**
 * What the share expiration check needs from the shares feature, resolved
 * through TOKENS.Shares (core's ShareService).
 */
export interface EventShares {
  /** Shares of these users (every share when `usernames` is undefined). */
  list(sel: { usernames?: string[] }): Promise<ShareInfo[]>;
  delete(shareId: string): Promise<void>;
}

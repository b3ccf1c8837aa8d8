/** What a route handler knows about the authenticated caller. */
export interface AdminIdentity {
  id: number;
  username: string;
  permissions: string[];
  /** Role name the admin is limited to, or '' for a global admin. */
  role: string;
}

export interface UserIdentity {
  id: number;
  username: string;
  role: string;
}

interface Common {
  /** JWT id when authenticated with a token (used by logout). */
  jti?: string;
  /** Token expiry (ms). */
  exp?: number;
  /** Hash of the web session's id when authenticated with the web session cookie (http/web-session.ts). */
  webSession?: string;
  /** API key id when authenticated with an API key. */
  apiKeyId?: string;
  /** Set when the account must have two-factor authentication and has none: every route but the setup ones answers 403 with it. */
  mfaSetupRequired?: string;
  /** Authenticated with the token of an identity-provider (OIDC) login (docs/two-factor.md). */
  idpLogin?: boolean;
}

export interface AdminCredentials extends Common {
  kind: 'admin';
  admin: AdminIdentity;
}

export interface UserCredentials extends Common {
  kind: 'user';
  user: UserIdentity;
}

export type FerryCredentials = AdminCredentials | UserCredentials;

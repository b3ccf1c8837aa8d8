/**
 * Dependency-injection tokens of the core services. Exported from the SDK so
 * that core plugins (built-in actions, event search) can resolve services
 * through PluginContext.core.get(TOKEN).
 */
export const TOKENS = {
  Config: Symbol.for('ferry.Config'),
  Logger: Symbol.for('ferry.Logger'),
  Orm: Symbol.for('ferry.Orm'),
  Secrets: Symbol.for('ferry.Secrets'),
  EventBus: Symbol.for('ferry.EventBus'),
  FsHooks: Symbol.for('ferry.FsHooks'),
  Plugins: Symbol.for('ferry.Plugins'),
  InstanceId: Symbol.for('ferry.InstanceId'),
  // event manager and the services built-in actions reach (see docs/event-manager.md)
  EventManager: Symbol.for('ferry.EventManager'),
  EventScheduler: Symbol.for('ferry.EventScheduler'),
  EventRecorder: Symbol.for('ferry.EventRecorder'),
  /** EventSearchRegistry: the event store a plugin registered (event search routes, event reports). */
  EventSearch: Symbol.for('ferry.EventSearch'),
  /** EventHistoryService: the events event reports read (the store when configured, else the recorder). */
  EventHistory: Symbol.for('ferry.EventHistory'),
  RetentionChecks: Symbol.for('ferry.RetentionChecks'),
  Mailer: Symbol.for('ferry.Mailer'),
  LogRotator: Symbol.for('ferry.LogRotator'),
  FsFactory: Symbol.for('ferry.FsFactory'),
  EventAccounts: Symbol.for('ferry.EventAccounts'),
  /** `{ dump(): Promise<object> }` of the backup service (registered by it; absent until it exists). */
  Backup: Symbol.for('ferry.Backup'),
  /** Share store of the share expiration check (EventShares, implemented by ShareService). */
  Shares: Symbol.for('ferry.Shares'),
  /** Users' files for server-side work (UserFilesAccess: no permissions, patterns or events; quota counted). */
  UserFiles: Symbol.for('ferry.UserFiles'),
  /** The login service (LoginGate of sdk/login.ts, implemented by auth/login.service.ts): every front-end's logins. */
  LoginService: Symbol.for('ferry.LoginService'),
  /** Share logins of front-ends (ShareLogins of sdk/login.ts, shares/share-login.ts), the login service delegates to them. */
  ShareLogins: Symbol.for('ferry.ShareLogins'),
  /** File sessions for service plugins (FileSessionOpener of sdk/file-session.ts, PluginHost.services.sessions). */
  ServiceSessions: Symbol.for('ferry.ServiceSessions'),
  /** Public shares opened by front-ends (ServiceShares of sdk/share-sessions.ts, shares/share-sessions.ts). */
  ServiceShares: Symbol.for('ferry.ServiceShares'),
  /** The defender as service plugins see it (ServiceDefender of sdk/service.ts). */
  Defender: Symbol.for('ferry.Defender'),
  /** Changes of stored accounts from every node, as service plugins see them (AccountChanges of sdk/service.ts, the ChangeFeed). */
  AccountChanges: Symbol.for('ferry.AccountChanges'),
  /** TLS certificates of service bindings (ServiceTls of sdk/service.ts, http/tls.ts; registered by app.ts). */
  ServiceTls: Symbol.for('ferry.ServiceTls'),
  /** The running service plugins (ServiceRunner of plugins/services.ts): started, stopped, their /status sections. */
  Services: Symbol.for('ferry.Services'),
} as const;

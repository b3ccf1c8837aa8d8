/**
 * The service plugin kind: a front-end (SFTP, FTP, WebDAV, a plugin's own
 * protocol) a plugin registers with `PluginContext.registerService()`, and
 * the part of the core it reaches through `PluginHost.services`.
 *
 * Lifecycle (core/src/app.ts): services start after the migrations, the
 * first admin and the crash recovery, before the HTTP servers listen (so
 * before the node reports ready), in the order their plugins registered;
 * they stop alongside the HTTP servers, before the event manager and the
 * database, in reverse order, each within the shutdown grace period
 * (`common.shutdown_grace_period`). A service whose start() throws stops
 * the start with an error naming its plugin and service.
 *
 * A leaf module: it imports only the other SDK contracts.
 */
import type { FileSessionOpener } from './file-session.js';
import type { LoginGate } from './login.js';
import type { Protocol } from './protocols.js';
import type { ServiceShares } from './share-sessions.js';

/** One address a service listens on, as GET /api/v2/status shows it (SSHBinding, FTPDBinding, WebDAVBinding). */
export interface ServiceBinding {
  address: string;
  port: number;
  /** More fields of the binding (tls mode, apply_proxy_config...), shown as given. */
  [field: string]: unknown;
}

/** A service's section of GET /api/v2/status. */
export interface ServiceStatus {
  is_active: boolean;
  /** null while the service listens nowhere. */
  bindings: ServiceBinding[] | null;
  /** Why the service is not active (never a secret). */
  error?: string;
  /** More fields of the section (`host_keys` of the ssh section...). */
  [field: string]: unknown;
}

/** Handed to a service's stop(). */
export interface ServiceStopContext {
  /**
   * Aborted when the shutdown grace period is over: close the connections
   * still open at once. Until then, let them finish (refuse new ones).
   */
  readonly signal: AbortSignal;
  /** When the grace period ends (Unix ms). */
  readonly deadline: number;
}

/** A front-end a plugin registers: `PluginContext.registerService(def)`. */
export interface ServiceDef {
  /** Unique within the plugin, e.g. 'sftpd'; logs and errors name it with the plugin. */
  name: string;
  /**
   * The section of GET /api/v2/status the service fills: `ssh`, `ftp` and
   * `webdav` are the API's own sections (their shape stays the API's);
   * another name adds a section of that name. One service per section.
   */
  statusKey: string;
  /** Binds and starts accepting clients; resolves once it does. One that throws must leave nothing bound: its stop() is not called. */
  start(): void | Promise<void>;
  /** Stops accepting clients and closes its connections by `ctx.deadline` (see ServiceStopContext). */
  stop(ctx: ServiceStopContext): void | Promise<void>;
  /** The service's section of /status, read on every request (keep it cheap). */
  status(): ServiceStatus;
}

/** The defender (docs/defender.md): ban checks and scoring of the hosts a service sees. */
export interface ServiceDefender {
  /** True when `ip` is banned now: refuse the client before it logs in. */
  isBanned(ip: string, protocol: Protocol): Promise<boolean>;
  /**
   * Scores an event of `ip` (a failed login is scored by the login service;
   * 'no_auth' is a client that left without trying to log in). True when the
   * host is banned by it.
   */
  addEvent(ip: string, kind: 'invalid' | 'valid' | 'limit_exceeded' | 'no_auth', protocol: Protocol): Promise<boolean>;
}

/**
 * What a service reaches of the core (`PluginHost.services`), resolved on
 * first use: the login service (every credential kind, with the login
 * events and defender scoring a login runs), file sessions (with their
 * filesystem events and listed connections) and the defender.
 */
export interface ServiceHost {
  readonly login: LoginGate;
  /**
   * Opens a user's file session (sdk/file-session.ts) for a logged-in client:
   * while it is open the connection is listed by GET /api/v2/connections with
   * the session's protocol, and `DELETE /api/v2/connections/{id}` (sent to any
   * node) aborts the session's `signal`: the service then closes its client.
   */
  readonly sessions: FileSessionOpener;
  /** Users' public shares opened for reading by external parties, with the REST share routes' checks (sdk/share-sessions.ts). */
  readonly shares: ServiceShares;
  readonly defender: ServiceDefender;
  /** Changes of stored accounts made on any node of the cluster (logins a service keeps in memory must follow them). */
  readonly changes: AccountChanges;
  /** TLS certificates of a service's bindings, served and reloaded as the REST API's HTTPS bindings are (docs/https.md). */
  readonly tls: ServiceTls;
}

/** The TLS files and options of one binding of a service. */
export interface ServiceTlsBinding {
  /** Names the binding in messages and logs, e.g. `webdav.bindings.0` (never key material). */
  key: string;
  /** PEM certificate (chain) and private key; relative paths are resolved against the configuration file's directory. */
  certificate_file: string;
  certificate_key_file: string;
  /** 12 (TLS 1.2, the default) or 13. */
  min_tls_version?: 12 | 13;
  /** OpenSSL cipher suite names; empty: Node's defaults. */
  tls_cipher_suites?: string[];
  /**
   * PEM files of the certificate authorities client certificates are
   * verified against; when given, serverOptions() asks clients for a
   * certificate (`requestCert`) without refusing the handshake
   * (`rejectUnauthorized: false`): the service reads `authorized` and the
   * peer certificate and decides (required, or verified when given).
   */
  client_ca_files?: string[];
}

/**
 * One binding's certificate, loaded and checked, swapped without a restart
 * on a change of its files, on SIGHUP or on reload() (a bad new one is
 * logged and the current one stays in service); each attempt publishes a
 * `certificate` event, as for the REST API's HTTPS bindings.
 */
export interface ServiceCertificate {
  /** Options for `https.createServer` / `tls.createServer`. */
  serverOptions(): import('node:tls').TlsOptions;
  /** The server whose secure context reloads replace; then start(). */
  attach(server: import('node:tls').Server): void;
  /** Starts watching the files and SIGHUP. */
  start(): void;
  /** Stops watching (the server keeps its current certificate). */
  stop(): void;
  reload(): Promise<{ status: 'reloaded' | 'failed' | 'unchanged'; names: string[]; fingerprint256: string; error?: string }>;
  readonly certificate: { readonly fingerprint256: string; readonly names: string[]; readonly validTo: string };
}

export interface ServiceTls {
  /** Loads a binding's certificate; rejects with a message naming `key` and the file when it cannot be used. */
  certificate(binding: ServiceTlsBinding): Promise<ServiceCertificate>;
}

/**
 * A change of stored objects: `type` is a provider object type ('user',
 * 'group', 'folder', 'role', 'ip_list_entry', 'admin', 'api_key'...), 'jti'
 * (a token revoked) or 'all' (anything may have changed: the feed lost or
 * regained its connection to the other nodes).
 */
export interface AccountChange {
  readonly type: string;
  readonly name: string;
}

/**
 * The core's change feed (docs/cluster.md) as services see it: a change
 * made on this node is heard at once (before the provider event), one made
 * on another node of a PostgreSQL cluster when its NOTIFY arrives. While
 * `trusted` is false (the listening connection is down) changes of other
 * nodes may be missed: keep nothing in memory and answer nothing from it.
 */
export interface AccountChanges {
  /** Whether every change made on any node reaches this one (SQLite: always; PostgreSQL: while listening). */
  readonly trusted: boolean;
  /** Calls `fn` on each change (synchronously: keep it cheap); returns the unsubscribe function. */
  subscribe(fn: (c: AccountChange) => void): () => void;
}

import type { EventAccounts, EventShares } from './accounts.js';
import type { HistoryEvent, RecordedKind } from './event-history.js';
import type { FolderRetention } from './retention.js';
import type { MailMessage, MailResult } from './mail.js';
import type { RotateResult } from './log-rotation.js';
import type { UserFilesAccess } from './user-files.js';
import type { FerryConfig } from '../config/schema.js';
import { TOKENS } from '../tokens.js';
import type { ServiceHost } from './service.js';

/** Sends mail through the server's SMTP settings (`smtp` in the configuration). */
export interface MailSender {
  /** False when no mail server is configured (`smtp.host` empty): every send fails. */
  readonly configured: boolean;
  /**
   * Sends one mail; attachments may be streams (read while sending). With
   * `signal`, aborting it stops the send at any step and rejects with the
   * signal's reason.
   */
  send(m: MailMessage, o?: { signal?: AbortSignal }): Promise<MailResult>;
}

/** Rotates the server's log file (`log.file`), keeping the newest `keep` rotated files. */
export interface LogRotation {
  rotate(o?: { keep?: number; now?: Date }): Promise<RotateResult>;
}

/** Marks a user's retention check as running (GET /retention/users/checks lists it); call the returned function when done. */
export interface RetentionTracker {
  begin(username: string, folders: FolderRetention[]): () => void;
}

/**
 * Recorded events for reports (timestamps in Unix nanoseconds, inclusive
 * bounds), oldest first: from the event-search store when the
 * @ferry/events-search plugin is loaded (every node's events, kept across
 * restarts), otherwise this node's in-memory recorder
 * (event_manager.recorder_size newest per kind, lost on restart).
 */
export interface EventHistory {
  readonly source: 'store' | 'memory';
  events<K extends RecordedKind>(kind: K, startNs: number, endNs: number): AsyncIterable<HistoryEvent<K>>;
}

/** The server's backup (the dumpdata route's): every section, or a file in the backups directory. */
export interface BackupDumper {
  dump(): Promise<Record<string, unknown>>;
  /** Writes the dump (mode 0600, temporary file renamed into place) and returns its path relative to backupsDir(). */
  dumpToFile(name: string, data: Record<string, unknown>, indent: boolean): Promise<string>;
  backupsDir(): string;
}

/** The `hook` section of the configuration. */
export interface HookSettings {
  /** Commands (absolute paths) event actions of type 2 may run: `hook.enabled_action_commands` (SERVICE_HOOK__ENABLED_ACTION_COMMANDS). */
  readonly enabledActionCommands: readonly string[];
}

/**
 * The parts of Ferry's core a plugin may use, typed: `PluginContext.host`.
 * Each member is resolved on first use (after every plugin registered), so a
 * plugin may keep the host and read members at run time.
 */
export interface PluginHost {
  /** Users, folders, quotas and storage mounts (maintenance actions). */
  readonly accounts: EventAccounts;
  /** Users' shares (expiration checks). */
  readonly shares: EventShares;
  readonly mail: MailSender;
  readonly logs: LogRotation;
  readonly retention: RetentionTracker;
  readonly eventHistory: EventHistory;
  readonly backup: BackupDumper;
  /** The hook settings (the command allow list of command actions). */
  readonly hook: HookSettings;
  /**
   * A user's files (home and virtual folders, any backend) for actions that
   * work on them: paths confined to the user's tree, the user's permissions
   * and file patterns not applied, no filesystem events, storage quota counted.
   */
  readonly files: UserFilesAccess;
  /** What service plugins (front-ends) reach: the login service, file sessions and the defender (sdk/service.ts). */
  readonly services: ServiceHost;
}

/** Lazily resolved members over `resolve`, frozen. */
function lazyMembers<T extends object>(resolve: <V>(token: symbol) => V, members: Record<string, symbol>): T {
  const out = {} as T;
  for (const [name, token] of Object.entries(members)) {
    let value: unknown;
    Object.defineProperty(out, name, { enumerable: true, get: () => (value ??= resolve(token)) });
  }
  return out;
}

/** The core's own PluginHost over its container (`resolve` is the container's). */
export function pluginHost(resolve: <T>(token: symbol) => T): PluginHost {
  const members: Record<Exclude<keyof PluginHost, 'hook' | 'services'>, symbol> = {
    accounts: TOKENS.EventAccounts,
    shares: TOKENS.Shares,
    mail: TOKENS.Mailer,
    logs: TOKENS.LogRotator,
    retention: TOKENS.RetentionChecks,
    eventHistory: TOKENS.EventHistory,
    backup: TOKENS.Backup,
    files: TOKENS.UserFiles,
  };
  const host = lazyMembers<PluginHost>(resolve, members);
  const serviceMembers: Record<keyof ServiceHost, symbol> = {
    login: TOKENS.LoginService,
    sessions: TOKENS.ServiceSessions,
    shares: TOKENS.ServiceShares,
    defender: TOKENS.Defender,
    changes: TOKENS.AccountChanges,
    tls: TOKENS.ServiceTls,
  };
  Object.defineProperty(host, 'services', { enumerable: true, value: Object.freeze(lazyMembers<ServiceHost>(resolve, serviceMembers)) });
  let hook: HookSettings | undefined;
  Object.defineProperty(host, 'hook', {
    enumerable: true,
    get: () => (hook ??= Object.freeze({ enabledActionCommands: Object.freeze([...resolve<FerryConfig>(TOKENS.Config).hook.enabled_action_commands]) })),
  });
  return Object.freeze(host);
}

import type { FsEvent, FsEventAction, FsEventStatus, FsObjectType } from '../events/event-types.js';
import type { EventBus } from '../events/event-bus.js';
import type { FsHooks } from '../events/fs-hooks.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import type { SessionOpOptions } from '../sdk/file-session.js';
import type { FsFactory } from './fs-factory.js';
import type { Connection, ConnectionManager } from './connection-manager.js';
import type { PermissionSet, FilePermission } from './permissions.js';
import type { PathWrites, QuotaTracker } from './quota-tracker.js';
import type { UsageStore } from './usage-store.js';
import type { UploadJournal } from './upload-journal.js';
import type { QuotaService } from './quota.service.js';
import type { UploadCounters } from './upload-counters.js';
import type { Resolved, VirtualFs } from './vfs.js';

/** What a file session works with (file-sessions.service.ts hands it over). */
export interface FileSessionDeps {
  config: FerryConfig;
  factory: FsFactory;
  tracker: QuotaTracker;
  pathWrites: PathWrites;
  journal: UploadJournal;
  usage: UsageStore;
  quota: QuotaService;
  bus: EventBus;
  hooks: FsHooks;
  connections: ConnectionManager;
  instanceId: string;
  logger: Logger;
}

/**
 * The members of a FileSession its transfer modules (transfers.ts,
 * downloads.ts, session-io.ts) use: they take this view of the session, so
 * that they and file-session.ts do not import each other.
 */
export interface SessionCore {
  readonly vfs: VirtualFs;
  readonly perms: PermissionSet;
  readonly user: EffectiveUser;
  readonly ip: string;
  readonly conn: Connection;
  readonly signal: AbortSignal;
  readonly deps: FileSessionDeps;
  ensureWritable(): void;
  requirePerm(dir: string, what: string, ...perms: FilePermission[]): void;
  checkName(vpath: string, mode: 'read' | 'write'): void;
  event(
    action: FsEventAction,
    target: Resolved,
    o: { to?: Resolved; size?: number; startedAt: number; status?: FsEventStatus; openFlags?: string; objectType?: FsObjectType },
  ): Promise<FsEvent>;
  publish(ev: FsEvent): void;
  publishFailure(
    action: FsEventAction,
    target: Resolved,
    startedAt: number,
    err: unknown,
    o?: { to?: Resolved; size?: number; objectType?: FsObjectType },
  ): Promise<void>;
  before(action: 'pre-upload' | 'pre-download' | 'pre-delete', target: Resolved, size: number): Promise<void>;
  mkdir(vpath: string, parents?: boolean, o?: SessionOpOptions): Promise<void>;
  backendName(r: Resolved): string;
  /** The session's deferred upload counters (SessionWriteOptions.deferCounters), made on first use. */
  uploadCounters(): UploadCounters;
}

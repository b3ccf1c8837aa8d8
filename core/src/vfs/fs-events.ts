import type { EventBus } from '../events/event-bus.js';
import { nowNanos, type EventProtocol, type FsEvent, type FsEventAction, type FsEventStatus, type FsObjectType } from '../events/event-types.js';
import type { EffectiveUser } from '../accounts/effective-user.js';
import { eventFsPath, type Resolved, type VirtualFs } from './vfs.js';

export const FS_STATUS = { Ok: 1, Error: 2, QuotaExceeded: 3 } as const satisfies Record<string, FsEventStatus>;

export interface FsEventSource {
  user: EffectiveUser;
  vfs: VirtualFs;
  ip: string;
  protocol: EventProtocol;
  sessionId: string;
  instanceId: string;
  /** `ssh_cmd` of the events (sessions of SSH commands). */
  sshCommand?: string;
}

export interface FsEventInput {
  action: FsEventAction;
  target: Resolved;
  to?: Resolved;
  fileSize?: number;
  /** Milliseconds since the operation started (Date.now() value). */
  startedAt: number;
  status: FsEventStatus;
  openFlags?: string;
  /** Defaults to `directory` for mkdir/rmdir, `file` otherwise. */
  objectType?: FsObjectType;
}

function objectTypeOf(e: FsEventInput): FsObjectType {
  return e.objectType ?? (e.action === 'mkdir' || e.action === 'rmdir' ? 'directory' : 'file');
}

/** Builds a complete FsEvent (every field of the REST API's FsEvent but the id). */
export async function buildFsEvent(src: FsEventSource, e: FsEventInput): Promise<FsEvent> {
  const where = await src.vfs.describe(e.target.mount);
  return {
    timestamp: nowNanos(),
    action: e.action,
    username: src.user.username,
    fs_path: eventFsPath(e.target),
    fs_target_path: e.to ? eventFsPath(e.to) : undefined,
    virtual_path: e.target.vpath,
    virtual_target_path: e.to?.vpath,
    ...(src.sshCommand ? { ssh_cmd: src.sshCommand } : {}),
    file_size: e.fileSize ?? 0,
    elapsed: Math.max(0, Date.now() - e.startedAt),
    status: e.status,
    protocol: src.protocol,
    ip: src.ip,
    session_id: src.sessionId,
    fs_provider: e.target.mount.filesystem.provider,
    bucket: where.bucket,
    endpoint: where.endpoint,
    open_flags: e.openFlags,
    role: src.user.role,
    instance_id: src.instanceId,
    groups: src.user.groups.map((g) => g.name),
    object_type: objectTypeOf(e),
  };
}

/** Publishes on the core bus (listeners run asynchronously and never break the operation). */
export function publishFsEvent(bus: EventBus, event: FsEvent): void {
  bus.publish('fs', event);
}

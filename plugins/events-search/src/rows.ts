import { redactSecrets, type FsEvent, type LogEvent, type ProviderEvent, type StoredFsEvent, type StoredLogEvent, type StoredProviderEvent } from '@ferry/core';
import type { FsEventRow, LogEventRow, ProviderEventRow } from './entities.js';
import { idTimestamp, type EventIds } from './ids.js';

/** Published events to rows (the id carries the timestamp) and rows back to API events. */

export function fsRow(ids: EventIds, e: FsEvent): FsEventRow {
  return {
    id: ids.next(e.timestamp),
    action: e.action,
    username: e.username ?? '',
    fs_path: e.fs_path ?? '',
    fs_target_path: e.fs_target_path ?? '',
    virtual_path: e.virtual_path ?? '',
    virtual_target_path: e.virtual_target_path ?? '',
    ssh_cmd: e.ssh_cmd ?? '',
    file_size: Math.max(0, Math.trunc(e.file_size || 0)),
    elapsed: Math.max(0, Math.trunc(e.elapsed || 0)),
    status: e.status,
    protocol: e.protocol ?? '',
    ip: e.ip ?? '',
    session_id: e.session_id ?? '',
    fs_provider: e.fs_provider ?? 0,
    bucket: e.bucket ?? '',
    endpoint: e.endpoint ?? '',
    open_flags: e.open_flags ?? '',
    role: e.role ?? '',
    instance_id: e.instance_id ?? '',
  };
}

/** object_data is stored as JSON with every secret redacted by the core's redaction (again: events from any publisher). */
export function providerRow(ids: EventIds, e: ProviderEvent): ProviderEventRow {
  return {
    id: ids.next(e.timestamp),
    action: e.action,
    username: e.username ?? '',
    ip: e.ip ?? '',
    object_type: e.object_type,
    object_name: e.object_name ?? '',
    object_data: JSON.stringify(redactSecrets(e.object_data ?? {})),
    role: e.role ?? '',
    instance_id: e.instance_id ?? '',
  };
}

export function logRow(ids: EventIds, e: LogEvent): LogEventRow {
  return {
    id: ids.next(e.timestamp),
    event: e.event,
    protocol: e.protocol ?? '',
    username: e.username ?? '',
    ip: e.ip ?? '',
    message: e.message ?? '',
    role: e.role ?? '',
    instance_id: e.instance_id ?? '',
  };
}

type Raw = Record<string, unknown>;
const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));

export function fsEvent(r: Raw): StoredFsEvent {
  const id = str(r.id);
  return {
    id,
    timestamp: idTimestamp(id),
    action: str(r.action) as StoredFsEvent['action'],
    username: str(r.username),
    fs_path: str(r.fs_path),
    fs_target_path: str(r.fs_target_path),
    virtual_path: str(r.virtual_path),
    virtual_target_path: str(r.virtual_target_path),
    ssh_cmd: str(r.ssh_cmd),
    file_size: Number(r.file_size),
    elapsed: Number(r.elapsed),
    status: Number(r.status) as StoredFsEvent['status'],
    protocol: str(r.protocol) as StoredFsEvent['protocol'],
    ip: str(r.ip),
    session_id: str(r.session_id),
    fs_provider: Number(r.fs_provider),
    bucket: str(r.bucket),
    endpoint: str(r.endpoint),
    open_flags: str(r.open_flags),
    role: str(r.role),
    instance_id: str(r.instance_id),
  };
}

/** object_data: the stored JSON, base64 encoded (`format: byte`); absent when the columns left it out. */
export function providerEvent(r: Raw): StoredProviderEvent {
  const id = str(r.id);
  const out: StoredProviderEvent = {
    id,
    timestamp: idTimestamp(id),
    action: str(r.action) as StoredProviderEvent['action'],
    username: str(r.username),
    ip: str(r.ip),
    object_type: str(r.object_type) as StoredProviderEvent['object_type'],
    object_name: str(r.object_name),
    role: str(r.role),
    instance_id: str(r.instance_id),
  };
  if ('object_data' in r) out.object_data = Buffer.from(str(r.object_data), 'utf8').toString('base64');
  return out;
}

export function logEvent(r: Raw): StoredLogEvent {
  const id = str(r.id);
  return {
    id,
    timestamp: idTimestamp(id),
    event: Number(r.event) as StoredLogEvent['event'],
    protocol: str(r.protocol) as StoredLogEvent['protocol'],
    username: str(r.username),
    ip: str(r.ip),
    message: str(r.message),
    role: str(r.role),
    instance_id: str(r.instance_id),
  };
}

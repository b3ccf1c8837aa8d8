/**
 * Event shapes published on the core event bus. Field names follow the
 * FsEvent / ProviderEvent / LogEvent objects of the REST API so that event
 * search can store and return them unchanged.
 */
import type { Protocol } from '../sdk/protocols.js';

export type FsEventAction =
  | 'download'
  | 'upload'
  | 'first-upload'
  | 'first-download'
  | 'delete'
  | 'rename'
  | 'mkdir'
  | 'rmdir'
  | 'ssh_cmd'
  // fired before the operation, to the sync hooks only (never published on the bus)
  | 'pre-upload'
  | 'pre-download'
  | 'pre-delete';

/** 1 ok, 2 generic error, 3 quota exceeded. */
export type FsEventStatus = 1 | 2 | 3;

/** What a filesystem event acted on (the `.ObjectType` of event rule templates). */
export type FsObjectType = 'file' | 'directory';

/** The protocol an event names: one of sdk/protocols.ts. */
export type EventProtocol = Protocol;

export interface FsEvent {
  /** Nanoseconds since the Unix epoch. */
  timestamp: number;
  action: FsEventAction;
  username: string;
  fs_path: string;
  fs_target_path?: string;
  virtual_path: string;
  virtual_target_path?: string;
  ssh_cmd?: string;
  file_size: number;
  /** Milliseconds the operation took. */
  elapsed: number;
  status: FsEventStatus;
  protocol: EventProtocol;
  ip: string;
  session_id: string;
  fs_provider: number;
  bucket?: string;
  endpoint?: string;
  open_flags?: string;
  role?: string;
  instance_id: string;
  /** Group names of the user, for rule conditions. */
  groups?: string[];
  /**
   * Whether the event acted on a file or a directory (mkdir, rmdir and the
   * rename of a directory). Not part of the REST API's FsEvent, like `groups`.
   */
  object_type?: FsObjectType;
}

export type ProviderEventAction = 'add' | 'update' | 'delete';
export type ProviderObjectType = 'user' | 'folder' | 'group' | 'admin' | 'api_key' | 'share' | 'event_action' | 'event_rule' | 'role' | 'ip_list_entry';

export interface ProviderEvent {
  timestamp: number;
  action: ProviderEventAction;
  /** The admin (or user, for shares) that made the change. */
  username: string;
  ip: string;
  object_type: ProviderObjectType;
  object_name: string;
  /** The object as the API renders it, secrets redacted. */
  object_data: Record<string, unknown>;
  role?: string;
  instance_id: string;
}

/** 1 login failed, 2 login failed (no such user), 3 no login tried, 4 algorithm negotiation failed, 5 login succeeded. */
export type LogEventType = 1 | 2 | 3 | 4 | 5;

export interface LogEvent {
  timestamp: number;
  event: LogEventType;
  protocol: EventProtocol;
  username: string;
  ip: string;
  message: string;
  role?: string;
  instance_id: string;
}

export interface IpBlockedEvent {
  timestamp: number;
  ip: string;
  protocol: EventProtocol;
  instance_id: string;
}

export interface CertificateEvent {
  timestamp: number;
  /** Binding or domain names the certificate serves. */
  names: string[];
  status: 'renewed' | 'reloaded' | 'failed';
  error?: string;
  instance_id: string;
}

export interface IdpLoginEvent {
  timestamp: number;
  kind: 'user' | 'admin';
  username: string;
  email?: string;
  role?: string;
  ip: string;
  /** Claims the binding lists in custom_fields. */
  fields: Record<string, unknown>;
  instance_id: string;
}

/** Topic name to payload type. */
export interface EventMap {
  fs: FsEvent;
  provider: ProviderEvent;
  log: LogEvent;
  'ip-blocked': IpBlockedEvent;
  certificate: CertificateEvent;
  'idp-login': IdpLoginEvent;
}

/** Nanoseconds since the epoch as a JS number (microsecond resolution). */
export function nowNanos(): number {
  return Date.now() * 1_000_000;
}

import { EntitySchema } from '@mikro-orm/core';

/**
 * Rows of the three event tables. The timestamp is not a column: it is the
 * start of the id (see ids.ts), so every time filter and the cursor use the
 * primary key. Strings are '' when the event has no value.
 */
export interface FsEventRow {
  id: string;
  action: string;
  username: string;
  fs_path: string;
  fs_target_path: string;
  virtual_path: string;
  virtual_target_path: string;
  ssh_cmd: string;
  file_size: number;
  elapsed: number;
  status: number;
  protocol: string;
  ip: string;
  session_id: string;
  fs_provider: number;
  bucket: string;
  endpoint: string;
  open_flags: string;
  role: string;
  instance_id: string;
}

export interface ProviderEventRow {
  id: string;
  action: string;
  username: string;
  ip: string;
  object_type: string;
  object_name: string;
  /** JSON of the object, secrets redacted. */
  object_data: string;
  role: string;
  instance_id: string;
}

export interface LogEventRow {
  id: string;
  event: number;
  protocol: string;
  username: string;
  ip: string;
  message: string;
  role: string;
  instance_id: string;
}

const id = { type: 'string', primary: true, length: 32 } as const;
const text = { type: 'text', default: '' } as const;
const num = { type: 'number', columnType: 'bigint', default: 0 } as const;
const int = { type: 'number', columnType: 'integer', default: 0 } as const;

export const FsEventEntity = new EntitySchema<FsEventRow>({
  name: 'EventsSearchFsEvent',
  tableName: 'events_fs',
  properties: {
    id,
    action: { type: 'text' },
    username: text,
    fs_path: text,
    fs_target_path: text,
    virtual_path: text,
    virtual_target_path: text,
    ssh_cmd: text,
    file_size: num,
    elapsed: num,
    status: int,
    protocol: text,
    ip: text,
    session_id: text,
    fs_provider: int,
    bucket: text,
    endpoint: text,
    open_flags: text,
    role: text,
    instance_id: text,
  },
});

export const ProviderEventEntity = new EntitySchema<ProviderEventRow>({
  name: 'EventsSearchProviderEvent',
  tableName: 'events_provider',
  properties: {
    id,
    action: { type: 'text' },
    username: text,
    ip: text,
    object_type: text,
    object_name: text,
    object_data: text,
    role: text,
    instance_id: text,
  },
});

export const LogEventEntity = new EntitySchema<LogEventRow>({
  name: 'EventsSearchLogEvent',
  tableName: 'events_log',
  properties: {
    id,
    event: int,
    protocol: text,
    username: text,
    ip: text,
    message: text,
    role: text,
    instance_id: text,
  },
});

export const entities = [FsEventEntity, ProviderEventEntity, LogEventEntity];

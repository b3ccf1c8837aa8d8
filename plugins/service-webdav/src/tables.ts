import type { PluginEntitiesDef, PluginMigration } from '@ferry/core';
import { EntitySchema } from '@mikro-orm/core';

/** A row of webdav_locks: a lock of one account's tree (depth 1 stands for infinity). */
export interface LockRow {
  token: string;
  username: string;
  path: string;
  depth: number;
  scope: string;
  owner: string;
  timeout: number;
  /** Unix ms. */
  expires: number;
}

/** A row of webdav_props: a dead property of one path of one account. */
export interface PropRow {
  username: string;
  path: string;
  ns: string;
  name: string;
  xml: string;
}

const LockEntity = new EntitySchema<LockRow>({
  name: 'WebdavLock',
  tableName: 'webdav_locks',
  properties: {
    token: { type: 'string', primary: true },
    username: { type: 'string' },
    path: { type: 'text' },
    depth: { type: 'integer' },
    scope: { type: 'string' },
    owner: { type: 'text' },
    timeout: { type: 'integer' },
    expires: { type: 'bigint' },
  },
});

const PropEntity = new EntitySchema<PropRow>({
  name: 'WebdavProp',
  tableName: 'webdav_props',
  properties: {
    username: { type: 'string', primary: true },
    path: { type: 'text', primary: true },
    ns: { type: 'text', primary: true },
    name: { type: 'text', primary: true },
    xml: { type: 'text' },
  },
});

/** The plugin's tables; a change is a new migration, never an edit of this one. */
const sqlite: PluginMigration[] = [
  {
    name: 'Migration20261203180000_service_webdav',
    statements: [
      'create table `webdav_locks` (`token` text not null primary key, `username` text not null, `path` text not null, `depth` integer not null, `scope` text not null, `owner` text not null, `timeout` integer not null, `expires` integer not null);',
      'create index `webdav_locks_username_index` on `webdav_locks` (`username`);',
      'create table `webdav_props` (`username` text not null, `path` text not null, `ns` text not null, `name` text not null, `xml` text not null, primary key (`username`, `path`, `ns`, `name`));',
    ],
  },
];
const postgresql: PluginMigration[] = [
  {
    name: 'Migration20261203180000_service_webdav',
    statements: [
      'create table "webdav_locks" ("token" text not null, "username" text not null, "path" text not null, "depth" integer not null, "scope" text not null, "owner" text not null, "timeout" integer not null, "expires" bigint not null, constraint "webdav_locks_pkey" primary key ("token"));',
      'create index "webdav_locks_username_index" on "webdav_locks" ("username");',
      'create table "webdav_props" ("username" text not null, "path" text not null, "ns" text not null, "name" text not null, "xml" text not null, constraint "webdav_props_pkey" primary key ("username", "path", "ns", "name"));',
    ],
  },
];

export const tables: PluginEntitiesDef = { entities: [LockEntity, PropEntity], migrations: { sqlite, postgresql } };

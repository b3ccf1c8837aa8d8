import { EntitySchema } from '@mikro-orm/core';
import { counter, json, msTime, name, text } from './columns.js';
import type { StoredFilesystem } from './user.entity.js';

export class Folder {
  id!: number;
  name!: string;
  description = '';
  mapped_path = '';
  filesystem: StoredFilesystem = { provider: 0 };
  used_quota_size = 0;
  used_quota_files = 0;
  last_quota_update = 0;
  created_at = 0;
  updated_at = 0;
}

export const FolderSchema = new EntitySchema<Folder>({
  class: Folder,
  tableName: 'folders',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    name: name(),
    description: { ...text(), default: '' },
    mapped_path: { ...text(), default: '' },
    filesystem: json(),
    used_quota_size: counter(),
    used_quota_files: { type: 'integer', default: 0 },
    last_quota_update: msTime(),
    created_at: msTime(),
    updated_at: msTime(),
  },
});

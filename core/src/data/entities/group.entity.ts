import { EntitySchema } from '@mikro-orm/core';
import { json, msTime, name, text } from './columns.js';

export class Group {
  id!: number;
  name!: string;
  description = '';
  /** GroupUserSettings as stored (filesystem secrets encrypted). */
  user_settings: Record<string, unknown> = {};
  created_at = 0;
  updated_at = 0;
}

export const GroupSchema = new EntitySchema<Group>({
  class: Group,
  tableName: 'groups',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    name: name(),
    description: { ...text(), default: '' },
    user_settings: json(),
    created_at: msTime(),
    updated_at: msTime(),
  },
});

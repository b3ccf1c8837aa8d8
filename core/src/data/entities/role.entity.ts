import { EntitySchema } from '@mikro-orm/core';
import { msTime, name, text } from './columns.js';

export class Role {
  id!: number;
  name!: string;
  description = '';
  created_at = 0;
  updated_at = 0;
}

export const RoleSchema = new EntitySchema<Role>({
  class: Role,
  tableName: 'roles',
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    name: name(),
    description: { ...text(), default: '' },
    created_at: msTime(),
    updated_at: msTime(),
  },
});

import { EntitySchema, type Rel } from '@mikro-orm/core';
import { counter } from './columns.js';
import { User } from './user.entity.js';
import { Group } from './group.entity.js';
import { Folder } from './folder.entity.js';
import { Admin } from './admin.entity.js';

/** A user's membership of a group: type 1 primary, 2 secondary, 3 membership. */
export class UserGroup {
  id!: number;
  user!: Rel<User>;
  group!: Rel<Group>;
  type = 2;
}

export const UserGroupSchema = new EntitySchema<UserGroup>({
  class: UserGroup,
  tableName: 'users_groups',
  uniques: [{ properties: ['user', 'group'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
    group: { kind: 'm:1', entity: () => Group, deleteRule: 'no action', index: true },
    type: { type: 'integer', default: 2 },
  },
});

/** An admin's group mapping (groups new users of this admin get). */
export class AdminGroup {
  id!: number;
  admin!: Rel<Admin>;
  group!: Rel<Group>;
  /** 0 membership, 1 primary, 2 secondary. */
  add_to_users_as = 0;
}

export const AdminGroupSchema = new EntitySchema<AdminGroup>({
  class: AdminGroup,
  tableName: 'admins_groups',
  uniques: [{ properties: ['admin', 'group'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    admin: { kind: 'm:1', entity: () => Admin, deleteRule: 'cascade', index: true },
    group: { kind: 'm:1', entity: () => Group, deleteRule: 'no action', index: true },
    add_to_users_as: { type: 'integer', default: 0 },
  },
});

interface FolderMappingFields {
  id: number;
  folder: Rel<Folder>;
  virtual_path: string;
  /** -1: the folder counts against the owner's quota. */
  quota_size: number;
  quota_files: number;
}

export class UserFolder implements FolderMappingFields {
  id!: number;
  user!: Rel<User>;
  folder!: Rel<Folder>;
  virtual_path!: string;
  quota_size = -1;
  quota_files = -1;
}

export class GroupFolder implements FolderMappingFields {
  id!: number;
  group!: Rel<Group>;
  folder!: Rel<Folder>;
  virtual_path!: string;
  quota_size = -1;
  quota_files = -1;
}

const mappingProps = {
  id: { type: 'integer', primary: true, autoincrement: true },
  folder: { kind: 'm:1', entity: () => Folder, deleteRule: 'no action', index: true },
  virtual_path: { type: 'text' },
  quota_size: { ...counter(), default: -1 },
  quota_files: { type: 'integer', default: -1 },
} as const;

export const UserFolderSchema = new EntitySchema<UserFolder>({
  class: UserFolder,
  tableName: 'users_folders',
  uniques: [{ properties: ['user', 'folder'] }],
  properties: {
    ...mappingProps,
    user: { kind: 'm:1', entity: () => User, deleteRule: 'cascade', index: true },
  },
});

export const GroupFolderSchema = new EntitySchema<GroupFolder>({
  class: GroupFolder,
  tableName: 'groups_folders',
  uniques: [{ properties: ['group', 'folder'] }],
  properties: {
    ...mappingProps,
    group: { kind: 'm:1', entity: () => Group, deleteRule: 'cascade', index: true },
  },
});

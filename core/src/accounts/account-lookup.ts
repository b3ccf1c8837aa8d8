import type { EntityManager } from '@mikro-orm/core';
import { Admin, Folder, Group, Role, User } from '../data/entities/index.js';
import type { StoredFilesystem } from '../data/entities/index.js';

/** A group's user_settings as stored (GroupUserSettings, filesystem secrets encrypted). */
export interface StoredGroupSettings {
  home_dir?: string;
  max_sessions?: number;
  quota_size?: number;
  quota_files?: number;
  permissions?: Record<string, string[]>;
  upload_bandwidth?: number;
  download_bandwidth?: number;
  upload_data_transfer?: number;
  download_data_transfer?: number;
  total_data_transfer?: number;
  expires_in?: number;
  filters?: Record<string, unknown>;
  filesystem?: StoredFilesystem;
}

/**
 * Name lookups used while validating an object that references others. The
 * API uses the database; a restore overlays the objects of the backup being
 * validated, so references between objects of one backup resolve.
 */
export interface AccountLookup {
  role(name: string): Promise<boolean>;
  /** The group's user settings, or null when the group does not exist. */
  group(name: string): Promise<StoredGroupSettings | null>;
  folder(name: string): Promise<boolean>;
  user(name: string): Promise<boolean>;
  admin(name: string): Promise<boolean>;
}

export function dbLookup(em: EntityManager): AccountLookup {
  return {
    role: async (name) => (await em.count(Role, { name })) > 0,
    group: async (name) => {
      const g = await em.findOne(Group, { name }, { fields: ['id', 'user_settings'] });
      return g ? ((g.user_settings ?? {}) as StoredGroupSettings) : null;
    },
    folder: async (name) => (await em.count(Folder, { name })) > 0,
    user: async (name) => (await em.count(User, { username: name })) > 0,
    admin: async (name) => (await em.count(Admin, { username: name })) > 0,
  };
}

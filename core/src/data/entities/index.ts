import { RoleSchema } from './role.entity.js';
import { AdminSchema } from './admin.entity.js';
import { ApiKeySchema } from './api-key.entity.js';
import { ShareCodeSchema, ShareSchema } from './share.entity.js';
import { LeaseSchema, RevokedTokenSchema, SettingSchema } from './system.entity.js';
import { UserSchema } from './user.entity.js';
import { GroupSchema } from './group.entity.js';
import { FolderSchema } from './folder.entity.js';
import { EventActionSchema, EventRuleActionSchema, EventRuleSchema } from './event.entity.js';
import { IpListEntrySchema } from './ip-list.entity.js';
import { DefenderEventSchema, DefenderHostSchema } from './defender.entity.js';
import { TransferUsageSchema } from './usage.entity.js';
import { PasswordResetCodeSchema } from './password-reset.entity.js';
import { WebSessionSchema } from './web-session.entity.js';
import { AdminGroupSchema, GroupFolderSchema, UserFolderSchema, UserGroupSchema } from './mappings.entity.js';

export * from './role.entity.js';
export * from './admin.entity.js';
export * from './api-key.entity.js';
export * from './system.entity.js';
export * from './user.entity.js';
export * from './group.entity.js';
export * from './folder.entity.js';
export * from './mappings.entity.js';
export * from './event.entity.js';
export * from './ip-list.entity.js';
export * from './defender.entity.js';
export * from './usage.entity.js';
export * from './password-reset.entity.js';
export * from './share.entity.js';
export * from './web-session.entity.js';

/** Every core entity; plugins add theirs through the registry. */
export const coreEntities = [
  RoleSchema,
  AdminSchema,
  ApiKeySchema,
  RevokedTokenSchema,
  SettingSchema,
  LeaseSchema,
  UserSchema,
  GroupSchema,
  FolderSchema,
  UserGroupSchema,
  AdminGroupSchema,
  UserFolderSchema,
  GroupFolderSchema,
  EventActionSchema,
  EventRuleSchema,
  EventRuleActionSchema,
  IpListEntrySchema,
  ShareSchema,
  ShareCodeSchema,
  DefenderHostSchema,
  DefenderEventSchema,
  TransferUsageSchema,
  PasswordResetCodeSchema,
  WebSessionSchema,
];

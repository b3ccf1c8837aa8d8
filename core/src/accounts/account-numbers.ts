/**
 * Stored numbers of accounts (public API: they are in the database, in
 * backups and on the wire, so a value is never reused).
 */

/** User.status and Admin.status. */
export const AccountStatus = {
  Disabled: 0,
  Enabled: 1,
} as const;
export type AccountStatus = (typeof AccountStatus)[keyof typeof AccountStatus];

/**
 * `groups[].type` of a user: a primary group supplies home_dir, filesystem
 * and permissions; secondary groups add virtual folders; membership groups
 * only share policies (filters, limits).
 */
export const GroupType = {
  Primary: 1,
  Secondary: 2,
  Membership: 3,
} as const;
export type GroupType = (typeof GroupType)[keyof typeof GroupType];

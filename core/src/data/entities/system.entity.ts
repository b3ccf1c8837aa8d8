import { EntitySchema } from '@mikro-orm/core';
import { msTime, text } from './columns.js';

/** A JWT revoked before its natural expiry (shared by every node using the database). */
export class RevokedToken {
  jti!: string;
  expires_at = 0;
}

export const RevokedTokenSchema = new EntitySchema<RevokedToken>({
  class: RevokedToken,
  tableName: 'revoked_tokens',
  properties: {
    jti: { type: 'string', length: 64, primary: true },
    expires_at: msTime({ index: true }),
  },
});

/** Cluster-wide settings (JWT signing key, schema facts). */
export class Setting {
  key!: string;
  value!: string;
  updated_at = 0;
}

export const SettingSchema = new EntitySchema<Setting>({
  class: Setting,
  tableName: 'settings',
  properties: {
    key: { type: 'string', length: 128, primary: true },
    value: text(),
    updated_at: msTime(),
  },
});

/** A named lock with an expiry, used for cluster-wide leases (scheduler ticks, scans). */
export class Lease {
  name!: string;
  owner!: string;
  expires_at = 0;
}

export const LeaseSchema = new EntitySchema<Lease>({
  class: Lease,
  tableName: 'leases',
  properties: {
    name: { type: 'string', length: 255, primary: true },
    owner: { type: 'string', length: 255 },
    expires_at: msTime(),
  },
});

import { EntitySchema } from '@mikro-orm/core';
import { int, msTime } from './columns.js';

/**
 * A host the defender knows: banned until `ban_time` (Unix ms; 0 or past:
 * not banned) or with scored events in the observation window. `ip` is the
 * canonical address (util/ip-net.ts, without prefix). Shared by every node
 * using the database, so a ban holds on all of them.
 */
export class DefenderHost {
  ip!: string;
  ban_time = 0;
  /** Last scored event or ban change (oldest hosts go first when entries_hard_limit is reached). */
  updated_at = 0;
}

export const DefenderHostSchema = new EntitySchema<DefenderHost>({
  class: DefenderHost,
  tableName: 'defender_hosts',
  properties: {
    ip: { type: 'string', length: 64, primary: true },
    ban_time: msTime(),
    updated_at: msTime({ index: true }),
  },
});

/** One scored event of a host (failed login, limit exceeded...); the score of a host is the sum of its events in the observation window. */
export class DefenderEvent {
  id!: number;
  ip!: string;
  date_time = 0;
  score = 0;
}

export const DefenderEventSchema = new EntitySchema<DefenderEvent>({
  class: DefenderEvent,
  tableName: 'defender_events',
  indexes: [{ properties: ['ip', 'date_time'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    ip: { type: 'string', length: 64 },
    date_time: msTime({ index: true }),
    score: int(0),
  },
});

import { EntitySchema } from '@mikro-orm/core';
import { int, msTime, text } from './columns.js';

/**
 * An entry of an IP list: `type` 1 allow list, 2 defender list, 3 rate
 * limiter safe list. `ipornet` is the canonical network (util/ip-net.ts),
 * unique per list.
 */
export class IpListEntry {
  id!: number;
  type!: number;
  ipornet!: string;
  /** 1 allow, 2 deny (defender lists only). */
  mode = 1;
  /** Protocol bit mask (1 SSH, 2 FTP, 4 DAV, 8 HTTP); 0 means every protocol. */
  protocols = 0;
  description = '';
  created_at = 0;
  updated_at = 0;
}

export const IpListEntrySchema = new EntitySchema<IpListEntry>({
  class: IpListEntry,
  tableName: 'ip_lists',
  uniques: [{ properties: ['type', 'ipornet'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    type: { type: 'integer' },
    ipornet: { type: 'string', length: 64 },
    mode: int(1),
    protocols: int(0),
    description: { ...text(), default: '' },
    created_at: msTime(),
    updated_at: msTime(),
  },
});

import { EntitySchema } from '@mikro-orm/core';
import { counter, int } from './columns.js';

/**
 * Bytes and transfers of one user on one UTC day (`day` as YYYY-MM-DD), kept
 * by ops/usage.service.ts for GET /api/v2/saas/usage. Keyed by username so
 * that the history of a deleted user stays countable.
 */
export class TransferUsage {
  username!: string;
  day!: string;
  upload_bytes = 0;
  download_bytes = 0;
  uploads = 0;
  downloads = 0;
}

export const TransferUsageSchema = new EntitySchema<TransferUsage>({
  class: TransferUsage,
  tableName: 'transfer_usage',
  properties: {
    username: { type: 'string', length: 255, primary: true },
    day: { type: 'string', length: 10, primary: true, index: true },
    upload_bytes: counter(),
    download_bytes: counter(),
    uploads: int(0),
    downloads: int(0),
  },
});

import type { MikroORM } from '@mikro-orm/core';

interface SqlRunner {
  execute<T>(sql: string, params?: unknown[], method?: 'all' | 'get' | 'run'): Promise<T>;
}

export interface StoredUsage {
  size: number;
  files: number;
}

export interface StoredTransferUsage {
  upload: number;
  download: number;
}

/**
 * Reads of the stored usage counters the quota checks start from, and the
 * first_upload / first_download markers. Counter updates go through
 * QuotaService (atomic increments).
 */
export class UsageStore {
  constructor(private readonly orm: MikroORM) {}

  private sql(): SqlRunner {
    return this.orm.em.fork().getConnection() as unknown as SqlRunner;
  }

  async userUsage(userId: number): Promise<StoredUsage & StoredTransferUsage> {
    const rows = await this.sql().execute<Record<string, unknown>[]>(
      'select used_quota_size, used_quota_files, used_upload_data_transfer, used_download_data_transfer from users where id = ?',
      [userId],
      'all',
    );
    const r = rows[0] ?? {};
    return {
      size: Number(r.used_quota_size ?? 0),
      files: Number(r.used_quota_files ?? 0),
      upload: Number(r.used_upload_data_transfer ?? 0),
      download: Number(r.used_download_data_transfer ?? 0),
    };
  }

  async folderUsage(folderId: number): Promise<StoredUsage> {
    const rows = await this.sql().execute<Record<string, unknown>[]>('select used_quota_size, used_quota_files from folders where id = ?', [folderId], 'all');
    const r = rows[0] ?? {};
    return { size: Number(r.used_quota_size ?? 0), files: Number(r.used_quota_files ?? 0) };
  }

  /** Sets first_upload / first_download when still 0; true when this call set it. */
  async markFirst(userId: number, column: 'first_upload' | 'first_download'): Promise<boolean> {
    const r = await this.sql().execute<{ affectedRows?: number; rowCount?: number }>(
      `update users set ${column} = ? where id = ? and ${column} = 0`,
      [Date.now(), userId],
      'run',
    );
    return Number(r?.affectedRows ?? r?.rowCount ?? 0) > 0;
  }
}

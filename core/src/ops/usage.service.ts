import { inject, scoped, Lifecycle } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import type { Logger } from '../logger.js';
import type { EventBus } from '../events/event-bus.js';
import type { FsEvent } from '../events/event-types.js';
import { InvalidError } from '../errors.js';

interface SqlRunner {
  execute<T>(sql: string, params?: unknown[], method?: 'all' | 'get' | 'run', ctx?: unknown): Promise<T>;
}

/** Seconds between two writes of the transfer counters gathered in memory. */
export const USAGE_FLUSH_SECONDS = 5;
/** Longest period one usage query may cover, in days. */
export const USAGE_MAX_DAYS = 366;

interface DayCounters {
  upload_bytes: number;
  download_bytes: number;
  uploads: number;
  downloads: number;
}

export interface UsageQuery {
  /** First and last day (UTC, YYYY-MM-DD), inclusive. */
  from?: string;
  to?: string;
  usernames?: string[];
  offset: number;
  limit: number;
}

export interface UserUsage {
  username: string;
  storage: { used_size: number; used_files: number; quota_size: number; quota_files: number; last_quota_update: number };
  bandwidth: {
    upload_bytes: number;
    download_bytes: number;
    total_bytes: number;
    uploads: number;
    downloads: number;
    days: ({ day: string } & DayCounters)[];
  };
  transfer_quota: {
    used_upload: number;
    used_download: number;
    upload_limit: number;
    download_limit: number;
    total_limit: number;
  };
}

export interface UsageReport {
  from: string;
  to: string;
  users: UserUsage[];
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function parseDay(v: string, field: string): number {
  const ms = Date.parse(`${v}T00:00:00Z`);
  if (!DAY_RE.test(v) || Number.isNaN(ms) || dayOf(ms) !== v) throw new InvalidError(`"${field}" must be a date as YYYY-MM-DD`);
  return ms;
}

/**
 * Storage and bandwidth used per user (GET /api/v2/saas/usage, docs/operations.md).
 * Storage comes from the quota counters of the users table; bandwidth from the
 * daily transfer counters this service keeps in table transfer_usage: every
 * upload and download event (whatever its outcome, the bytes that moved)
 * adds to the counters of its user and UTC day, gathered in memory and
 * written every USAGE_FLUSH_SECONDS with one upsert per user and day (and
 * before each query and at shutdown), so transfers never wait for it.
 */
@scoped(Lifecycle.ContainerScoped)
export class UsageService {
  private pending = new Map<string, DayCounters>();
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private flushing: Promise<void> = Promise.resolve();
  private readonly log: Logger;

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.Logger) logger: Logger,
  ) {
    this.log = logger.child({ component: 'usage' });
  }

  private sql(): SqlRunner {
    return this.orm.em.fork().getConnection() as unknown as SqlRunner;
  }

  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.bus.on('fs', (ev) => this.count(ev));
    this.timer = setInterval(
      () => void this.flush().catch((err: unknown) => this.log.warn({ err }, 'cannot store transfer usage; kept for the next write')),
      USAGE_FLUSH_SECONDS * 1000,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.timer);
    await this.flush().catch((err: unknown) => this.log.error({ err, lost: this.pending.size }, 'transfer usage not stored at shutdown'));
  }

  private count(ev: FsEvent): void {
    if (ev.action !== 'upload' && ev.action !== 'download') return;
    const key = `${dayOf(Math.floor(ev.timestamp / 1_000_000))}\n${ev.username}`;
    let c = this.pending.get(key);
    if (!c) {
      c = { upload_bytes: 0, download_bytes: 0, uploads: 0, downloads: 0 };
      this.pending.set(key, c);
    }
    const bytes = Math.max(0, Number(ev.file_size) || 0);
    if (ev.action === 'upload') {
      c.upload_bytes += bytes;
      c.uploads += 1;
    } else {
      c.download_bytes += bytes;
      c.downloads += 1;
    }
  }

  /** Writes the counters gathered so far (one writer at a time; failed batches are merged back). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (!this.pending.size) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.orm.em.fork().transactional(async (em) => {
        const conn = em.getConnection() as unknown as SqlRunner;
        const trx = em.getTransactionContext();
        for (const [key, c] of batch) {
          const [day, username] = key.split('\n') as [string, string];
          await conn.execute(
            'insert into transfer_usage (username, day, upload_bytes, download_bytes, uploads, downloads) values (?, ?, ?, ?, ?, ?) ' +
              'on conflict (username, day) do update set upload_bytes = transfer_usage.upload_bytes + excluded.upload_bytes, ' +
              'download_bytes = transfer_usage.download_bytes + excluded.download_bytes, uploads = transfer_usage.uploads + excluded.uploads, ' +
              'downloads = transfer_usage.downloads + excluded.downloads',
            [username, day, c.upload_bytes, c.download_bytes, c.uploads, c.downloads],
            'run',
            trx,
          );
        }
      });
    } catch (err) {
      for (const [key, c] of batch) {
        const cur = this.pending.get(key);
        if (!cur) this.pending.set(key, c);
        else for (const k of Object.keys(c) as (keyof DayCounters)[]) cur[k] += c[k];
      }
      throw err;
    }
  }

  /** Usage of the users an admin sees (`role` non-empty: that role's users only), one page ordered by username. */
  async report(q: UsageQuery, role: string, now = Date.now()): Promise<UsageReport> {
    const today = Date.parse(`${dayOf(now)}T00:00:00Z`);
    const toMs = q.to ? parseDay(q.to, 'to') : today;
    const fromMs = q.from ? parseDay(q.from, 'from') : Date.parse(`${dayOf(toMs).slice(0, 8)}01T00:00:00Z`);
    if (fromMs > toMs) throw new InvalidError('"from" must not be after "to"');
    if ((toMs - fromMs) / 86_400_000 + 1 > USAGE_MAX_DAYS) throw new InvalidError(`the period may cover at most ${USAGE_MAX_DAYS} days`);
    const from = dayOf(fromMs);
    const to = dayOf(toMs);
    await this.flush();

    const where: string[] = [];
    const params: unknown[] = [];
    if (role) {
      where.push('r.name = ?');
      params.push(role);
    }
    if (q.usernames?.length) {
      where.push(`u.username in (${q.usernames.map(() => '?').join(', ')})`);
      params.push(...q.usernames);
    }
    const rows = await this.sql().execute<Record<string, unknown>[]>(
      'select u.username, u.used_quota_size, u.used_quota_files, u.quota_size, u.quota_files, u.last_quota_update, ' +
        'u.used_upload_data_transfer, u.used_download_data_transfer, u.upload_data_transfer, u.download_data_transfer, u.total_data_transfer ' +
        `from users u left join roles r on r.id = u.role_id ${where.length ? `where ${where.join(' and ')}` : ''} ` +
        'order by u.username asc limit ? offset ?',
      [...params, q.limit, q.offset],
      'all',
    );
    const names = rows.map((r) => String(r.username));
    const days = new Map<string, ({ day: string } & DayCounters)[]>();
    if (names.length) {
      const usage = await this.sql().execute<Record<string, unknown>[]>(
        `select username, day, upload_bytes, download_bytes, uploads, downloads from transfer_usage where day >= ? and day <= ? and username in (${names.map(() => '?').join(', ')}) order by username, day`,
        [from, to, ...names],
        'all',
      );
      for (const u of usage) {
        const list = days.get(String(u.username)) ?? [];
        list.push({
          day: String(u.day),
          upload_bytes: Number(u.upload_bytes),
          download_bytes: Number(u.download_bytes),
          uploads: Number(u.uploads),
          downloads: Number(u.downloads),
        });
        days.set(String(u.username), list);
      }
    }
    const users = rows.map((r): UserUsage => {
      const d = days.get(String(r.username)) ?? [];
      const sum = (k: keyof DayCounters) => d.reduce((a, e) => a + e[k], 0);
      return {
        username: String(r.username),
        storage: {
          used_size: Number(r.used_quota_size),
          used_files: Number(r.used_quota_files),
          quota_size: Number(r.quota_size),
          quota_files: Number(r.quota_files),
          last_quota_update: Number(r.last_quota_update),
        },
        bandwidth: {
          upload_bytes: sum('upload_bytes'),
          download_bytes: sum('download_bytes'),
          total_bytes: sum('upload_bytes') + sum('download_bytes'),
          uploads: sum('uploads'),
          downloads: sum('downloads'),
          days: d,
        },
        transfer_quota: {
          used_upload: Number(r.used_upload_data_transfer),
          used_download: Number(r.used_download_data_transfer),
          upload_limit: Number(r.upload_data_transfer),
          download_limit: Number(r.download_data_transfer),
          total_limit: Number(r.total_data_transfer),
        },
      };
    });
    return { from, to, users };
  }
}

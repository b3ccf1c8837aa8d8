/**
 * The dashboard's charts: which buckets a time range asks for, and the
 * counts of GET /api/v2/events/fs/aggregate and /events/logs/aggregate (an
 * addition of Ferry: the events are counted in SQL, never paged through in
 * the browser) spread into one value per bucket. No React, no chart library:
 * unit-tested in test/admin-unit.test.ts.
 */
import type { operations } from '../../generated/api';
import { api } from '../api';
import { failure } from './api-result';

export type FsCount = operations['get_api_v2_events_fs_aggregate']['responses'][200]['content']['application/json'][number];
export type LogCount = operations['get_api_v2_events_logs_aggregate']['responses'][200]['content']['application/json'][number];

export const RANGES = ['24h', '7d', '30d'] as const;
export type Range = (typeof RANGES)[number];

const HOUR = 3600;
const DAY = 86_400;
/** Hours and days each range covers (the hourly charts: 24, 168, 720 buckets; the daily one: 2, 7, 30). */
const SPAN: Record<Range, { hours: number; days: number }> = { '24h': { hours: 24, days: 2 }, '7d': { hours: 168, days: 7 }, '30d': { hours: 720, days: 30 } };

/** `count` buckets of `interval` seconds, the first starting at `start` (Unix seconds). */
export interface Buckets {
  start: number;
  interval: number;
  count: number;
}

/**
 * The hourly and daily buckets of a range ending with the current hour and
 * day (in the browser's time zone: a day starts at local midnight). `now` in ms.
 */
export function bucketsOf(range: Range, now: number): { hourly: Buckets; daily: Buckets } {
  const { hours, days } = SPAN[range];
  const hour = new Date(now);
  hour.setMinutes(0, 0, 0);
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return {
    hourly: { start: hour.getTime() / 1000 - (hours - 1) * HOUR, interval: HOUR, count: hours },
    daily: { start: day.getTime() / 1000 - (days - 1) * DAY, interval: DAY, count: days },
  };
}

/** Start of each bucket, Unix seconds (uPlot's x values). */
export const bucketTimes = (b: Buckets): number[] => Array.from({ length: b.count }, (_, i) => b.start + i * b.interval);

/** One value per bucket: the sum of `value(row)` over the rows that `keep`. */
export function perBucket<R extends { bucket: number }>(b: Buckets, rows: readonly R[], keep: (r: R) => boolean, value: (r: R) => number): number[] {
  const out = new Array<number>(b.count).fill(0);
  for (const r of rows) if (r.bucket >= 0 && r.bucket < b.count && keep(r)) out[r.bucket]! += value(r);
  return out;
}

/** The series of the charts, one value per bucket. */
export interface ChartData {
  hourly: Buckets;
  daily: Buckets;
  uploads: number[];
  downloads: number[];
  uploadBytes: number[];
  downloadBytes: number[];
  failedLogins: number[];
}

/** Folds the three aggregates into the charts' series. */
export function chartData(hourly: Buckets, daily: Buckets, fsHourly: readonly FsCount[], fsDaily: readonly FsCount[], logins: readonly LogCount[]): ChartData {
  const count = (r: { count: number }) => r.count;
  const bytes = (r: FsCount) => r.file_size;
  return {
    hourly,
    daily,
    uploads: perBucket(hourly, fsHourly, (r) => r.action === 'upload', count),
    downloads: perBucket(hourly, fsHourly, (r) => r.action === 'download', count),
    uploadBytes: perBucket(daily, fsDaily, (r) => r.action === 'upload', bytes),
    downloadBytes: perBucket(daily, fsDaily, (r) => r.action === 'download', bytes),
    failedLogins: perBucket(hourly, logins, (r) => r.event === 1 || r.event === 2, count),
  };
}

const nanos = (seconds: number) => seconds * 1e9;

/** The three aggregates of a range (uploads and downloads of any outcome; failed logins: log events 1 and 2). */
export async function loadCharts(range: Range, now = Date.now()): Promise<{ data?: ChartData; message?: string }> {
  const { hourly, daily } = bucketsOf(range, now);
  const fsQuery = (b: Buckets) => ({ start_timestamp: nanos(b.start), interval: b.interval, buckets: b.count, actions: 'upload,download' });
  const [h, d, l] = await Promise.all([
    api.GET('/api/v2/events/fs/aggregate', { params: { query: fsQuery(hourly) } }),
    api.GET('/api/v2/events/fs/aggregate', { params: { query: fsQuery(daily) } }),
    api.GET('/api/v2/events/logs/aggregate', {
      params: { query: { start_timestamp: nanos(hourly.start), interval: HOUR, buckets: hourly.count, events: '1,2' } },
    }),
  ]);
  if (!h.data || !d.data || !l.data) {
    const bad = [h, d, l].find((r) => !r.data)!;
    return { message: failure(bad.response.status, bad.error) };
  }
  return { data: chartData(hourly, daily, h.data, d.data, l.data) };
}

/** The hour or day of bucket `i` in the browser's locale, for tables and captions (`short`: an axis label). */
export function bucketLabel(b: Buckets, i: number, locale?: string, short = false): string {
  const d = new Date((b.start + i * b.interval) * 1000);
  if (b.interval >= DAY) return d.toLocaleDateString(locale, short ? { month: 'short', day: 'numeric' } : { year: 'numeric', month: 'short', day: 'numeric' });
  return short
    ? d.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleString(locale, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Index of the largest value (the first of equal ones), -1 when all are 0. */
export function peak(values: readonly number[]): number {
  let best = -1;
  values.forEach((v, i) => {
    if (v > 0 && (best < 0 || v > values[best]!)) best = i;
  });
  return best;
}

export const sum = (values: readonly number[]): number => values.reduce((a, v) => a + v, 0);

/** Users read per request for the top users by storage, and the most read in all (the users list cannot sort by quota). */
export const USERS_PAGE = 500;
export const MAX_USERS_SCANNED = 10_000;

export interface TopUser {
  username: string;
  used: number;
  quota: number;
}

/** Keeps the `n` largest of `top` and `more` by used size (then by name). */
export function keepTop(top: readonly TopUser[], more: readonly TopUser[], n: number): TopUser[] {
  return [...top, ...more].sort((a, b) => b.used - a.used || a.username.localeCompare(b.username)).slice(0, n);
}

/**
 * The `n` users using the most storage (used_quota_size): GET /api/v2/users
 * cannot sort by it, so the list is read USERS_PAGE at a time keeping only
 * the `n` largest, up to MAX_USERS_SCANNED users (`partial` then tells the
 * ranking covers the first ones by name only).
 */
export async function loadTopUsers(n = 10): Promise<{ users?: TopUser[]; scanned: number; partial: boolean; message?: string }> {
  let top: TopUser[] = [];
  let scanned = 0;
  for (;;) {
    const { data, error, response } = await api.GET('/api/v2/users', { params: { query: { offset: scanned, limit: USERS_PAGE, order: 'ASC' } } });
    if (!data) return { scanned, partial: true, message: failure(response.status, error) };
    top = keepTop(
      top,
      data.filter((u) => (u.used_quota_size ?? 0) > 0).map((u) => ({ username: u.username, used: u.used_quota_size ?? 0, quota: u.quota_size ?? 0 })),
      n,
    );
    scanned += data.length;
    if (data.length < USERS_PAGE) return { users: top, scanned, partial: false };
    if (scanned >= MAX_USERS_SCANNED) return { users: top, scanned, partial: true };
  }
}

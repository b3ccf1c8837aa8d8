/**
 * The dashboard's charts: which buckets a time range asks for, and the
 * counts of GET /api/v2/events/fs/aggregate and /events/logs/aggregate (an
 * addition of Ferry: the events are counted in SQL, never paged through in
 * the browser) spread into one value per bucket. No React, no chart library,
 * no request (charts-api.ts): unit-tested in test/admin-unit.test.ts.
 */
/** An item of GET /events/fs/aggregate (charts-api.ts passes the generated type, which the compiler checks against this one). */
export interface FsCount {
  bucket: number;
  action: string;
  status: number;
  count: number;
  file_size: number;
}
/** An item of GET /events/logs/aggregate. */
export interface LogCount {
  bucket: number;
  event: number;
  count: number;
}

export const RANGES = ['24h', '7d', '30d'] as const;
export type Range = (typeof RANGES)[number];

export const HOUR = 3600;
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

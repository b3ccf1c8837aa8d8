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
/** The range the dashboard opens with. */
export const DEFAULT_RANGE: Range = '24h';

export const HOUR = 3600;
const DAY = 86_400;
/** Hours and days each range covers (the hourly charts: 24, 168, 720 buckets; the daily one: 2, 7, 30). */
const SPAN: Record<Range, { hours: number; days: number }> = { '24h': { hours: 24, days: 2 }, '7d': { hours: 168, days: 7 }, '30d': { hours: 720, days: 30 } };

/**
 * `count` buckets of `interval` seconds, the first starting at `start` (Unix
 * seconds); `times`: the start of each when they are not evenly spaced (local
 * days: a day of a daylight saving change has 23 or 25 hours).
 */
export interface Buckets {
  start: number;
  interval: number;
  count: number;
  times?: readonly number[];
}

/**
 * The hourly and daily buckets of a range ending with the current hour and
 * day (in the browser's time zone: a day starts at local midnight). `now` in
 * ms. The daily chart is counted from hourly buckets (`dailyHours`, from the
 * first day's midnight to the end of today) added up per local day, so that
 * a day of a daylight saving change keeps its own 23 or 25 hours.
 */
export function bucketsOf(range: Range, now: number): { hourly: Buckets; daily: Buckets; dailyHours: Buckets } {
  const { hours, days } = SPAN[range];
  const hour = new Date(now);
  hour.setMinutes(0, 0, 0);
  const midnights: number[] = [];
  for (let i = days - 1; i >= -1; i--) {
    const d = new Date(now);
    d.setHours(0, 0, 0, 0);
    d.setDate(d.getDate() - i); // local calendar arithmetic: midnight of each day, whatever its length
    midnights.push(d.getTime() / 1000);
  }
  const first = midnights[0]!;
  const end = midnights[days]!; // tomorrow's midnight
  return {
    hourly: { start: hour.getTime() / 1000 - (hours - 1) * HOUR, interval: HOUR, count: hours },
    daily: { start: first, interval: DAY, count: days, times: midnights.slice(0, days) },
    dailyHours: { start: first, interval: HOUR, count: Math.ceil((end - first) / HOUR) },
  };
}

/** Start of each bucket, Unix seconds (uPlot's x values). */
export const bucketTimes = (b: Buckets): number[] => (b.times ? [...b.times] : Array.from({ length: b.count }, (_, i) => b.start + i * b.interval));

/** Rows counted in the buckets of `from` moved to the buckets of `to` that hold their start (hours into local days). */
export function rebucket<R extends { bucket: number }>(from: Buckets, to: Buckets, rows: readonly R[]): R[] {
  const starts = bucketTimes(to);
  const out: R[] = [];
  for (const r of rows) {
    const at = from.start + r.bucket * from.interval;
    let i = starts.length - 1;
    while (i >= 0 && starts[i]! > at) i--;
    if (i >= 0) out.push({ ...r, bucket: i });
  }
  return out;
}

/**
 * One run of hourly buckets covering both `a` and `b` (hourly, on the same
 * hour grid: the last hours of a range and the hours of its days), so that
 * one aggregate request serves both charts; null when they are not on one
 * grid (a time zone whose daylight saving shift is not a whole hour).
 */
export function hourGridOf(a: Buckets, b: Buckets): Buckets | null {
  if (a.interval !== HOUR || b.interval !== HOUR || (a.start - b.start) % HOUR !== 0) return null;
  const start = Math.min(a.start, b.start);
  const end = Math.max(a.start + a.count * HOUR, b.start + b.count * HOUR);
  return { start, interval: HOUR, count: (end - start) / HOUR };
}

/** Rows counted in the hourly buckets of `from` as the buckets of `to` (hourly, on the same grid) count them; the rows outside `to` left out. */
export function sliceHours<R extends { bucket: number }>(from: Buckets, to: Buckets, rows: readonly R[]): R[] {
  const shift = (from.start - to.start) / HOUR;
  return rows.flatMap((r) => {
    const bucket = r.bucket + shift;
    return bucket >= 0 && bucket < to.count ? [{ ...r, bucket }] : [];
  });
}

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
  const d = new Date((b.times?.[i] ?? b.start + i * b.interval) * 1000);
  if (b.interval >= DAY) return d.toLocaleDateString(locale, short ? { month: 'short', day: 'numeric' } : { year: 'numeric', month: 'short', day: 'numeric' });
  return short
    ? d.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleString(locale, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * An axis label of the time `seconds` (Unix): hourly, the hour ("3 PM"), or
 * the date at a local midnight ("Dec 4"); daily, the date. The line and bar
 * charts label their axes with it alike.
 */
export function tickLabel(seconds: number, hourly: boolean, locale?: string): string {
  const d = new Date(seconds * 1000);
  if (!hourly || (d.getHours() === 0 && d.getMinutes() === 0)) return d.toLocaleDateString(locale, { month: 'short', day: 'numeric' });
  return d.toLocaleTimeString(locale, { hour: 'numeric' });
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

export interface TopUser {
  username: string;
  used: number;
  quota: number;
}

/** The top users of a page of users ordered by used quota size, largest first: those using no storage left out. */
export function topUsersOf(rows: readonly { username: string; used_quota_size?: number; quota_size?: number }[]): TopUser[] {
  return rows.filter((u) => (u.used_quota_size ?? 0) > 0).map((u) => ({ username: u.username, used: u.used_quota_size ?? 0, quota: u.quota_size ?? 0 }));
}

/** The requests of the dashboard's charts (Charts.tsx); the arithmetic is in charts-data.ts. */
import { api } from '../api';
import { failure } from './api-result';
import {
  HOUR,
  MAX_USERS_SCANNED,
  USERS_PAGE,
  bucketsOf,
  chartData,
  keepTop,
  rebucket,
  type Buckets,
  type ChartData,
  type Range,
  type TopUser,
} from './charts-data';

const nanos = (seconds: number) => seconds * 1e9;

/** The three aggregates of a range (uploads and downloads of any outcome; failed logins: log events 1 and 2). */
/** `unavailable`: the server cannot count events (400: no event search plugin), which is a setting, not a failure. */
export async function loadCharts(range: Range, now = Date.now()): Promise<{ data?: ChartData; message?: string; unavailable?: boolean }> {
  const { hourly, daily, dailyHours } = bucketsOf(range, now);
  const fsQuery = (b: Buckets) => ({ start_timestamp: nanos(b.start), interval: b.interval, buckets: b.count, actions: 'upload,download' });
  const [h, d, l] = await Promise.all([
    api.GET('/api/v2/events/fs/aggregate', { params: { query: fsQuery(hourly) } }),
    api.GET('/api/v2/events/fs/aggregate', { params: { query: fsQuery(dailyHours) } }),
    api.GET('/api/v2/events/logs/aggregate', {
      params: { query: { start_timestamp: nanos(hourly.start), interval: HOUR, buckets: hourly.count, events: '1,2' } },
    }),
  ]);
  if (!h.data || !d.data || !l.data) {
    const bad = [h, d, l].find((r) => !r.data)!;
    return { message: failure(bad.response.status, bad.error), unavailable: bad.response.status === 400 };
  }
  return { data: chartData(hourly, daily, h.data, rebucket(dailyHours, daily, d.data), l.data) };
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

/** The requests of the dashboard's charts (Charts.tsx); the arithmetic is in charts-data.ts. */
import { api } from '../api';
import { failure } from './api-result';
import { HOUR, bucketsOf, chartData, rebucket, topUsersOf, type Buckets, type ChartData, type Range, type TopUser } from './charts-data';

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
 * The `n` users using the most storage: one page of GET /api/v2/users
 * ordered by used_quota_size, largest first (order_by, an addition of
 * Ferry: the server sorts, whatever the number of users); those using none
 * are left out.
 */
export async function loadTopUsers(n = 10): Promise<{ users?: TopUser[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/users', {
    params: { query: { offset: 0, limit: n, order: 'DESC', order_by: 'used_quota_size' } },
  });
  if (!data) return { message: failure(response.status, error) };
  return { users: topUsersOf(data) };
}

/** The requests of the dashboard's charts (Charts.tsx); the arithmetic is in charts-data.ts. */
import { api } from '../api';
import { failure } from './api-result';
import {
  HOUR,
  bucketsOf,
  chartData,
  hourGridOf,
  rebucket,
  sliceHours,
  topUsersOf,
  type Buckets,
  type ChartData,
  type Range,
  type TopUser,
} from './charts-data';

const nanos = (seconds: number) => seconds * 1e9;

/** The answer of loadCharts: `unavailable` when the server cannot count events (400: no event search plugin), which is a setting, not a failure. */
export interface ChartsAnswer {
  data?: ChartData;
  message?: string;
  unavailable?: boolean;
}

/**
 * The aggregates of a range: uploads and downloads (any outcome) per hour,
 * counted once over the hours of both charts (the range's last hours and its
 * days, added up per local day), and failed logins (log events 1 and 2).
 */
async function fetchCharts(range: Range, now: number): Promise<ChartsAnswer> {
  const { hourly, daily, dailyHours } = bucketsOf(range, now);
  const fsQuery = (b: Buckets) => ({ start_timestamp: nanos(b.start), interval: b.interval, buckets: b.count, actions: 'upload,download' });
  const grid = hourGridOf(hourly, dailyHours);
  const logins = api.GET('/api/v2/events/logs/aggregate', {
    params: { query: { start_timestamp: nanos(hourly.start), interval: HOUR, buckets: hourly.count, events: '1,2' } },
  });
  const [h, d, l] = grid
    ? await Promise.all([api.GET('/api/v2/events/fs/aggregate', { params: { query: fsQuery(grid) } }), null, logins])
    : await Promise.all([
        api.GET('/api/v2/events/fs/aggregate', { params: { query: fsQuery(hourly) } }),
        api.GET('/api/v2/events/fs/aggregate', { params: { query: fsQuery(dailyHours) } }),
        logins,
      ]);
  const bad = [h, d, l].find((r) => r && !r.data);
  if (bad || !h.data || !l.data) {
    const failed = bad ?? h;
    return { message: failure(failed.response.status, failed.error), unavailable: failed.response.status === 400 };
  }
  const fsHourly = grid ? sliceHours(grid, hourly, h.data) : h.data;
  const fsDays = grid ? sliceHours(grid, dailyHours, h.data) : (d?.data ?? []);
  return { data: chartData(hourly, daily, fsHourly, rebucket(dailyHours, daily, fsDays), l.data) };
}

/** Requests sent before the charts' code is loaded (prefetchCharts), each taken once by the first loadCharts of its range. */
let early: { range: Range; at: number; answer: Promise<ChartsAnswer> } | null = null;
/** How old a prefetched answer may be when taken. */
const EARLY_MS = 10_000;

/**
 * Sends the requests of `range`'s charts now (the dashboard, on its first
 * render: in parallel with the download of the charts' code, not after it).
 */
export function prefetchCharts(range: Range, now = Date.now()): void {
  early = { range, at: now, answer: fetchCharts(range, now) };
}

/** The charts of a range: the prefetched answer when there is a fresh one of that range, else new requests. */
export function loadCharts(range: Range, now = Date.now()): Promise<ChartsAnswer> {
  const taken = early;
  early = null;
  if (taken && taken.range === range && now - taken.at < EARLY_MS) return taken.answer;
  return fetchCharts(range, now);
}

/**
 * The `n` users using the most storage: one page of GET /api/v2/users
 * ordered by used_quota_size, largest first (order_by, an addition of
 * Ferry: the server sorts, whatever the number of users); those using none
 * are left out.
 */
const TOP_USERS = 10;

async function fetchTopUsers(n: number): Promise<{ users?: TopUser[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/users', {
    params: { query: { offset: 0, limit: n, order: 'DESC', order_by: 'used_quota_size' } },
  });
  if (!data) return { message: failure(response.status, error) };
  return { users: topUsersOf(data) };
}

let earlyTop: { at: number; answer: ReturnType<typeof fetchTopUsers> } | null = null;

/** Sends the top users' request now (as prefetchCharts), taken once by the next loadTopUsers. */
export function prefetchTopUsers(now = Date.now()): void {
  earlyTop = { at: now, answer: fetchTopUsers(TOP_USERS) };
}

export function loadTopUsers(now = Date.now()): Promise<{ users?: TopUser[]; message?: string }> {
  const taken = earlyTop;
  earlyTop = null;
  return taken && now - taken.at < EARLY_MS ? taken.answer : fetchTopUsers(TOP_USERS);
}

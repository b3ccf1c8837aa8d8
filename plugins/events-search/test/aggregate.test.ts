import t from 'tap';
import { appWithSearch, bus, fsEvent, logEvent, search, settled, storeOf } from './helpers.js';

// GET /api/v2/events/fs/aggregate and /events/logs/aggregate: events published on the bus with known
// timestamps, counted per bucket by the store's SQL (run on SQLite and on PostgreSQL with FERRY_TEST_DB=postgres).
const ta = await appWithSearch({ retention_days: 0 });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const b = bus(ta);
const SEC = 1e9;
const HOUR = 3600;
// a whole hour two days ago (the admin's own logins of today stay out of the buckets)
const base = (Math.floor(Date.now() / 1000 / HOUR) - 48) * HOUR * SEC;
const at = (hour: number, second: number) => base + (hour * HOUR + second) * SEC;

// [hour, second of the hour, action, status, size, role]
const fsSpecs: [number, number, string, number, number, string][] = [
  [0, 0, 'upload', 1, 100, ''],
  [0, 10, 'upload', 1, 200, 'r1'],
  [0, 20, 'download', 1, 50, ''],
  [0, 3599, 'upload', 2, 7, ''], // last second of bucket 0
  [1, 0, 'upload', 1, 1000, 'r1'], // first nanosecond of bucket 1
  [1, 5, 'delete', 1, 0, ''],
  [3, 30, 'download', 1, 4000, 'r1'],
  [3, 40, 'download', 1, 6000, ''],
  [5, 0, 'upload', 1, 999, ''], // past the 4 buckets asked below
];
fsSpecs.forEach(([h, s, action, status, size, role], i) =>
  b.publish('fs', fsEvent({ timestamp: at(h, s), action: action as 'upload', status: status as 1, file_size: size, role, session_id: `s${i}` })),
);
// events 1 and 2 are failed logins
const logSpecs: [number, number, number, string][] = [
  [0, 1, 1, ''],
  [0, 2, 1, 'r1'],
  [0, 3, 2, ''],
  [0, 4, 5, ''],
  [2, 0, 1, ''],
  [2, 1, 5, 'r1'],
];
logSpecs.forEach(([h, s, event, role]) => b.publish('log', logEvent({ timestamp: at(h, s), event: event as 1, role })));
await settled(ta);

const q = (more = '') => `start_timestamp=${base}&interval=${HOUR}&buckets=4${more}`;
const fsCounts = (token: string, more = '') => search(ta, token, `/api/v2/events/fs/aggregate?${q(more)}`);
const logCounts = (token: string, more = '') => search(ta, token, `/api/v2/events/logs/aggregate?${q(more)}`);

t.test('fs events per bucket, action and status, with the sum of their sizes', async (t) => {
  t.same(await fsCounts(token), [
    { bucket: 0, action: 'download', status: 1, count: 1, file_size: 50 },
    { bucket: 0, action: 'upload', status: 1, count: 2, file_size: 300 },
    { bucket: 0, action: 'upload', status: 2, count: 1, file_size: 7 },
    { bucket: 1, action: 'delete', status: 1, count: 1, file_size: 0 },
    { bucket: 1, action: 'upload', status: 1, count: 1, file_size: 1000 },
    { bucket: 3, action: 'download', status: 1, count: 2, file_size: 10000 },
  ]);
});

t.test('the filters of the search apply', async (t) => {
  t.same(await fsCounts(token, '&actions=upload&statuses=1'), [
    { bucket: 0, action: 'upload', status: 1, count: 2, file_size: 300 },
    { bucket: 1, action: 'upload', status: 1, count: 1, file_size: 1000 },
  ]);
  t.same(await fsCounts(token, '&role=r1'), [
    { bucket: 0, action: 'upload', status: 1, count: 1, file_size: 200 },
    { bucket: 1, action: 'upload', status: 1, count: 1, file_size: 1000 },
    { bucket: 3, action: 'download', status: 1, count: 1, file_size: 4000 },
  ]);
  t.same(await fsCounts(token, '&username=nobody'), []);
});

t.test('one bucket of a day holds them all; buckets start at start_timestamp', async (t) => {
  const day = await search<{ bucket: number; count: number }>(ta, token, `/api/v2/events/fs/aggregate?start_timestamp=${base}&interval=86400&buckets=1`);
  t.equal(
    day.reduce((a, r) => a + r.count, 0),
    fsSpecs.length,
  );
  const shifted = await search(ta, token, `/api/v2/events/fs/aggregate?start_timestamp=${at(0, 15)}&interval=${HOUR}&buckets=1&actions=upload,download`);
  t.same(
    shifted,
    [
      { bucket: 0, action: 'download', status: 1, count: 1, file_size: 50 },
      { bucket: 0, action: 'upload', status: 1, count: 1, file_size: 1000 },
      { bucket: 0, action: 'upload', status: 2, count: 1, file_size: 7 },
    ],
    'from 00:00:15 to 01:00:15 (exclusive)',
  );
});

t.test('log events per bucket and event type', async (t) => {
  t.same(await logCounts(token), [
    { bucket: 0, event: 1, count: 2 },
    { bucket: 0, event: 2, count: 1 },
    { bucket: 0, event: 5, count: 1 },
    { bucket: 2, event: 1, count: 1 },
    { bucket: 2, event: 5, count: 1 },
  ]);
  t.same(await logCounts(token, '&events=1,2'), [
    { bucket: 0, event: 1, count: 2 },
    { bucket: 0, event: 2, count: 1 },
    { bucket: 2, event: 1, count: 1 },
  ]);
});

t.test('a role admin counts only the events of their role', async (t) => {
  await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'r1' } });
  const c = await ta.inject('POST', '/api/v2/admins', {
    token,
    payload: { username: 'radm', password: 'radm-password', status: 1, permissions: ['view_events'], role: 'r1' },
  });
  t.equal(c.statusCode, 201, c.payload);
  const rt = await ta.adminToken('radm', 'radm-password');
  t.same(await fsCounts(rt, '&role=r2'), await fsCounts(token, '&role=r1'), 'the role parameter is ignored');
  t.same(await logCounts(rt), [
    { bucket: 0, event: 1, count: 1 },
    { bucket: 2, event: 5, count: 1 },
  ]);
});

t.test('the store counts in SQL what the search returns', async (t) => {
  // the same range paged through the search: the sums agree
  const events = await search<{ action: string; file_size: number }>(
    ta,
    token,
    `/api/v2/events/fs?start_timestamp=${base}&end_timestamp=${at(4, 0) - 1}&limit=1000`,
  );
  const counts = await search<{ count: number; file_size: number }>(ta, token, `/api/v2/events/fs/aggregate?${q()}`);
  t.equal(
    counts.reduce((a, r) => a + r.count, 0),
    events.length,
  );
  t.equal(
    counts.reduce((a, r) => a + r.file_size, 0),
    events.reduce((a, e) => a + e.file_size, 0),
  );
  t.ok(storeOf(ta).aggregate, 'the plugin registers aggregate');
});

t.test('permissions and authentication', async (t) => {
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'noview', password: 'noview-password', status: 1, permissions: ['view_users'] } });
  const nt = await ta.adminToken('noview', 'noview-password');
  for (const p of ['fs', 'logs']) {
    const f = await ta.inject('GET', `/api/v2/events/${p}/aggregate?${q()}`, { token: nt });
    t.equal(f.statusCode, 403, `${p}: 403 without view_events`);
    t.match(JSON.parse(f.payload), { message: String, error: String });
    const u = await ta.inject('GET', `/api/v2/events/${p}/aggregate?${q()}`);
    t.equal(u.statusCode, 401, `${p}: 401 without credentials`);
  }
});

t.test('invalid queries answer 400 naming the field', async (t) => {
  const cases: [string, RegExp][] = [
    ['/api/v2/events/fs/aggregate?interval=3600&buckets=24', /"start_timestamp" is required/],
    [`/api/v2/events/fs/aggregate?start_timestamp=${base}&buckets=24`, /"interval" is required/],
    [`/api/v2/events/fs/aggregate?start_timestamp=${base}&interval=3600`, /"buckets" is required/],
    [`/api/v2/events/fs/aggregate?start_timestamp=0&interval=3600&buckets=24`, /"start_timestamp"/],
    [`/api/v2/events/fs/aggregate?start_timestamp=${base}&interval=59&buckets=24`, /"interval"/],
    [`/api/v2/events/fs/aggregate?start_timestamp=${base}&interval=2678401&buckets=24`, /"interval"/],
    [`/api/v2/events/fs/aggregate?start_timestamp=${base}&interval=3600&buckets=1001`, /"buckets"/],
    [`/api/v2/events/fs/aggregate?start_timestamp=${base}&interval=3600&buckets=0`, /"buckets"/],
    [`/api/v2/events/fs/aggregate?${q('&actions=explode')}`, /"actions" has an unknown value "explode"/],
    [`/api/v2/events/logs/aggregate?${q('&events=6')}`, /"events" has an unknown value "6"/],
  ];
  for (const [url, msg] of cases) {
    const r = await ta.inject('GET', url, { token });
    t.equal(r.statusCode, 400, url);
    t.match(JSON.parse(r.payload), { message: msg, error: String }, url);
  }
});

t.test('PostgreSQL: the ids of filesystem events are indexed with the columns the counts read (index-only scans)', async (t) => {
  const conn = ta.app.orm.em.getConnection();
  if (process.env.FERRY_TEST_DB !== 'postgres') {
    const rows = (await conn.execute("select name from sqlite_master where type = 'index' and name = 'events_fs_id_aggregate_index'")) as unknown[];
    t.equal(rows.length, 0, 'SQLite: none (the table is stored in id order)');
    return;
  }
  const rows = (await conn.execute("select indexdef from pg_indexes where indexname = 'events_fs_id_aggregate_index'")) as { indexdef: string }[];
  t.equal(rows.length, 1);
  t.match(rows[0]!.indexdef, /on public\.events_fs using btree \(id\) include \(action, status, file_size\)/i);
});

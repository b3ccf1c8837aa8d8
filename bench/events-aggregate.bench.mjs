#!/usr/bin/env node
// The dashboard's charts over a day of 1,000,000 events: GET /api/v2/events/fs/aggregate and
// /events/logs/aggregate (@ferry/events-search) against a real `ferry serve` process on PostgreSQL,
// vs the same SQL sent straight to PostgreSQL with pg:
//
//   node bench/events-aggregate.bench.mjs
//
//   BENCH_EVENTS filesystem events (default 1,000,000) and a tenth as many log events spread
//   over the last 24 hours, bulk-inserted by the bench (bench/lib/seed-pg.mjs: INSERT ... SELECT,
//   ids built like the plugin's: 16 hex digits of the timestamp in ns, node, counter). Then BENCH_RUNS times (after
//   2 warm-up runs) the three requests the dashboard sends for "Last 24 hours", at once as the
//   browser does: uploads and downloads in 24 hourly buckets, in 2 daily buckets, failed logins
//   (events 1, 2) in 24 hourly buckets. Printed: the median and p95 wall time of the three
//   (aim: under 2 s, the issue's bar for the charts of a day of 1,000,000 events), the median
//   of the same three queries run directly with pg, and their ratio. Checks the API's counts
//   equal the direct query's.
//
// PostgreSQL: FERRY_TEST_PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres); the
// bench creates and drops its own database. Env: BENCH_EVENTS, BENCH_RUNS (default 10),
// FERRY_BENCH_NO_BUILD=1 (use the dist folders as they are). Writes bench/results/events-aggregate.json.
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createBenchDatabase } from './lib/pg.mjs';
import { seedEvents } from './lib/seed-pg.mjs';
import { scratchWorkspace, writeResults } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const HOUR_NS = 3_600_000_000_000n;
const log = (...a) => console.log('[events-aggregate]', ...a);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (x) => Math.round(x * 10) / 10;

/** The SQL store.aggregate() builds on PostgreSQL (plugins/events-search/src/store.ts): a VALUES list of buckets, each counted by a LATERAL subquery on its id range. */
function aggregateSql(table, groups, startNs, intervalNs, count, where) {
  const hex = (ns) => ns.toString(16).padStart(16, '0') + '0'.repeat(16);
  const values = Array.from({ length: count }, (_, i) => `(${i}, '${hex(startNs + BigInt(i) * intervalNs)}', '${hex(startNs + BigInt(i + 1) * intervalNs)}')`);
  const sums = table === 'events_fs' ? ', sum(e.file_size) as file_size' : '';
  const g = groups.map((x) => `e.${x}`).join(', ');
  return (
    `select b.column1 as bucket, x.* from (values ${values.join(', ')}) as b cross join lateral (select ${g}, count(*) as count${sums} from ${table} as e ` +
    `where e.id >= b.column2 and e.id < b.column3 and ${where} group by ${g}) as x order by b.column1, ${groups.map((x) => `x.${x}`).join(', ')}`
  );
}

const { dir: scratch, children, cleanup } = scratchWorkspace(2048, 'ferry-bench-aggregate-');
try {
  buildFerry(log);
  const database = await createBenchDatabase();
  let server;
  try {
    server = await startFerry({
      dir: path.join(scratch, 'pg'),
      pgUrl: database.url,
      children,
      plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/events-search', config: { retention_days: 0 } }],
    });
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const endNs = BigInt(Date.now()) * 1_000_000n;
    const dayStart = endNs - 24n * HOUR_NS;
    const t0 = performance.now();
    const logs = await seedEvents(db, { events: EVENTS, startNs: dayStart, endNs });
    log(`${EVENTS} fs events and ${logs} log events over 24 hours inserted in ${Math.round((performance.now() - t0) / 100) / 10} s`);

    // the dashboard's "Last 24 hours": the current hour is the last of 24, today the last of 2 days
    const hourStart = (endNs / HOUR_NS) * HOUR_NS - 23n * HOUR_NS;
    const dStart = hourStart - 24n * HOUR_NS;
    const api = [
      `/api/v2/events/fs/aggregate?start_timestamp=${hourStart}&interval=3600&buckets=24&actions=upload,download`,
      `/api/v2/events/fs/aggregate?start_timestamp=${dStart}&interval=86400&buckets=2&actions=upload,download`,
      `/api/v2/events/logs/aggregate?start_timestamp=${hourStart}&interval=3600&buckets=24&events=1,2`,
    ];
    const sql = [
      aggregateSql('events_fs', ['action', 'status'], hourStart, HOUR_NS, 24, `e.action in ('upload', 'download')`),
      aggregateSql('events_fs', ['action', 'status'], dStart, 24n * HOUR_NS, 2, `e.action in ('upload', 'download')`),
      aggregateSql('events_log', ['event'], hourStart, HOUR_NS, 24, 'e.event in (1, 2)'),
    ];
    const viaApi = async () => {
      const t = performance.now();
      const bodies = await Promise.all(
        api.map(async (u) => {
          const r = await fetch(server.url + u, { headers: { authorization: `Bearer ${server.adminToken}` } });
          if (r.status !== 200) throw new Error(`${u}: ${r.status} ${await r.text()}`);
          return r.json();
        }),
      );
      return { ms: performance.now() - t, bodies };
    };
    // direct: three connections, the three queries at once, as the server's pool runs them
    const direct = await Promise.all(
      sql.map(async () => {
        const c = new pg.Client({ connectionString: database.url });
        await c.connect();
        return c;
      }),
    );
    const viaPg = async () => {
      const t = performance.now();
      const results = await Promise.all(sql.map((q, i) => direct[i].query(q)));
      return { ms: performance.now() - t, rows: results.map((r) => r.rows) };
    };
    for (let i = 0; i < 2; i++) {
      await viaApi();
      await viaPg();
    }
    const apiTimes = [];
    const pgTimes = [];
    let last;
    for (let i = 0; i < RUNS; i++) {
      const a = await viaApi();
      const p = await viaPg();
      apiTimes.push(a.ms);
      pgTimes.push(p.ms);
      last = { a, p };
    }
    for (const c of direct) await c.end();
    await db.end();
    // the same counts both ways
    const total = (rows) => rows.reduce((n, r) => n + Number(r.count), 0);
    for (let i = 0; i < 3; i++) {
      if (total(last.a.bodies[i]) !== total(last.p.rows[i]) || last.a.bodies[i].length !== last.p.rows[i].length)
        throw new Error(`query ${i}: the API counted ${total(last.a.bodies[i])} events, pg ${total(last.p.rows[i])}`);
    }
    const counted = total(last.a.bodies[0]);
    if (counted < EVENTS / 3) throw new Error(`only ${counted} uploads and downloads counted of ${EVENTS} events`);
    const out = {
      events: EVENTS,
      log_events: logs,
      runs: RUNS,
      uploads_downloads_counted: counted,
      failed_logins_counted: total(last.a.bodies[2]),
      api_median_ms: ms(median(apiTimes)),
      api_p95_ms: ms(pct(apiTimes, 95)),
      pg_median_ms: ms(median(pgTimes)),
      api_over_pg: Math.round((median(apiTimes) / median(pgTimes)) * 100) / 100,
      aim_ms: 2000,
      load_average: os.loadavg().map((x) => Math.round(x * 10) / 10),
    };
    writeResults('events-aggregate', out);
    console.log(
      `dashboard charts of a day of ${EVENTS} events (3 aggregates at once): median ${out.api_median_ms} ms, p95 ${out.api_p95_ms} ms (aim under 2000 ms)`,
    );
    console.log(`same SQL straight to PostgreSQL: median ${out.pg_median_ms} ms; API/pg ${out.api_over_pg} (aim near 1)`);
  } finally {
    await server?.stop();
    await database.drop();
  }
} finally {
  cleanup();
}

#!/usr/bin/env node
// Event search (@ferry/events-search) against a real `ferry serve` process (compiled CLI):
//
//   node bench/events-search.bench.mjs
//
//   search    1,000,000 filesystem events in PostgreSQL (bulk-inserted by the bench in one
//             INSERT ... SELECT, ids built like the plugin's), then over HTTP:
//             - a filtered search (username + 10-day time range + actions=upload,download,
//               limit 100, a different user each time): median and p95 of BENCH_SEARCHES runs;
//               aim: median < 100 ms;
//             - from_id paging through all 1,000,000 events with limit=1000, DESC then ASC:
//               median time of the first 20 and of the last 20 pages; aim: last/first ~ 1 (flat).
//   recording 1,000 small uploads (1 KiB, BENCH_CONCURRENCY at once) to a server with the
//             plugin vs one without it (SQLite, both running in the same run). Each round
//             uploads 1,000 files to each server in chunks of BENCH_CHUNK alternating between
//             the two (so a load change on a shared machine hits both sides alike); per side:
//             wall time of its chunks (best, median and total of the rounds), the median of
//             the with/without ratios of chunk pairs run back to back (the figure least moved
//             by other load on the machine), and the CPU seconds its server process used over
//             the whole run (/proc, after the writes settled). Aim: under 5% more. Checks that the server with the plugin recorded one upload event per
//             upload (none dropped).
//
// PostgreSQL: FERRY_TEST_PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres); the
// bench creates and drops its own database. Env: BENCH_EVENTS (default 1000000),
// BENCH_SEARCHES (default 50), BENCH_UPLOADS (default 1000), BENCH_CONCURRENCY (default 8),
// BENCH_ROUNDS (default 5), BENCH_CHUNK (default 50), BENCH_SKIP_SEARCH=1 (recording part
// only), FERRY_BENCH_NO_BUILD=1 (use the dist folders as they are).
// Writes bench/results/events-search.json.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createBenchDatabase } from './lib/pg.mjs';
import { cpuSecondsOf, root, scratchWorkspace, writeResults } from './lib/common.mjs';
import { ADMIN, buildFerry } from './lib/ferry-server.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 50);
const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CHUNK = Number(process.env.BENCH_CHUNK ?? 50);
const USERS = 1000;
const DAY_NS = 86_400n * 1_000_000_000n;

const { dir: scratch, children, cleanup } = scratchWorkspace(2048, 'ferry-bench-events-');
const log = (...a) => console.log('[events-search]', ...a);
const basic = (u) => 'Basic ' + Buffer.from(`${u.username}:${u.password}`).toString('base64');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (x) => Math.round(x * 10) / 10;

/** Starts `ferry serve` with `db` (YAML lines of data_provider) and `plugins` under `dir`; resolves to {url, token, stop}. */
async function serve(dir, db, plugins) {
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const config = path.join(dir, 'ferry.yaml');
  const logFile = path.join(dir, 'ferry.log');
  writeFileSync(
    config,
    [
      'common:',
      `  data_dir: "${path.join(dir, 'data')}"`,
      '  max_per_host_transfers: 100',
      'data_provider:',
      ...db.map((l) => `  ${l}`),
      'httpd:',
      '  bindings:',
      '    - address: 127.0.0.1',
      '      port: 0',
      'kms:',
      '  master_key: bench-master-key-0123456789abcdef',
      'log:',
      '  level: info',
      `  file: "${logFile}"`,
      'plugins:',
      ...plugins.flatMap((p) => [`  - name: "${p.name}"`, ...(p.config ? [`    config: ${JSON.stringify(p.config)}`] : [])]),
      'defaults:',
      `  admin_username: ${ADMIN.username}`,
      `  admin_password: ${ADMIN.password}`,
      '',
    ].join('\n'),
  );
  const proc = spawn(path.join(root, 'core/bin/ferry'), ['serve', '--config', config], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(proc);
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  let url;
  for (let i = 0; i < 1200 && !url; i++) {
    await sleep(50);
    if (proc.exitCode !== null) throw new Error(`ferry exited: ${err}`);
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      continue;
    }
    url = /"uri":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(text)?.[1];
  }
  if (!url) throw new Error(`ferry did not start: ${err}`);
  url = `http://127.0.0.1:${new URL(url).port}`;
  const r = await fetch(`${url}/api/v2/token`, { headers: { authorization: basic(ADMIN) } });
  if (r.status !== 200) throw new Error(`admin token: ${r.status}`);
  const token = (await r.json()).access_token;
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((res) => proc.once('exit', res));
    proc.kill('SIGTERM');
    await Promise.race([exited, sleep(20_000)]);
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  };
  return { url, token, stop, logFile, pid: proc.pid };
}

async function getJson(url, token) {
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function timedGet(url, token) {
  const t0 = performance.now();
  const body = await getJson(url, token);
  return { ms: performance.now() - t0, body };
}

// ---------------------------------------------------------------- search over 1,000,000 events (PostgreSQL)
async function searchBench() {
  const database = await createBenchDatabase();
  const dbUrl = database.url;
  const out = {};
  let server;
  try {
    server = await serve(
      path.join(scratch, 'pg'),
      ['driver: postgresql', `url: "${dbUrl}"`],
      [{ name: '@ferry/fs-local' }, { name: '@ferry/events-search', config: { retention_days: 0 } }],
    );
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    // 30 days of events ending now, evenly spaced; ids as the plugin builds them (16 hex of ns, node, counter)
    const endNs = BigInt(Date.now()) * 1_000_000n;
    const startNs = endNs - 30n * DAY_NS;
    const stepNs = (endNs - startNs) / BigInt(EVENTS);
    const t0 = performance.now();
    await db.query(
      `insert into events_fs (id, action, username, fs_path, virtual_path, file_size, elapsed, status, protocol, ip, session_id, fs_provider, instance_id)
       select lpad(to_hex($1::bigint + i * $2::bigint), 16, '0') || 'be0c0000' || lpad(to_hex(i), 8, '0'),
              (array['upload','download','first-upload','first-download','delete','rename','mkdir','rmdir','ssh_cmd'])[1 + (i * 7 % 9)],
              'user' || (i % ${USERS}), '/srv/f' || i, '/f' || i, 1024 + i % 4096, i % 100, 1 + (i % 50 = 0)::int,
              (array['HTTP','SFTP','DAV','FTP'])[1 + i % 4], '10.0.' || (i % 200) || '.' || (i % 250), 's' || (i / 10), 0, 'bench-node'
       from generate_series(0, $3::bigint - 1) as i`,
      [startNs.toString(), stepNs.toString(), EVENTS],
    );
    await db.query('analyze events_fs');
    await db.end();
    out.insert_seconds = Math.round((performance.now() - t0) / 100) / 10;
    log(`${EVENTS} events inserted in ${out.insert_seconds} s`);

    // filtered search: user + 10-day range + two actions
    const rangeStart = startNs + 10n * DAY_NS;
    const rangeEnd = startNs + 20n * DAY_NS;
    const q = (u) =>
      `${server.url}/api/v2/events/fs?username=user${u}&start_timestamp=${rangeStart}&end_timestamp=${rangeEnd}&actions=upload,download&limit=100`;
    for (let i = 0; i < 5; i++) await timedGet(q(i), server.token);
    const times = [];
    let rows = 0;
    for (let i = 0; i < SEARCHES; i++) {
      const r = await timedGet(q((i * 37 + 11) % USERS), server.token);
      times.push(r.ms);
      rows += r.body.length;
    }
    out.filtered_search = {
      runs: SEARCHES,
      median_ms: ms(median(times)),
      p95_ms: ms(pct(times, 95)),
      avg_rows: Math.round(rows / SEARCHES),
      aim_median_ms: 100,
    };
    log('filtered search (user + time range + actions):', out.filtered_search);

    // from_id paging through everything
    for (const order of ['DESC', 'ASC']) {
      const pageTimes = [];
      let fromId = '';
      let total = 0;
      for (;;) {
        const r = await timedGet(`${server.url}/api/v2/events/fs?limit=1000&order=${order}${fromId ? `&from_id=${fromId}` : ''}`, server.token);
        pageTimes.push(r.ms);
        total += r.body.length;
        if (r.body.length < 1000) break;
        fromId = r.body[r.body.length - 1].id;
      }
      const first = median(pageTimes.slice(0, 20));
      const last = median(pageTimes.slice(-20));
      out[`paging_${order.toLowerCase()}`] = {
        pages: pageTimes.length,
        events: total,
        first20_median_ms: ms(first),
        last20_median_ms: ms(last),
        last_over_first: Math.round((last / first) * 100) / 100,
      };
      log(`from_id paging ${order}:`, out[`paging_${order.toLowerCase()}`]);
    }
  } finally {
    await server?.stop();
    await database.drop();
  }
  return out;
}

// ---------------------------------------------------------------- recording overhead on small uploads (SQLite)
/** Uploads files `from`..`to`-1 of a round, BENCH_CONCURRENCY at once; resolves to the seconds it took. */
async function uploadChunk(s, userToken, round, from, to) {
  const body = Buffer.alloc(1024, 'e');
  let next = from;
  const t0 = performance.now();
  const worker = async () => {
    while (next < to) {
      const i = next++;
      const r = await fetch(`${s.url}/api/v2/user/files/upload?path=%2Fr${round}-${i}.bin`, {
        method: 'POST',
        headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/octet-stream' },
        body,
      });
      await r.arrayBuffer();
      if (r.status !== 201) throw new Error(`upload ${i}: ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return (performance.now() - t0) / 1000;
}

async function recordingBench() {
  const sides = {
    without: await serve(path.join(scratch, 'without'), ['driver: sqlite', 'name: ferry.db'], [{ name: '@ferry/fs-local' }]),
    with: await serve(path.join(scratch, 'with'), ['driver: sqlite', 'name: ferry.db'], [{ name: '@ferry/fs-local' }, { name: '@ferry/events-search' }]),
  };
  const userTokens = {};
  for (const [name, s] of Object.entries(sides)) {
    const home = path.join(scratch, name, 'home');
    mkdirSync(home, { recursive: true });
    const user = { username: 'bench', password: 'bench-user-password-1' };
    const c = await fetch(`${s.url}/api/v2/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...user, status: 1, home_dir: home, permissions: { '/': ['*'] } }),
    });
    if (c.status !== 201) throw new Error(`user: ${c.status} ${await c.text()}`);
    const r = await fetch(`${s.url}/api/v2/user/token`, { headers: { authorization: basic(user) } });
    userTokens[name] = (await r.json()).access_token;
  }
  const secs = { without: [], with: [] };
  // with/without time of each pair of chunks run back to back: the load of the machine is nearly the same for both
  const pairRatios = [];
  // a warm-up round each, not counted
  for (const name of ['without', 'with']) await uploadChunk(sides[name], userTokens[name], 'w', 0, UPLOADS);
  await sleep(2000);
  const cpu0 = { without: cpuSecondsOf(sides.without.pid), with: cpuSecondsOf(sides.with.pid) };
  for (let round = 0; round < ROUNDS; round++) {
    const t = { without: 0, with: 0 };
    for (let from = 0, k = 0; from < UPLOADS; from += CHUNK, k++) {
      const pair = {};
      for (const name of (round + k) % 2 ? ['with', 'without'] : ['without', 'with']) {
        pair[name] = await uploadChunk(sides[name], userTokens[name], round, from, Math.min(UPLOADS, from + CHUNK));
        t[name] += pair[name];
      }
      pairRatios.push(pair.with / pair.without);
    }
    for (const name of ['without', 'with']) secs[name].push(t[name]);
    log(`round ${round}: ${UPLOADS} uploads without the plugin ${t.without.toFixed(2)} s, with it ${t.with.toFixed(2)} s`);
  }
  // every upload of the plugin side is recorded (warm-up included); its writer has flushed
  await sleep(3000);
  const cpu = { without: cpuSecondsOf(sides.without.pid) - cpu0.without, with: cpuSecondsOf(sides.with.pid) - cpu0.with };
  let recorded = 0;
  let fromId = '';
  for (;;) {
    const page = await getJson(`${sides.with.url}/api/v2/events/fs?actions=upload&limit=1000${fromId ? `&from_id=${fromId}` : ''}`, sides.with.token);
    recorded += page.length;
    if (page.length < 1000) break;
    fromId = page[page.length - 1].id;
  }
  for (const s of Object.values(sides)) await s.stop();
  const dropped = readFileSync(sides.with.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('event search dropped events')).length;
  const best = { without: Math.min(...secs.without), with: Math.min(...secs.with) };
  const out = {
    uploads: UPLOADS,
    concurrency: CONCURRENCY,
    chunk: CHUNK,
    rounds: ROUNDS,
    best_seconds_without: Math.round(best.without * 1000) / 1000,
    best_seconds_with: Math.round(best.with * 1000) / 1000,
    median_seconds_without: Math.round(median(secs.without) * 1000) / 1000,
    median_seconds_with: Math.round(median(secs.with) * 1000) / 1000,
    overhead_pct_best: Math.round((best.with / best.without - 1) * 1000) / 10,
    overhead_pct_median: Math.round((median(secs.with) / median(secs.without) - 1) * 1000) / 10,
    overhead_pct_total: Math.round((secs.with.reduce((a, b) => a + b, 0) / secs.without.reduce((a, b) => a + b, 0) - 1) * 1000) / 10,
    overhead_pct_paired_median: Math.round((median(pairRatios) - 1) * 1000) / 10,
    chunk_pairs: pairRatios.length,
    server_cpu_seconds_without: Math.round(cpu.without * 100) / 100,
    server_cpu_seconds_with: Math.round(cpu.with * 100) / 100,
    overhead_pct_cpu: Math.round((cpu.with / cpu.without - 1) * 1000) / 10,
    load_average: (await import('node:os')).loadavg().map((x) => Math.round(x * 10) / 10),
    upload_events_expected: UPLOADS * (ROUNDS + 1),
    upload_events_recorded: recorded,
    drop_log_lines: dropped,
    aim_overhead_pct: 5,
  };
  log('recording overhead:', out);
  return out;
}

try {
  buildFerry(log);
  const search = process.env.BENCH_SKIP_SEARCH === '1' ? undefined : await searchBench();
  const recording = await recordingBench();
  writeResults('events-search', { events: EVENTS, search, recording });
} finally {
  cleanup();
}

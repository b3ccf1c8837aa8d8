#!/usr/bin/env node
// API throughput of a real `ferry serve` (compiled CLI, through core/bin/ferry,
// the shipped plugin list), driven over keep-alive connections by a load
// generator in a process of its own (bench/lib/http-load.mjs). Run from the
// repository root:
//
//   node bench/api-throughput.bench.mjs            SQLite and PostgreSQL (or: npm run bench api-throughput)
//   node bench/api-throughput.bench.mjs --sqlite   SQLite only
//   node bench/api-throughput.bench.mjs --pg       PostgreSQL only (a fresh database on FERRY_TEST_PG_URL or 127.0.0.1:5432)
//
// 1. Authenticated admin reads, on each database (BENCH_USERS users generated
//    in it before the start, bench/gen-users.mjs), against a bare Hapi route
//    doing the same JWT verification (bench/lib/bare-jwt-server.mjs, which
//    answers the very objects Ferry answered, serialised on each request):
//      GET /api/v2/users/{name}       200 different names in turn
//      GET /api/v2/users?limit=100
//    requests/s, best of BENCH_ROUNDS rounds alternating Ferry and bare.
//    Aim: Ferry >= 0.5x the bare route's requests/s. The server CPU time per
//    request (a steadier figure on a busy machine) is printed with its ratio too.
// 2. Token issuance with the default password hashing (argon2id, core's
//    password.ts), on SQLite with auth_cache.ttl 0 (every request hashes; the
//    default 60 s cache makes repeated logins of one account cheap, printed
//    too as "cached"): GET /api/v2/token (admin) and /api/v2/user/token
//    (users in turn), basic auth, with 1 and 16 clients, against the raw
//    argon2 verifications/s at the same concurrency in a process of its own.
//    Aims: token/s >= 0.8x raw argon2 at the same concurrency (the ratio of
//    CPU per verification to server CPU per token is printed too), and 16 clients
//    >= 1.0x the token/s of 1 client (more clients never lower the rate).
// 3. Login storm: p99 latency of GET /healthz (1 client) alone and during 16
//    clients' /user/token storm (every request hashes). Aim: the p99 during
//    the storm stays under the time of one argon2 verification (hashing runs
//    off the event loop; what is left is CPU contention on a small machine).
//
// On a 2-core machine the load generator, the server and the argon2 threads
// share the cores: the figures are lower than with a client on another host,
// for Ferry and the bare route alike. The load average is printed with them.
// Env: BENCH_ROUNDS (3), BENCH_SECS (3, seconds per measurement),
// BENCH_CONNECTIONS (8, for the reads), BENCH_USERS (2000),
// FERRY_BENCH_NO_BUILD=1 (use core/dist as it is), FERRY_BENCH_DIR.
// Writes bench/results/api-throughput.json.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import { cpuSecondsOf, envNumber, reexecWithTypeScript, root, scratchWorkspace, startBareServer, stopProc, writeResults } from './lib/common.mjs';

reexecWithTypeScript(import.meta.url);

const { buildFerry, startFerry, ADMIN } = await import('./lib/ferry-server.mjs');
const { httpLoad, argon2Load } = await import('./lib/http-load.mjs');
const { generateUsers, userName, BENCH_PASSWORD } = await import('./gen-users.mjs');
const { openOrm, migrate } = await import('../core/src/data/orm.ts');
const { createPgDatabase } = await import('../core/src/testing.ts');
const jwt = (await import('jsonwebtoken')).default;

const ROUNDS = envNumber('BENCH_ROUNDS', 3);
const SECS = envNumber('BENCH_SECS', 3);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 8);
const USERS = envNumber('BENCH_USERS', 2000);
const AIM_READS = 0.5;
const AIM_TOKEN = 0.8;
const AIM_DEGRADE = 1.0;
const only = process.argv.includes('--pg') ? ['postgresql'] : process.argv.includes('--sqlite') ? ['sqlite'] : ['sqlite', 'postgresql'];

const { dir: scratch, children, cleanup } = scratchWorkspace(512, 'ferry-bench-api-');
const log = (...a) => console.log('[api]', ...a);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const basic = (u, p) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');
const fmt = (x, d = 0) => x.toFixed(d);
const shipped = YAML.parse(readFileSync(path.join(root, 'config/default.yaml'), 'utf8')).plugins.map((p) => ({
  name: p.name,
  ...(p.config ? { config: p.config } : {}),
}));

const results = { loadavgStart: loadavg(), rounds: ROUNDS, secs: SECS, connections: CONNECTIONS, users: USERS, reads: {}, tokens: {}, storm: {} };
const summary = [];
let failed = false;
const check = (label, ratio, aim, higherIsBetter = true) => {
  const ok = higherIsBetter ? ratio >= aim : ratio <= aim;
  if (!ok) failed = true;
  summary.push(`${label}: ${ratio.toFixed(2)}x (aim ${higherIsBetter ? '>=' : '<='} ${aim.toFixed(2)}x) ${ok ? 'ok' : 'MISSED'}`);
};

/** Fails on any non-200 answer of a load run (a benchmark of errors measures nothing). */
function expectOk(r, what) {
  const bad = Object.entries(r.statuses).filter(([s]) => s !== '200');
  if (bad.length || r.count === 0) throw new Error(`${what}: answers ${JSON.stringify(r.statuses)}`);
  return r;
}

/** A load run on a server process: the run's result plus the server's CPU seconds per request. */
async function measure(pid, spec, what) {
  const cpu0 = cpuSecondsOf(pid);
  const r = expectOk(await httpLoad({ durationMs: SECS * 1000, ...spec }), what);
  // the server's CPU over the whole run (warm-up included) over every request sent
  return { ...r, serverCpuMsPerReq: ((cpuSecondsOf(pid) - cpu0) * 1000) / r.sent };
}

/** Starts the bare Hapi reference answering `bodies`; resolves to { url, proc }. */
async function startBare(key, bodies) {
  return startBareServer('bare-jwt-server.mjs', { key, bodies }, children);
}

/** A database with USERS generated users: { env for ferry, drop() }. */
async function prepareDatabase(db, dir) {
  if (db === 'sqlite') {
    const orm = await openOrm({ driver: 'sqlite', sqlitePath: path.join(dir, 'data', 'ferry.db') });
    await migrate(orm);
    await generateUsers(orm, USERS);
    await orm.close(true);
    return { env: {}, drop: async () => {} };
  }
  const pg = await createPgDatabase();
  const orm = await openOrm({ driver: 'postgresql', url: pg.url });
  await migrate(orm);
  await generateUsers(orm, USERS);
  await orm.close(true);
  return { env: { SERVICE_DATA_PROVIDER__DRIVER: 'postgresql', SERVICE_DATA_PROVIDER__URL: pg.url }, drop: () => pg.drop() };
}

async function getJson(url, token) {
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

// ---------------------------------------------------------------- 1. reads
async function reads(db) {
  const dir = path.join(scratch, db);
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const database = await prepareDatabase(db, dir);
  try {
    const ferry = await startFerry({ dir, plugins: shipped, env: database.env, children });
    try {
      const names = Array.from({ length: 200 }, (_, i) => userName(1 + Math.floor((i * USERS) / 200)));
      const workloads = {
        'GET /users/{name}': names.map((n) => `/api/v2/users/${n}`),
        'GET /users?limit=100': ['/api/v2/users?limit=100'],
      };
      // the bare route answers what Ferry answered, with a token of the same claims under its own key
      const bodies = {};
      for (const paths of Object.values(workloads)) for (const p of paths) bodies[p] = await getJson(ferry.url + p, ferry.adminToken);
      const key = 'bare-bench-key-' + Math.random().toString(36).slice(2);
      const bareToken = jwt.sign(jwt.decode(ferry.adminToken), key, { algorithm: 'HS256', noTimestamp: true });
      const bare = await startBare(key, bodies);
      try {
        const out = {};
        for (const [name, paths] of Object.entries(workloads)) {
          const best = { ferry: null, bare: null };
          for (let round = 0; round < ROUNDS; round++) {
            const order = round % 2 ? ['bare', 'ferry'] : ['ferry', 'bare'];
            for (const side of order) {
              const [url, token, pid] = side === 'ferry' ? [ferry.url, ferry.adminToken, ferry.proc.pid] : [bare.url, bareToken, bare.proc.pid];
              const requests = paths.map((p) => ({ path: p, headers: { authorization: `Bearer ${token}` } }));
              const r = await measure(pid, { url, requests, connections: CONNECTIONS }, `${db} ${side} ${name}`);
              if (!best[side] || r.rps > best[side].rps) best[side] = r;
            }
          }
          const ratio = best.ferry.rps / best.bare.rps;
          const cpuRatio = best.bare.serverCpuMsPerReq / best.ferry.serverCpuMsPerReq;
          out[name] = { ferry: best.ferry, bare: best.bare, ratio, cpuRatio, loadavg: loadavg() };
          log(
            `${db.padEnd(10)} ${name.padEnd(22)} ferry ${fmt(best.ferry.rps).padStart(6)} req/s (p99 ${fmt(best.ferry.p99, 1)} ms, ${fmt(best.ferry.serverCpuMsPerReq, 3)} ms CPU/req)` +
              `  bare ${fmt(best.bare.rps).padStart(6)} req/s (${fmt(best.bare.serverCpuMsPerReq, 3)} ms CPU/req)` +
              `  ratio ${ratio.toFixed(2)}x, CPU ratio ${cpuRatio.toFixed(2)}x (aim >= ${AIM_READS}x)  load ${loadavg()}`,
          );
          check(`${db} ${name} req/s vs bare Hapi + JWT`, ratio, AIM_READS);
        }
        results.reads[db] = out;

        // the default password cache: repeated logins of the same account
        const cached = {};
        for (const [what, path_, auth] of [
          ['admin /token', '/api/v2/token', basic(ADMIN.username, ADMIN.password)],
          ['user /user/token', '/api/v2/user/token', basic(userName(1), BENCH_PASSWORD)],
        ]) {
          // one request first puts the password in the cache (16 clients at once would all miss it and hash)
          const first = await fetch(ferry.url + path_, { headers: { authorization: auth } });
          if (first.status !== 200) throw new Error(`${db} ${what}: ${first.status} ${await first.text()}`);
          await first.arrayBuffer();
          const r = await measure(
            ferry.proc.pid,
            { url: ferry.url, requests: [{ path: path_, headers: { authorization: auth } }], connections: 16 },
            `${db} cached ${what}`,
          );
          cached[what] = r;
          log(
            `${db.padEnd(10)} ${`${what} cached`.padEnd(22)} ${fmt(r.rps).padStart(6)} tokens/s with 16 clients (p99 ${fmt(r.p99, 1)} ms; default auth_cache: one argon2 then HMAC)`,
          );
        }
        results.tokens[`${db} cached`] = cached;
      } finally {
        await stopProc(bare.proc);
      }
    } finally {
      await ferry.stop();
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------- 2. tokens, 3. storm
async function tokensAndStorm() {
  const dir = path.join(scratch, 'tokens');
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const database = await prepareDatabase('sqlite', dir);
  const ferry = await startFerry({ dir, plugins: shipped, env: { SERVICE_AUTH_CACHE__TTL: '0' }, children });
  try {
    const users = Array.from({ length: USERS }, (_, i) => ({
      path: '/api/v2/user/token',
      headers: { authorization: basic(userName(i + 1), BENCH_PASSWORD) },
    }));
    const admin = [{ path: '/api/v2/token', headers: { authorization: basic(ADMIN.username, ADMIN.password) } }];
    const raw = {};
    for (const c of [1, 16]) {
      raw[c] = await argon2Load({ concurrency: c, durationMs: SECS * 1000 });
      raw[c].cpuMsPerVerify = (raw[c].clientCpuSecs * 1000) / raw[c].sent;
      log(
        `raw argon2 verify, ${String(c).padStart(2)} at once: ${fmt(raw[c].rps, 1)}/s (median ${fmt(raw[c].p50, 1)} ms each, ${fmt(raw[c].cpuMsPerVerify, 1)} ms CPU)  load ${loadavg()}`,
      );
    }
    const out = { raw };
    for (const [what, requests] of [
      ['admin /token', admin],
      ['user /user/token', users],
    ]) {
      out[what] = {};
      for (const c of [1, 16]) {
        const r = await measure(ferry.proc.pid, { url: ferry.url, requests, connections: c }, `${what} x${c}`);
        out[what][c] = r;
        const ratio = r.rps / raw[c].rps;
        // CPU per token against CPU per bare verification: the steadier figure on a busy machine
        r.cpuRatio = raw[c].cpuMsPerVerify / r.serverCpuMsPerReq;
        log(
          `${what.padEnd(17)} ${String(c).padStart(2)} clients: ${fmt(r.rps, 1).padStart(6)} tokens/s  p50 ${fmt(r.p50, 1)} ms  p99 ${fmt(r.p99, 1)} ms` +
            `  ${fmt(r.serverCpuMsPerReq, 1)} ms server CPU/token  vs raw argon2 ${ratio.toFixed(2)}x, CPU ratio ${r.cpuRatio.toFixed(2)}x (aim >= ${AIM_TOKEN}x)  load ${loadavg()}`,
        );
        check(`token ${what} x${c} vs raw argon2 x${c}`, ratio, AIM_TOKEN);
      }
      const degrade = out[what][16].rps / out[what][1].rps;
      out[what].degrade = degrade;
      log(
        `${what.padEnd(17)} 16 clients / 1 client: ${degrade.toFixed(2)}x tokens/s (aim >= ${AIM_DEGRADE}x); p99 ${fmt(out[what][1].p99, 1)} -> ${fmt(out[what][16].p99, 1)} ms`,
      );
      check(`token ${what} 16 clients vs 1`, degrade, AIM_DEGRADE);
    }
    results.tokens.uncached = out;

    // login storm: GET /healthz alone, then during 16 clients' token requests (users not used above: no cache anyway, ttl 0)
    const probe = { url: ferry.url, requests: [{ path: '/healthz' }], connections: 1 };
    const quiet = await measure(ferry.proc.pid, probe, 'healthz quiet');
    const storm = httpLoad({ url: ferry.url, requests: users.slice().reverse(), connections: 16, durationMs: SECS * 1000 + 1000, warmupMs: 0, prime: false });
    await sleep(500);
    const during = expectOk(await httpLoad({ ...probe, durationMs: SECS * 1000 }), 'healthz during the storm');
    const stormResult = expectOk(await storm, 'storm');
    const oneHash = raw[1].p50;
    results.storm = { quiet, during, storm: stormResult, oneArgon2Ms: oneHash, loadavg: loadavg() };
    log(
      `GET /healthz p99: ${fmt(quiet.p99, 2)} ms alone, ${fmt(during.p99, 2)} ms during a login storm of 16 clients (${fmt(stormResult.rps, 1)} tokens/s);` +
        ` p50 ${fmt(quiet.p50, 2)} -> ${fmt(during.p50, 2)} ms; one argon2 verify ${fmt(oneHash, 1)} ms  load ${loadavg()}`,
    );
    check('healthz p99 during the storm / one argon2 verify', during.p99 / oneHash, 1.0, false);
  } finally {
    await ferry.stop();
    await database.drop();
  }
}

try {
  buildFerry(log);
  log(`load average ${loadavg()}; ${ROUNDS} rounds of ${SECS} s, ${CONNECTIONS} connections for reads, ${USERS} users`);
  for (const db of only) {
    try {
      await reads(db);
    } catch (err) {
      failed = true;
      summary.push(`${db}: FAILED ${err instanceof Error ? err.message : err}`);
      console.error(`[api] ${db}:`, err);
    }
  }
  await tokensAndStorm();
  results.loadavgEnd = loadavg();
  results.summary = summary;
  writeResults('api-throughput', results);
  console.log('\n[api] summary (ratio, aim)');
  for (const l of summary) console.log(`[api]   ${l}`);
  console.log(`[api] load average ${results.loadavgStart} -> ${results.loadavgEnd}`);
} finally {
  cleanup();
}
process.exit(failed ? 1 : 0);

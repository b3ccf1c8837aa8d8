#!/usr/bin/env node
// The cost of one user request on small files: a real `ferry serve` (compiled
// CLI, through core/bin/ferry, fs-local) against two references doing the
// same file work in the same run (bench/lib/bare-files-server.mjs):
//   - a bare node:http server (no authentication): what the machine does;
//   - a bare Hapi route checking the same JWT (hapi-auth-jwt2, audience user):
//     Hapi is the design's, so this ratio is Ferry's own overhead.
// Workloads, BENCH_CONNECTIONS (16) keep-alive connections, closed loop
// (bench/lib/http-load.mjs, a process of its own):
//   download  GET  /api/v2/user/files?path=/small.bin        a 4 KiB file
//   upload    POST /api/v2/user/files/upload?path=/up/uN.bin  4 KiB bodies, 64 names in turn (overwrites)
//   listing   GET  /api/v2/user/dirs?path=/ten                a directory of 10 files
// on SQLite and PostgreSQL (a fresh database on FERRY_TEST_PG_URL or 127.0.0.1:5432).
// Each server first takes BENCH_WARMUP_SECS (2) of the workload's load, not
// measured (its JIT and caches warm, as on a server that has been up a while),
// then best of BENCH_ROUNDS (2) rounds, the three servers in turn, order alternating.
// Aims: Ferry >= 0.25x the bare node:http server's requests/s and >= 0.5x the
// bare Hapi route's. The server CPU time per request is printed too (a steadier
// figure on a busy machine), with the load average.
//
//   node bench/small-files.bench.mjs          SQLite and PostgreSQL (or: npm run bench small-files)
//   node bench/small-files.bench.mjs --sqlite SQLite only
//   node bench/small-files.bench.mjs --pg     PostgreSQL only
//
// Env: BENCH_ROUNDS (2), BENCH_SECS (4), BENCH_WARMUP_SECS (2), BENCH_CONNECTIONS (16), FERRY_BENCH_NO_BUILD=1,
// FERRY_BENCH_DIR; BENCH_CPU_PROF=<dir>: Ferry runs with --cpu-prof into that directory;
// BENCH_WORKLOADS=listing,download: only these workloads (all three by default);
// BENCH_NODE_ARGS: more node options of the Ferry process (e.g. --heap-prof).
// Writes bench/results/small-files.json.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cpuSecondsOf, envNumber, runBench, scratchWorkspace, startBareServer, stopProc, writeResults } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';
import { httpLoad } from './lib/http-load.mjs';
import { createBenchDatabase } from './lib/pg.mjs';

const ROUNDS = envNumber('BENCH_ROUNDS', 2);
const SECS = envNumber('BENCH_SECS', 4);
const WARMUP_SECS = envNumber('BENCH_WARMUP_SECS', 2);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 16);
const PROF = process.env.BENCH_CPU_PROF ?? '';
const AIM_NODE = 0.25;
const AIM_HAPI = 0.5;
const SIZE = 4096;
const only = process.argv.includes('--pg') ? ['postgresql'] : process.argv.includes('--sqlite') ? ['sqlite'] : ['sqlite', 'postgresql'];

const { dir: scratch, children, cleanup } = scratchWorkspace(256, 'ferry-bench-small-');
const log = (...a) => console.log('[small-files]', ...a);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const fmt = (x, d = 0) => x.toFixed(d);

const results = {
  command: 'node bench/small-files.bench.mjs',
  aims: { vsNode: AIM_NODE, vsHapi: AIM_HAPI },
  loadavgStart: loadavg(),
  rounds: ROUNDS,
  warmup_secs: WARMUP_SECS,
  secs: SECS,
  connections: CONNECTIONS,
  size: SIZE,
  runs: {},
};
const summary = [];
let failed = false;
/**
 * One figure line per ratio, ending with its aim ("... aim >= 0.25x"): the
 * lines writeResults() keeps for the table of docs/performance.md.
 */
function check(db, workload, best, side, label, ratio, aim) {
  const ok = ratio >= aim;
  if (!ok) failed = true;
  const one = (s) => `${fmt(best[s].rps)} req/s (${fmt(best[s].serverCpuMsPerReq, 3)} ms CPU/req)`;
  log(`${db} ${WORKLOADS[workload].label}: ferry ${one('ferry')}, ${label} ${one(side)}: ${ratio.toFixed(2)}x   aim >= ${aim.toFixed(2)}x`);
  summary.push(`${db} ${workload} vs ${label}: ${ratio.toFixed(2)}x (wanted >= ${aim.toFixed(2)}x) ${ok ? 'ok' : 'MISSED'}`);
}

/** A home with /small.bin (4 KiB), /ten (10 files) and /up (upload target). */
function fillHome(home) {
  mkdirSync(path.join(home, 'ten'), { recursive: true });
  mkdirSync(path.join(home, 'up'), { recursive: true });
  writeFileSync(path.join(home, 'small.bin'), Buffer.alloc(SIZE, 7));
  for (let i = 0; i < 10; i++) writeFileSync(path.join(home, 'ten', `file-${i}.txt`), `entry ${i}\n`.repeat(1 + i * 10));
}

const WORKLOADS = {
  download: { label: 'download 4 KiB', requests: () => [{ path: '/api/v2/user/files?path=%2Fsmall.bin' }], ok: 200 },
  upload: {
    label: 'upload 4 KiB',
    requests: () => Array.from({ length: 64 }, (_, i) => ({ method: 'POST', path: `/api/v2/user/files/upload?path=%2Fup%2Fu${i}.bin`, bodyBytes: SIZE })),
    ok: 201,
  },
  listing: { label: 'listing 10 entries', requests: () => [{ path: '/api/v2/user/dirs?path=%2Ften' }], ok: 200 },
};

/** The workloads of BENCH_WORKLOADS (comma-separated names), or all of them. */
function chosenWorkloads() {
  const wanted = (process.env.BENCH_WORKLOADS ?? '')
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);
  const unknown = wanted.filter((w) => !(w in WORKLOADS));
  if (unknown.length) throw new Error(`BENCH_WORKLOADS: unknown ${unknown.join(', ')} (known: ${Object.keys(WORKLOADS).join(', ')})`);
  return wanted.length ? wanted : Object.keys(WORKLOADS);
}

async function startBare(kind, home, key) {
  return startBareServer('bare-files-server.mjs', { kind, root: home, key }, children);
}

/** One load run on a server process; fails on any unexpected answer. */
async function measure(pid, url, token, workload, what, secs = SECS) {
  const requests = WORKLOADS[workload].requests().map((r) => ({ ...r, headers: token ? { authorization: `Bearer ${token}` } : {} }));
  const cpu0 = cpuSecondsOf(pid);
  const r = await httpLoad({ url, requests, connections: CONNECTIONS, durationMs: secs * 1000 });
  const bad = Object.entries(r.statuses).filter(([s]) => Number(s) !== WORKLOADS[workload].ok);
  if (bad.length || r.count === 0) throw new Error(`${what}: answers ${JSON.stringify(r.statuses)}`);
  return { ...r, serverCpuMsPerReq: ((cpuSecondsOf(pid) - cpu0) * 1000) / r.sent };
}

async function run(db) {
  const jwt = (await import('jsonwebtoken')).default;
  const dir = path.join(scratch, db);
  const home = path.join(dir, 'home');
  const bareHome = path.join(dir, 'bare-home');
  fillHome(home);
  fillHome(bareHome);
  const pg = db === 'postgresql' ? await createBenchDatabase() : null;
  const nodeArgs = [
    ...(PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROF, db)}`] : []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  ];
  const ferry = await startFerry({ dir, children, pgUrl: pg?.url ?? '', nodeArgs });
  const key = 'bare-bench-key-' + Math.random().toString(36).slice(2);
  const sides = {};
  try {
    const token = await ferry.createUser({ username: 'small', password: 'small-files-password-1', status: 1, home_dir: home });
    const bareToken = jwt.sign(jwt.decode(token), key, { algorithm: 'HS256', noTimestamp: true });
    sides.ferry = { url: ferry.url, token, pid: ferry.proc.pid };
    const node = await startBare('node', bareHome, key);
    const hapi = await startBare('hapi', bareHome, key);
    sides.node = { url: node.url, token: '', pid: node.proc.pid, proc: node.proc };
    sides.hapi = { url: hapi.url, token: bareToken, pid: hapi.proc.pid, proc: hapi.proc };
    const out = {};
    for (const workload of chosenWorkloads()) {
      const best = {};
      if (WARMUP_SECS > 0) {
        for (const side of ['ferry', 'node', 'hapi']) {
          const s = sides[side];
          await measure(s.pid, s.url, s.token, workload, `${db} ${side} ${workload} (warm-up)`, WARMUP_SECS);
        }
      }
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? ['hapi', 'node', 'ferry'] : ['ferry', 'node', 'hapi'];
        for (const side of order) {
          const s = sides[side];
          const r = await measure(s.pid, s.url, s.token, workload, `${db} ${side} ${workload}`);
          if (!best[side] || r.rps > best[side].rps) best[side] = r;
        }
      }
      const vsNode = best.ferry.rps / best.node.rps;
      const vsHapi = best.ferry.rps / best.hapi.rps;
      out[workload] = { ...best, vsNode, vsHapi, loadavg: loadavg() };
      log(`${db} ${workload}: ferry p99 ${fmt(best.ferry.p99, 1)} ms; load average ${loadavg()}`);
      check(db, workload, best, 'node', 'bare node:http', vsNode, AIM_NODE);
      check(db, workload, best, 'hapi', 'bare Hapi + JWT', vsHapi, AIM_HAPI);
    }
    results.runs[db] = out;
  } finally {
    for (const s of Object.values(sides)) if (s.proc) await stopProc(s.proc);
    await ferry.stop();
    await pg?.drop();
  }
}

runBench(
  'small-files',
  async () => {
    buildFerry(log);
    log(`load average ${loadavg()}; ${WARMUP_SECS} s of warm-up, then ${ROUNDS} rounds of ${SECS} s, ${CONNECTIONS} connections, ${SIZE}-byte files`);
    for (const db of only) {
      try {
        await run(db);
      } catch (err) {
        failed = true;
        summary.push(`${db}: FAILED ${err instanceof Error ? err.message : err}`);
        console.error(`[small-files] ${db}:`, err);
      }
    }
    results.loadavgEnd = loadavg();
    results.summary = summary;
    writeResults('small-files', results);
    console.log('\n[small-files] summary (ratio, wanted)');
    for (const l of summary) console.log(`[small-files]   ${l}`);
    console.log(`[small-files] load average ${results.loadavgStart} -> ${results.loadavgEnd}`);
    if (failed) throw new Error('an aim was missed (see the summary)');
  },
  cleanup,
);

#!/usr/bin/env node
// A closed-loop HTTP load generator for the benchmarks, run in a process of
// its own so that the client's CPU is not the server's event loop (on a
// 2-core machine they still share the cores: the client's CPU time is in the
// result so a benchmark can show it).
//
//   import { httpLoad, argon2Load } from './lib/http-load.mjs';
//   const r = await httpLoad({ url, requests: [{ path, headers }], connections: 8, durationMs: 3000 });
//
// `connections` keep-alive connections (undici Pool, no pipelining) each send
// the next request as soon as the previous answer's body has been read; the
// requests of `requests` are taken in turn (one list entry per request, e.g.
// different users). With `prime` (default) each connection first sends one
// request (the last ones of the list) before the clock starts; requests
// started during the first `warmupMs` are not counted either. The result: { count, secs, rps, p50, p90, p99, max (ms), statuses
// { code: n }, bytes, clientCpuSecs, wrapped (more requests were sent than
// `requests` has entries) }. A request may name its `method` (GET) and
// `bodyBytes` (a body of that many bytes, the same for every request: uploads).
//
// argon2Load({ concurrency, durationMs }): password verifications per second
// with the hash parameters of core's password.ts (the compiled core/dist),
// `concurrency` at once, in a process of its own: the floor of any password
// login. Same result shape (statuses empty).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);

function runChild(spec) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [self], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      try {
        resolve(JSON.parse(out));
      } catch (err) {
        reject(new Error(`load generator printed no result: ${out} (${err})`));
      }
    });
    // the request list can be larger than one command-line argument may be
    child.stdin.end(JSON.stringify(spec));
  });
}

export function httpLoad({ url, requests, connections = 8, durationMs = 3000, warmupMs = 500, prime = true }) {
  return runChild({ kind: 'http', url, requests, connections, durationMs, warmupMs, prime });
}

export function argon2Load({ concurrency = 1, durationMs = 3000, warmupMs = 300 }) {
  return runChild({ kind: 'argon2', concurrency, durationMs, warmupMs });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `workers` loops of `once()` until the deadline; latencies of those started after the warm-up. */
async function closedLoop(workers, durationMs, warmupMs, once) {
  const lat = [];
  const statuses = {};
  let bytes = 0;
  let last = 0;
  const start = performance.now();
  const from = start + warmupMs;
  const end = from + durationMs;
  const cpu0 = process.cpuUsage();
  let sent = 0;
  const loop = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const r = await once(sent++);
      const t1 = performance.now();
      if (t0 < from) continue;
      lat.push(t1 - t0);
      last = Math.max(last, t1);
      if (r.status !== undefined) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      bytes += r.bytes ?? 0;
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
  const cpu = process.cpuUsage(cpu0);
  lat.sort((a, b) => a - b);
  const secs = Math.max(1e-9, (last - from) / 1000);
  const r2 = (x) => Math.round(x * 100) / 100;
  return {
    count: lat.length,
    secs: r2(secs),
    rps: r2(lat.length / secs),
    p50: r2(percentile(lat, 50)),
    p90: r2(percentile(lat, 90)),
    p99: r2(percentile(lat, 99)),
    max: r2(lat.at(-1) ?? 0),
    statuses,
    bytes,
    sent,
    clientCpuSecs: r2((cpu.user + cpu.system) / 1e6),
  };
}

async function child() {
  let input = '';
  for await (const d of process.stdin) input += d;
  const spec = JSON.parse(input);
  if (spec.kind === 'argon2') {
    const root = path.resolve(path.dirname(self), '../..');
    // the hash (so its parameters) from core; verified with argon2 directly, without core's limit of hashes at once
    const { hashPassword } = await import(pathToFileURL(path.join(root, 'core/dist/src/accounts/password.js')).href);
    const argon2 = (await import('argon2')).default;
    const hash = await hashPassword('bench-password');
    const r = await closedLoop(spec.concurrency, spec.durationMs, spec.warmupMs, async () => {
      if (!(await argon2.verify(hash, 'bench-password'))) throw new Error('argon2 verify failed');
      return {};
    });
    return r;
  }
  const { Pool } = await import('undici');
  const pool = new Pool(spec.url, { connections: spec.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const reqs = spec.requests;
  const bodies = new Map();
  const bodyOf = (n) => {
    let b = bodies.get(n);
    if (!b) bodies.set(n, (b = Buffer.alloc(n, 'x')));
    return b;
  };
  const once = async (i) => {
    const q = reqs[i % reqs.length];
    const body = q.bodyBytes ? bodyOf(q.bodyBytes) : undefined;
    const res = await pool.request({ method: q.method ?? 'GET', path: q.path, headers: q.headers ?? {}, body });
    let bytes = 0;
    for await (const chunk of res.body) bytes += chunk.length;
    return { status: res.statusCode, bytes };
  };
  // one request per connection before the clock starts: connections open, the server's first-request costs paid
  // (on a busy machine a first request can outlast the warm-up, leaving nothing measured)
  if (spec.prime) await Promise.all(Array.from({ length: spec.connections }, (_, i) => once(reqs.length - 1 - (i % reqs.length))));
  const r = await closedLoop(spec.connections, spec.durationMs, spec.warmupMs, once);
  await pool.close();
  return { ...r, wrapped: r.sent > reqs.length };
}

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  child().then(
    (r) => process.stdout.write(JSON.stringify(r) + '\n'),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

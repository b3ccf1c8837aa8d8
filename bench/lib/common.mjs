// Helpers shared by the benchmarks of bench/: ports, test data streamed from
// a generator, byte counting sinks, resident-memory sampling, results files.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const MB = 1024 * 1024;
export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const root = path.resolve(benchDir, '..');

/** A number from the first of `names` set in the environment, else `fallback`. */
export function envNumber(names, fallback) {
  for (const n of [].concat(names)) {
    const v = process.env[n];
    if (v !== undefined && v !== '') {
      const x = Number(v);
      if (!Number.isFinite(x) || x < 0) throw new Error(`${n} must be a non-negative number (got "${v}")`);
      return x;
    }
  }
  return fallback;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Resolves once something accepts connections on 127.0.0.1:port (throws after ~10 s). */
export async function waitPort(port) {
  for (let i = 0; i < 400; i++) {
    if (await portOpen(port)) return;
    await sleep(25);
  }
  throw new Error(`nothing listens on ${port}`);
}

export function portOpen(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });
}

/** One random MiB, reused by every source (incompressible, no large buffer). */
let block;
function randomBlock() {
  block ??= randomBytes(MB);
  return block;
}

/** A stream of `size` bytes: one random MiB repeated, produced by a generator (never `size` bytes in memory). */
export function patternSource(size) {
  const b = randomBlock();
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < size; sent += MB) yield sent + MB <= size ? b : b.subarray(0, size - sent);
    })(),
    { objectMode: false },
  );
}

/** A Writable that counts and drops what it is given (`sink.bytes`). */
export function countingSink() {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      sink.bytes += chunk.length;
      cb();
    },
  });
  sink.bytes = 0;
  return sink;
}

/** Consumes a stream; resolves to its length in bytes. */
export async function drain(stream) {
  const sink = countingSink();
  await pipeline(stream, sink);
  return sink.bytes;
}

/** Writes a file of `mb` MiB (the random MiB repeated). */
export function makeFile(file, mb) {
  const b = randomBlock();
  const fd = openSync(file, 'w', 0o644);
  try {
    for (let i = 0; i < mb; i++) writeSync(fd, b);
  } finally {
    closeSync(fd);
  }
}

/** A scratch base directory: /dev/shm when it has `needMb` free, else the OS temp directory (FERRY_BENCH_DIR overrides). */
export function scratchBase(needMb) {
  if (process.env.FERRY_BENCH_DIR) return process.env.FERRY_BENCH_DIR;
  try {
    const st = statfsSync('/dev/shm');
    if (st.bavail * st.bsize > needMb * MB) return '/dev/shm';
  } catch {
    /* no /dev/shm */
  }
  return os.tmpdir();
}

/** Resident set size of a process in MB (0 when it is gone); `field` VmRSS (now) or VmHWM (peak since start). */
export function rssOf(pid, field = 'VmRSS') {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resets the peak resident set (VmHWM) of a process, so rssOf(pid, 'VmHWM') measures from now (needs root; a no-op otherwise). */
export function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    /* not root: the peak since the start stays */
  }
}

/** CPU time (user + system) a process has used so far, in seconds (0 when it is gone). */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100 on Linux)
  } catch {
    return 0;
  }
}

/** Runs `fn` while sampling the RSS of `pid` (default: this process) every 20 ms; resolves to { value, peakRssMb }. */
export async function withPeakRss(fn, pid = process.pid) {
  let max = 0;
  const sample = () => (max = Math.max(max, rssOf(pid)));
  const timer = setInterval(sample, 20);
  try {
    sample();
    const value = await fn();
    sample();
    return { value, peakRssMb: max };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Runs `fn` (resolving to the bytes it moved, checked against `size`);
 * resolves to { mbps, secs }. Fails after `timeoutSecs` (default: as long as
 * the transfer would take at 1 MB/s, at least 2 minutes), so a stalled
 * transfer stops the benchmark instead of hanging it.
 */
export async function timed(size, fn, timeoutSecs = Math.max(120, size / MB)) {
  const t0 = process.hrtime.bigint();
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result after ${timeoutSecs} s (stalled transfer)`)), timeoutSecs * 1000);
  });
  const bytes = await Promise.race([fn(), timeout]).finally(() => clearTimeout(timer));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  if (bytes !== size) throw new Error(`moved ${bytes} bytes, expected ${size}`);
  return { mbps: size / MB / secs, secs };
}

/**
 * Starts the test servers that are down with the project's scripts:
 * `servers` is [{ script, port }]; a server already listening on its port
 * (started by another checkout, say) is used as it is. Each script runs
 * under the lock scripts/servers/up.sh takes, so a test run starting the
 * same servers at the same time does not race it. Throws an error naming
 * the server and how to start it by hand when a script fails.
 */
export async function ensureServers(servers) {
  for (const { script, port } of servers) {
    if (await portOpen(port)) continue;
    const scriptPath = path.join(root, 'scripts/servers', script);
    // lib.sh knows where the servers keep their state (and so the lock file)
    const locked = `source "${path.join(root, 'scripts/servers/lib.sh')}" && flock -o "$SERVERS_DIR/.lock" bash "$1"`;
    const r = spawnSync('bash', ['-c', locked, 'ensure-servers', scriptPath], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0 || !(await portOpen(port))) {
      throw new Error(
        `the test server of scripts/servers/${script} (127.0.0.1:${port}) could not be started` +
          `${r.status !== 0 ? ` (exit ${r.status ?? r.signal})` : ''}: see the messages above, or start the servers with \`bash scripts/servers/up.sh\``,
      );
    }
  }
}

/**
 * The lines this benchmark prints that name an aim (its figures, each with
 * its aim), kept for its results file: docs/performance.md is generated
 * from them (scripts/bench-table.mjs), whatever the benchmark.
 */
const figureLines = [];
const log = console.log.bind(console);
console.log = (...args) => {
  log(...args);
  for (const line of args.map(String).join(' ').split('\n')) if (/\baims?\b/i.test(line)) figureLines.push(line.trim());
};

/** The command that ran this benchmark, with the BENCH_* and FERRY_BENCH_* settings it was given. */
function commandLine() {
  const env = Object.entries(process.env)
    .filter(([k]) => /^(FERRY_)?BENCH_/.test(k) && k !== 'FERRY_BENCH_DIR' && k !== 'FERRY_BENCH_NO_BUILD')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`);
  const script = path.relative(root, process.argv[1] ?? '');
  return [...env, 'node', script, ...process.argv.slice(2)].join(' ');
}

/** Results written by this process: written again at its exit with the figure lines printed after writeResults(). */
const written = new Map();
let rewriteAtExit = false;

function writeResultsFile(name, data) {
  mkdirSync(path.join(benchDir, 'results'), { recursive: true });
  writeFileSync(path.join(benchDir, 'results', `${name}.json`), JSON.stringify(data, null, 2) + '\n');
}

/**
 * Writes bench/results/<name>.json: `data`, the time, the load average, the
 * command and the lines printed that name an aim (`figures`, completed at
 * the process's exit with those printed after this call).
 */
export function writeResults(name, data) {
  const full = {
    ...data,
    at: new Date().toISOString(),
    command: commandLine(),
    loadavg_at_end: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
  written.set(name, full);
  writeResultsFile(name, { ...full, figures: [...figureLines] });
  if (!rewriteAtExit) {
    rewriteAtExit = true;
    process.on('exit', (code) => {
      if (code !== 0) return;
      for (const [n, d] of written) writeResultsFile(n, { ...d, figures: [...figureLines] });
    });
  }
}

/** The TypeScript loader tap uses, for benchmarks that import plugin sources (exports condition "ferry-src"). */
export const tsLoader = path.join(root, 'node_modules/@tapjs/typescript/dist/esm/import.mjs');
export const tsArgs = [`--import=${tsLoader}`, '--conditions=ferry-src', '--no-warnings'];
export const tsEnv = { TS_NODE_TRANSPILE_ONLY: '1' };

/** Re-runs the calling script under the TypeScript loader unless it already runs under it (then returns). */
export function reexecWithTypeScript(scriptUrl) {
  if (process.execArgv.includes('--conditions=ferry-src')) return;
  const r = spawnSync(process.execPath, [...tsArgs, fileURLToPath(scriptUrl), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, ...tsEnv },
  });
  process.exit(r.status ?? 1);
}

/**
 * A scratch directory (under scratchBase(needMb)) and the list of child
 * processes a benchmark starts: when the process exits (or gets SIGINT or
 * SIGTERM), or when `cleanup()` is called, the children still running are
 * killed and the directory removed. A child spawned with `detached: true` and
 * marked `detachedGroup = true` is killed with its whole process group (a
 * server that forks workers).
 */
export function scratchWorkspace(needMb, prefix) {
  const dir = mkdtempSync(path.join(scratchBase(needMb), prefix));
  const children = [];
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    for (const c of children) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      // a child started detached leads its own process group: the whole group goes (Apache's
      // workers outlive a killed parent otherwise)
      if (c.spawnargs && c.pid && c.detachedGroup) {
        try {
          process.kill(-c.pid, 'SIGKILL');
          continue;
        } catch {
          // the group is gone already: kill the child itself
        }
      }
      c.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
  return { dir, children, cleanup };
}

/**
 * Runs a benchmark's main(): exits 0 when it resolves, 1 (the error printed
 * under `[tag]`) when it fails; `cleanup` (scratch files, child processes)
 * runs either way.
 */
export function runBench(tag, main, cleanup) {
  main().then(
    () => {
      cleanup();
      process.exit(0);
    },
    (err) => {
      console.error(`[${tag}] failed:`, err);
      cleanup();
      process.exit(1);
    },
  );
}

/**
 * Starts a bare baseline server (a script of bench/lib that reads its
 * options as JSON on stdin and prints `{"port": N}` once it listens); it is
 * pushed to `children` so the bench's cleanup stops it.
 */
export async function startBareServer(script, options, children) {
  const proc = spawn(process.execPath, [path.join(root, 'bench/lib', script)], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(proc);
  proc.stdin.end(JSON.stringify(options));
  let out = '';
  for await (const d of proc.stdout) {
    out += d;
    if (out.includes('\n')) break;
  }
  return { url: `http://127.0.0.1:${JSON.parse(out).port}`, proc };
}

/** Stops a child process: SIGTERM, then SIGKILL if it has not exited within 5 s. */
export async function stopProc(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
}

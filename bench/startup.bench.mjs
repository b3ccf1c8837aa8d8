#!/usr/bin/env node
// Start-up cost of the plugins a configuration loads, with a real `ferry
// serve` process (compiled CLI, through core/bin/ferry as `npm start` runs it):
//
//   node bench/startup.bench.mjs        (or: npm run bench startup)
//
//   local    fs-local + actions-builtin only (the shipped default before every
//            bundled plugin was on)
//   bundled  the plugin list of config/default.yaml: every bundled filesystem
//            plugin (local, crypt, S3, GCS, Azure, SFTP, HTTP) and the built-in
//            actions; the remote ones must not load their SDK before use
//
//   start     process start -> GET /healthz answers 200 (polled every 5 ms)
//   start CPU CPU time (user + system) the server used until then: less
//             sensitive than the wall time to other work on the machine
//   idle RSS  resident memory BENCH_IDLE_MS after /healthz first answered
//
// Each side gets its own data directory (SQLite), started once unmeasured
// first (migrations, first admin, file cache), then BENCH_ROUNDS measured
// starts alternating local, bundled / bundled, local. The best (lowest) of
// each side is kept, and the median is printed too. Aim: bundled no more than
// 1.10x local on both start time and idle RSS (on a busy machine the start
// CPU ratio is the steadier figure).
// BENCH_EAGER=1 adds a third side, eager: the bundled list with every remote
// plugin's SDK half (@ferry/fs-*/lib) imported before the server starts, as
// the plugins loaded before their SDK became lazy (what lazy loading saves).
// Env: BENCH_ROUNDS (default 6), BENCH_IDLE_MS (default 1000),
// FERRY_BENCH_DIR (scratch directory), FERRY_BENCH_NO_BUILD=1 (use core/dist
// as it is). Writes bench/results/startup.json.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import { cpuSecondsOf, envNumber, freePort, root, rssOf, scratchWorkspace, writeResults } from './lib/common.mjs';
import { buildFerry, launcherNodeOptions, writeFerryConfig } from './lib/ferry-server.mjs';

const ROUNDS = envNumber('BENCH_ROUNDS', 6);
const IDLE_MS = envNumber('BENCH_IDLE_MS', 1000);
const AIM = 1.1;

const { dir: scratch, children, cleanup } = scratchWorkspace(256, 'ferry-bench-startup-');

function log(...a) {
  console.log('[startup]', ...a);
}

/** The plugin names config/default.yaml loads. */
function shippedPlugins() {
  const cfg = YAML.parse(readFileSync(path.join(root, 'config/default.yaml'), 'utf8'));
  return cfg.plugins.map((p) => p.name);
}

const SIDES = {
  local: ['@ferry/fs-local', '@ferry/actions-builtin'],
  bundled: shippedPlugins(),
};
const REMOTE = ['fs-s3', 'fs-gcs', 'fs-azblob', 'fs-sftp', 'fs-http'];
if (process.env.BENCH_EAGER === '1') SIDES.eager = SIDES.bundled;

/** Node options of a side: eager preloads the SDK half of every remote plugin (compiled). */
function nodeOptions(name) {
  if (name !== 'eager') return {};
  const preload = path.join(scratch, 'eager-preload.mjs');
  writeFileSync(
    preload,
    REMOTE.map((p) => `await import(${JSON.stringify(pathToFileURL(path.join(root, 'plugins', p, 'dist/src/lib.js')).href)});`).join('\n') + '\n',
  );
  return { FERRY_NODE_OPTIONS: [...launcherNodeOptions(), `--import=${pathToFileURL(preload).href}`].join(' ') };
}

/** Writes the configuration of one side: its own data directory and port; `plugins` listed explicitly. */
function writeConfig(name, plugins, port) {
  const dir = path.join(scratch, name);
  const file = writeFerryConfig(dir, { port, plugins: plugins.map((p) => ({ name: p })) });
  return { dir, file, port, log: path.join(dir, 'ferry.log') };
}

async function healthy(url) {
  try {
    const r = await fetch(url);
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Stops a server with SIGTERM and waits for its exit. */
async function stop(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (proc.exitCode === null && proc.signalCode === null) {
    proc.kill('SIGKILL');
    await exited;
  }
}

/**
 * One start of a side: ms from spawn to the first 200 of /healthz, the RSS
 * IDLE_MS later, and the plugins the server registered (from its log).
 */
async function startOnce(side) {
  const before = (() => {
    try {
      return readFileSync(side.log, 'utf8').length;
    } catch {
      return 0;
    }
  })();
  const url = `http://127.0.0.1:${side.port}/healthz`;
  const t0 = performance.now();
  const proc = spawn(path.join(root, 'core/bin/ferry'), ['serve', '--config', side.file], {
    cwd: side.dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...side.env },
  });
  children.push(proc);
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  try {
    for (;;) {
      if (await healthy(url)) break;
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`ferry exited (${proc.exitCode ?? proc.signalCode}): ${err}`);
      if (performance.now() - t0 > 120_000) throw new Error(`/healthz did not answer within 120 s: ${err}`);
      await sleep(5);
    }
    const startMs = performance.now() - t0;
    const startCpuMs = cpuSecondsOf(proc.pid) * 1000;
    await sleep(IDLE_MS);
    const rssMb = rssOf(proc.pid);
    const hwmMb = rssOf(proc.pid, 'VmHWM');
    const text = readFileSync(side.log, 'utf8').slice(before);
    const registered = [...text.matchAll(/"plugin":"([^"]+)"[^\n]*"msg":"plugin registered"/g)].map((m) => m[1]);
    return { startMs, startCpuMs, rssMb, hwmMb, registered };
  } finally {
    await stop(proc);
  }
}

const best = (xs) => Math.min(...xs);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

try {
  buildFerry(log);
  const sides = {};
  for (const [name, plugins] of Object.entries(SIDES)) sides[name] = { name, plugins, env: nodeOptions(name), ...writeConfig(name, plugins, await freePort()) };

  log(`warm-up starts (migrations, first admin): ${Object.keys(sides).join(', ')}`);
  for (const s of Object.values(sides)) {
    const r = await startOnce(s);
    const missing = s.plugins.filter((p) => !r.registered.includes(p));
    if (missing.length) throw new Error(`${s.name}: plugins not registered: ${missing.join(', ')}`);
    log(`${s.name}: ${r.registered.length} plugins registered (${r.registered.join(', ')})`);
  }

  const runs = Object.fromEntries(Object.keys(SIDES).map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.keys(SIDES) : Object.keys(SIDES).reverse();
    for (const name of order) {
      const r = await startOnce(sides[name]);
      runs[name].push(r);
      log(
        `round ${round + 1}/${ROUNDS} ${name.padEnd(7)} start ${r.startMs.toFixed(0)} ms (CPU ${r.startCpuMs.toFixed(0)} ms), idle RSS ${r.rssMb.toFixed(1)} MB (peak ${r.hwmMb.toFixed(1)} MB)`,
      );
    }
  }

  const summary = {};
  for (const [name, rs] of Object.entries(runs)) {
    summary[name] = {
      plugins: SIDES[name],
      start_ms: { best: best(rs.map((r) => r.startMs)), median: median(rs.map((r) => r.startMs)) },
      start_cpu_ms: { best: best(rs.map((r) => r.startCpuMs)), median: median(rs.map((r) => r.startCpuMs)) },
      idle_rss_mb: { best: best(rs.map((r) => r.rssMb)), median: median(rs.map((r) => r.rssMb)) },
      peak_rss_mb: { best: best(rs.map((r) => r.hwmMb)), median: median(rs.map((r) => r.hwmMb)) },
    };
  }
  const ratiosOf = (side) => {
    const ratio = (k, stat) => summary[side][k][stat] / summary.local[k][stat];
    return {
      start: { best: ratio('start_ms', 'best'), median: ratio('start_ms', 'median') },
      start_cpu: { best: ratio('start_cpu_ms', 'best'), median: ratio('start_cpu_ms', 'median') },
      idle_rss: { best: ratio('idle_rss_mb', 'best'), median: ratio('idle_rss_mb', 'median') },
      peak_rss: { best: ratio('peak_rss_mb', 'best'), median: ratio('peak_rss_mb', 'median') },
    };
  };
  const ratios = ratiosOf('bundled');

  console.log('');
  console.log(`start-up and idle memory, ${ROUNDS} rounds each, best (median); idle RSS ${IDLE_MS} ms after /healthz`);
  for (const name of Object.keys(SIDES)) {
    const s = summary[name];
    console.log(
      `  ${name.padEnd(8)} ${String(SIDES[name].length).padStart(2)} plugins  start ${s.start_ms.best.toFixed(0)} ms (${s.start_ms.median.toFixed(0)})` +
        `  start CPU ${s.start_cpu_ms.best.toFixed(0)} ms (${s.start_cpu_ms.median.toFixed(0)})` +
        `  idle RSS ${s.idle_rss_mb.best.toFixed(1)} MB (${s.idle_rss_mb.median.toFixed(1)})  peak RSS ${s.peak_rss_mb.best.toFixed(1)} MB (${s.peak_rss_mb.median.toFixed(1)})`,
    );
  }
  const verdict = (r) => (r <= AIM ? `ok (aim <= ${AIM}x)` : `over the ${AIM}x aim`);
  console.log(`  bundled / local: start ${ratios.start.best.toFixed(3)}x (${ratios.start.median.toFixed(3)}x) ${verdict(ratios.start.best)}`);
  console.log(`                   start CPU ${ratios.start_cpu.best.toFixed(3)}x (${ratios.start_cpu.median.toFixed(3)}x) ${verdict(ratios.start_cpu.best)}`);
  console.log(`                   idle RSS ${ratios.idle_rss.best.toFixed(3)}x (${ratios.idle_rss.median.toFixed(3)}x) ${verdict(ratios.idle_rss.best)}`);
  console.log(`                   peak RSS ${ratios.peak_rss.best.toFixed(3)}x (${ratios.peak_rss.median.toFixed(3)}x)`);
  const eager = SIDES.eager ? ratiosOf('eager') : undefined;
  if (eager) {
    console.log(
      `  eager / local:   start ${eager.start.best.toFixed(3)}x (${eager.start.median.toFixed(3)}x), start CPU ${eager.start_cpu.best.toFixed(3)}x (${eager.start_cpu.median.toFixed(3)}x), idle RSS ${eager.idle_rss.best.toFixed(3)}x (${eager.idle_rss.median.toFixed(3)}x), peak RSS ${eager.peak_rss.best.toFixed(3)}x (${eager.peak_rss.median.toFixed(3)}x)`,
    );
  }

  writeResults('startup', { rounds: ROUNDS, idle_ms: IDLE_MS, aim: AIM, summary, ratios, ...(eager ? { eager_ratios: eager } : {}), runs });
} finally {
  cleanup();
}

#!/usr/bin/env node
// ICAP scanning through the action (event action 17, plugins/action-icap)
// against a minimal ICAP client sending the same file to the same c-icap
// service, same disk, same run:
//
//   node bench/action-icap.bench.mjs        (or: node bench/run.mjs action-icap)
//
// Needs c-icap (scripts/servers/start-icap.sh; started here when it is not
// up): service avscan (virus_scan over a private clamd, no size limit,
// 204 allowed). Phases, each scanning the same clean BENCH_MB file (default
// 256), alternating for BENCH_ROUNDS rounds:
//   direct   a child node process: fs.createReadStream (64 KiB reads) ->
//            one RESPMOD over a raw socket (Allow: 204, no preview, chunks
//            as read) -> the 204 answer; nothing else loaded
//   action   a real server (core/bin/ferry serve, as `npm start` runs it:
//            SQLite, @ferry/fs-local, @ferry/action-icap) with a user whose
//            home holds the file, a type 17 action (paths /big.bin,
//            block_action 2) and an on-demand rule: POST
//            /api/v2/eventrules/run/<rule>, timed until the server logs the
//            scan's outcome: user's Fs -> preview + 100 Continue -> chunks ->
//            204, what a scan costs inside the server
// Prints per phase MB/s (wall clock), MB per CPU-second of the process doing
// the client's work, the process's RSS before the run, its peak while
// scanning (sampled every 20 ms) and its high-water mark; then the ratio
// action / direct (aim >= 0.8x) and the server's RSS growth while scanning
// (aim: flat, a few MB, whatever the file size).
// Env: BENCH_MB (default 256), BENCH_ROUNDS (default 3, best kept),
// FERRY_BENCH_DIR (scratch directory; default /dev/shm when it has room),
// FERRY_BENCH_NO_BUILD=1 (skip tsc -b of the server's packages).
// Writes bench/results/action-icap.json.
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdirSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf, makeFile, portOpen, root, rssOf, scratchWorkspace, withPeakRss, writeResults } from './lib/common.mjs';
import { startFerry } from './lib/ferry-server.mjs';

const SIZE_MB = Number(process.env.BENCH_MB ?? 256);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PORT = 11344;
const SERVICE = `icap://127.0.0.1:${PORT}/avscan`;
const self = fileURLToPath(import.meta.url);

/** The minimal client: one RESPMOD, the file as chunks in the order read, then the answer's head. */
async function direct(file) {
  const size = statSync(file).size;
  const start = rssOf(process.pid);
  const cpu0 = process.cpuUsage();
  const { value, peakRssMb } = await withPeakRss(async () => {
    const t0 = performance.now();
    const sock = net.connect(PORT, '127.0.0.1');
    await new Promise((res, rej) => sock.once('connect', res).once('error', rej));
    const reqHdr = 'GET /big.bin HTTP/1.1\r\nHost: bench\r\n\r\n';
    const resHdr = `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`;
    let answer = '';
    const answered = new Promise((res, rej) => {
      sock.on('data', (d) => {
        answer += d.toString('latin1');
        if (answer.includes('\r\n\r\n')) res(answer.split('\r\n')[0]);
      });
      sock.once('error', rej);
    });
    sock.write(
      `RESPMOD ${SERVICE} ICAP/1.0\r\nHost: 127.0.0.1:${PORT}\r\nAllow: 204\r\nEncapsulated: req-hdr=0, res-hdr=${reqHdr.length}, res-body=${reqHdr.length + resHdr.length}\r\n\r\n${reqHdr}${resHdr}`,
    );
    for await (const chunk of createReadStream(file)) {
      sock.write(`${chunk.length.toString(16)}\r\n`);
      sock.write(chunk);
      if (!sock.write('\r\n')) await new Promise((res) => sock.once('drain', res));
    }
    sock.write('0\r\n\r\n');
    const status = await answered;
    sock.destroy();
    return { ms: performance.now() - t0, status };
  });
  const cpu = process.cpuUsage(cpu0);
  if (!/^ICAP\/1\.0 204/.test(value.status)) throw new Error(`direct: ${value.status}`);
  return { ms: value.ms, cpuSecs: (cpu.user + cpu.system) / 1e6, peakRssMb, startRssMb: start };
}

if (process.argv[2] === 'direct') {
  const r = await direct(process.argv[3]);
  console.log(JSON.stringify({ ...r, hwmMb: rssOf(process.pid, 'VmHWM') }));
  process.exit(0);
}

if (process.env.FERRY_BENCH_NO_BUILD !== '1') {
  const b = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'plugins/fs-local', 'plugins/action-icap'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (b.status !== 0) {
    console.error('build failed (tsc -b plugins/fs-local plugins/action-icap)');
    process.exit(1);
  }
}
if (!(await portOpen(PORT))) {
  const s = spawnSync('bash', [path.join(root, 'scripts/servers/start-icap.sh')], { stdio: 'inherit' });
  if (s.status !== 0) throw new Error('c-icap did not start (scripts/servers/start-icap.sh)');
}

const ws = scratchWorkspace(SIZE_MB + 64, 'ferry-action-icap-');
const dir = ws.dir;
mkdirSync(path.join(dir, 'home'), { recursive: true });
const file = path.join(dir, 'home/big.bin');
makeFile(file, SIZE_MB);

const server = await startFerry({
  dir: path.join(dir, 'server'),
  plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/action-icap' }],
  children: ws.children,
});
const logFile = path.join(dir, 'server', 'ferry.log');
const api = async (method, url, body) => {
  const r = await fetch(`${server.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
};
await server.createUser({ username: 'bench', password: 'bench-password-1', status: 1, home_dir: path.join(dir, 'home'), filesystem: { provider: 0 } });
await api('POST', '/api/v2/eventactions', {
  name: 'scan',
  type: 17,
  options: { icap_config: { endpoint: SERVICE, timeout: 120, paths: ['/big.bin'], block_action: 2, failure_policy: 1 } },
});
await api('POST', '/api/v2/eventrules', {
  name: 'scan',
  status: 1,
  trigger: 6,
  conditions: { options: { names: [{ pattern: 'bench' }] } },
  actions: [{ name: 'scan', order: 1 }],
});
const scans = () => readFileSync(logFile, 'utf8').match(/"msg":"icap scan: [a-z]+"/g) ?? [];

async function action() {
  await sleep(300);
  const before = scans().length;
  const startRssMb = rssOf(server.proc.pid);
  const cpu0 = cpuSecondsOf(server.proc.pid);
  const { value: ms, peakRssMb } = await withPeakRss(async () => {
    const t0 = performance.now();
    await api('POST', '/api/v2/eventrules/run/scan');
    while (scans().length === before) {
      if (server.proc.exitCode !== null) throw new Error('the server exited');
      if (performance.now() - t0 > 600_000) throw new Error('no outcome after 10 minutes');
      await sleep(5);
    }
    return performance.now() - t0;
  }, server.proc.pid);
  const outcome = scans().at(-1);
  if (!outcome?.includes('clean')) throw new Error(`action: ${outcome}`);
  return { ms, cpuSecs: cpuSecondsOf(server.proc.pid) - cpu0, peakRssMb, startRssMb, hwmMb: rssOf(server.proc.pid, 'VmHWM') };
}

const best = {};
const keep = (phase, res) => {
  const mbps = SIZE_MB / (res.ms / 1000);
  const cpuMbps = SIZE_MB / res.cpuSecs;
  const growth = res.peakRssMb - res.startRssMb;
  const prev = best[phase];
  if (!prev || mbps > prev.mbps) best[phase] = { ...res, mbps };
  best[phase].cpuMbps = Math.max(cpuMbps, prev?.cpuMbps ?? 0);
  best[phase].peakRssMb = Math.max(res.peakRssMb, prev?.peakRssMb ?? 0);
  best[phase].growthMb = Math.max(growth, prev?.growthMb ?? 0);
};
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const r = spawnSync(process.execPath, [self, 'direct', file], { cwd: root, encoding: 'utf8' });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    if (r.status !== 0 || !line.startsWith('{')) throw new Error(`direct failed:\n${r.stderr || r.stdout}`);
    keep('direct', JSON.parse(line));
    keep('action', await action());
  }
} finally {
  await server.stop();
  ws.cleanup();
}

const fmt = (n, w = 8) => n.toFixed(1).padStart(w);
console.log(
  `action-icap: scan a clean ${SIZE_MB} MB file with c-icap avscan (clamd), best of ${ROUNDS} round(s), node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'}`,
);
console.log('phase        MB/s  MB per CPU-s   RSS before MB   peak RSS while scanning MB   growth MB   high-water mark MB');
console.log('(direct: a node process with a raw-socket RESPMOD client; action: the ferry serve process running the rule)');
for (const p of ['direct', 'action']) {
  const b = best[p];
  console.log(
    `${p.padEnd(8)} ${fmt(b.mbps)} ${fmt(b.cpuMbps, 13)} ${fmt(b.startRssMb, 15)} ${fmt(b.peakRssMb, 28)} ${fmt(b.growthMb, 11)} ${fmt(b.hwmMb, 20)}`,
  );
}
const ratio = best.action.mbps / best.direct.mbps;
console.log(`ratio action/direct ${ratio.toFixed(2)}x   (aim >= 0.8x)`);
console.log(`server RSS growth while scanning ${best.action.growthMb.toFixed(1)} MB for a ${SIZE_MB} MB file   (aim: flat)`);
writeResults('action-icap', { sizeMb: SIZE_MB, rounds: ROUNDS, ratio, phases: best });

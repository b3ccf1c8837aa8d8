#!/usr/bin/env node
// PGP encryption through the filesystem action (event action 9, sub-type 7,
// plugins/action-fs) against openpgp called directly on the same file, same
// disk, same run:
//
//   node bench/action-pgp.bench.mjs        (or: node bench/run.mjs action-pgp)
//
// Phases, each encrypting the same BENCH_MB file (default 1024) to one
// public key (curve25519), binary output, alternating for BENCH_ROUNDS rounds:
//   direct      a child node process: fs.createReadStream (default 64 KiB
//               reads) -> openpgp createMessage/encrypt (Web streams) ->
//               fs.createWriteStream; nothing else loaded
//   direct-1m   the same reading 1 MiB chunks (openpgp's cost is partly per
//               chunk: its fastest case)
//   action      a real server (core/bin/ferry serve, as `npm start` runs it:
//               SQLite, @ferry/fs-local, @ferry/action-fs) with a user whose
//               home holds the file, a type 9 action (sub-type 7, encrypt)
//               and an on-demand rule: POST /api/v2/eventrules/run/<rule>,
//               timed until the target appears (written to a temporary file,
//               renamed when complete): user's Fs -> openpgp -> user's Fs
//   action-decrypt  the same server then decrypting the action's output with
//               the private key (a second rule), checked to give back BENCH_MB
// The server is started afresh for each round (what one run costs, not what
// earlier runs left in its heap). The server's packages are compiled first
// (tsc -b plugins/fs-local plugins/action-fs; FERRY_BENCH_NO_BUILD=1 skips it).
// Prints per phase MB/s (wall clock), MB per CPU-second of the process doing
// the work (steadier on a shared machine), the process's RSS before the run,
// its peak while running (sampled every 20 ms) and its high-water mark since
// start; then the ratios action / direct (aim >= 0.8x) and the server's peak
// RSS (aim: under 150 MB).
// Env: BENCH_MB (default 1024), BENCH_ROUNDS (default 2, best kept),
// FERRY_BENCH_DIR (scratch directory; default /dev/shm when it has room).
// Writes bench/results/action-pgp.json.
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf, MB, makeFile, root, rssOf, scratchWorkspace, withPeakRss, writeResults } from './lib/common.mjs';
import { startFerry } from './lib/ferry-server.mjs';

const SIZE_MB = Number(process.env.BENCH_MB ?? 1024);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const self = fileURLToPath(import.meta.url);

/** Compiles what the server loads (core, fs-local, action-fs) unless FERRY_BENCH_NO_BUILD=1. */
function build() {
  if (process.env.FERRY_BENCH_NO_BUILD === '1') return;
  const b = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-b', 'plugins/fs-local', 'plugins/action-fs'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (b.status !== 0) {
    console.error('build failed (tsc -b plugins/fs-local plugins/action-fs)');
    process.exit(1);
  }
}

async function direct(dir, chunk) {
  const openpgp = await import('openpgp');
  const key = await openpgp.readKey({ armoredKey: readFileSync(path.join(dir, 'public.asc'), 'utf8') });
  const out = path.join(dir, 'direct.pgp');
  const start = rssOf(process.pid);
  const cpu0 = process.cpuUsage();
  const { value: ms, peakRssMb } = await withPeakRss(async () => {
    const t0 = performance.now();
    const message = await openpgp.createMessage({
      binary: Readable.toWeb(createReadStream(path.join(dir, 'home/big.bin'), chunk ? { highWaterMark: chunk } : {})),
    });
    const enc = await openpgp.encrypt({ message, encryptionKeys: key, format: 'binary' });
    await pipeline(Readable.fromWeb(enc), createWriteStream(out));
    return performance.now() - t0;
  });
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuSecs: (cpu.user + cpu.system) / 1e6, peakRssMb, startRssMb: start, outBytes: statSync(out).size };
}

/**
 * A real server (core/bin/ferry serve, as `npm start` runs it) with a user
 * whose home holds the file, a type 9 action (PGP encrypt) and an on-demand
 * rule running it; returns run(round) -> { ms, peakRssMb, startRssMb, hwmMb, outBytes }.
 */
async function actionServer(dir, children) {
  const server = await startFerry({ dir: path.join(dir, 'server'), plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/action-fs' }], children });
  const api = async (method, url, body) => {
    const r = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
  };
  await server.createUser({ username: 'bench', password: 'bench-password-1', status: 1, home_dir: path.join(dir, 'home'), filesystem: { provider: 0 } });
  const publicKey = readFileSync(path.join(dir, 'public.asc'), 'utf8');
  const privateKey = readFileSync(path.join(dir, 'private.asc'), 'utf8');
  const rules = {
    encrypt: { mode: 1, paths: [{ key: '/big.bin', value: '/action.pgp' }], public_keys: [publicKey] },
    decrypt: { mode: 2, paths: [{ key: '/action.pgp', value: '/action.out' }], private_key: { status: 'Plain', payload: privateKey } },
  };
  for (const [name, pgp] of Object.entries(rules)) {
    await api('POST', '/api/v2/eventactions', { name, type: 9, options: { fs_config: { type: 7, pgp } } });
    await api('POST', '/api/v2/eventrules', {
      name,
      status: 1,
      trigger: 6,
      conditions: { options: { names: [{ pattern: 'bench' }] } },
      actions: [{ name, order: 1 }],
    });
  }
  return {
    server,
    /** Runs the encrypt or decrypt rule once. */
    async run(name) {
      const out = path.join(dir, name === 'encrypt' ? 'home/action.pgp' : 'home/action.out');
      rmSync(out, { force: true });
      await sleep(500);
      const startRssMb = rssOf(server.proc.pid);
      const cpu0 = cpuSecondsOf(server.proc.pid);
      const { value: ms, peakRssMb } = await withPeakRss(async () => {
        const t0 = performance.now();
        await api('POST', `/api/v2/eventrules/run/${name}`);
        // the target is written to a temporary file and renamed when complete
        while (!existsSync(out)) {
          if (server.proc.exitCode !== null) throw new Error('the server exited');
          if (performance.now() - t0 > 600_000) throw new Error('no output after 10 minutes');
          await sleep(10);
        }
        return performance.now() - t0;
      }, server.proc.pid);
      return { ms, cpuSecs: cpuSecondsOf(server.proc.pid) - cpu0, peakRssMb, startRssMb, hwmMb: rssOf(server.proc.pid, 'VmHWM'), outBytes: statSync(out).size };
    },
  };
}

if (process.argv[2]?.startsWith('direct')) {
  const r = await direct(process.env.FERRY_BENCH_DIR_ACTIVE, process.argv[2] === 'direct-1m' ? MB : 0);
  console.log(JSON.stringify({ ...r, hwmMb: rssOf(process.pid, 'VmHWM') }));
  process.exit(0);
}

build();
const ws = scratchWorkspace(SIZE_MB * 3 + 64, 'ferry-action-pgp-');
const dir = ws.dir;
mkdirSync(path.join(dir, 'home'), { recursive: true });
mkdirSync(path.join(dir, 'data'), { recursive: true });
makeFile(path.join(dir, 'home/big.bin'), SIZE_MB);
{
  const openpgp = await import('openpgp');
  const { publicKey, privateKey } = await openpgp.generateKey({
    type: 'ecc',
    curve: 'curve25519Legacy',
    userIDs: [{ name: 'Bench', email: 'bench@example.com' }],
    format: 'armored',
  });
  writeFileSync(path.join(dir, 'public.asc'), publicKey);
  writeFileSync(path.join(dir, 'private.asc'), privateKey);
}

const phases = ['direct', 'direct-1m', 'action', 'action-decrypt'];
const best = {};
const keep = (phase, res) => {
  const mbps = SIZE_MB / (res.ms / 1000);
  const cpuMbps = SIZE_MB / res.cpuSecs;
  const peak = Math.max(res.peakRssMb, best[phase]?.peakRssMb ?? 0);
  const bestCpu = Math.max(cpuMbps, best[phase]?.cpuMbps ?? 0);
  if (!best[phase] || mbps > best[phase].mbps) best[phase] = { ...res, mbps };
  best[phase].peakRssMb = peak;
  best[phase].cpuMbps = bestCpu;
};
let bench;
try {
  for (let round = 1; round <= ROUNDS; round++) {
    // a fresh server each round: what one encryption costs, not what earlier runs left in its heap
    await bench?.server.stop();
    rmSync(path.join(dir, 'server'), { recursive: true, force: true });
    bench = await actionServer(dir, ws.children);
    for (const phase of ['direct', 'direct-1m']) {
      const r = spawnSync(process.execPath, [self, phase], { cwd: root, env: { ...process.env, FERRY_BENCH_DIR_ACTIVE: dir }, encoding: 'utf8' });
      const line = r.stdout.trim().split('\n').pop() ?? '';
      if (r.status !== 0 || !line.startsWith('{')) throw new Error(`${phase} failed:\n${r.stderr || r.stdout}`);
      keep(phase, JSON.parse(line));
      rmSync(path.join(dir, 'direct.pgp'), { force: true });
    }
    keep('action', await bench.run('encrypt'));
    const dec = await bench.run('decrypt');
    if (dec.outBytes !== SIZE_MB * MB) throw new Error(`decrypt: ${dec.outBytes} bytes, expected ${SIZE_MB * MB}`);
    keep('action-decrypt', dec);
  }
} finally {
  await bench?.server.stop();
  ws.cleanup();
}

const fmt = (n, w = 8) => n.toFixed(1).padStart(w);
console.log(`action-pgp: encrypt ${SIZE_MB} MB to one public key, best of ${ROUNDS} round(s), node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'}`);
console.log('phase          MB/s  MB per CPU-s   RSS before MB   peak RSS while encrypting MB   high-water mark MB   output bytes');
console.log('(direct: a node process calling openpgp on a default fs.createReadStream; direct-1m: reading 1 MiB chunks; action: the ferry serve process)');
for (const p of phases) {
  const b = best[p];
  console.log(`${p.padEnd(12)} ${fmt(b.mbps)} ${fmt(b.cpuMbps, 13)} ${fmt(b.startRssMb, 15)} ${fmt(b.peakRssMb, 30)} ${fmt(b.hwmMb, 20)}   ${b.outBytes}`);
}
const ratio = best.action.mbps / best.direct.mbps;
console.log(`ratio action/direct ${ratio.toFixed(2)}x   (aim >= 0.8x); action/direct-1m ${(best.action.mbps / best['direct-1m'].mbps).toFixed(2)}x`);
// CPU seconds spent by each process on the encryption: steadier than wall time on a shared machine
const cpuRatio = best.action.cpuMbps / best.direct.cpuMbps;
console.log(`ratio per CPU-second action/direct ${cpuRatio.toFixed(2)}x; action/direct-1m ${(best.action.cpuMbps / best['direct-1m'].cpuMbps).toFixed(2)}x`);
console.log(
  `action peak RSS while encrypting ${best.action.peakRssMb.toFixed(1)} MB, decrypting ${best['action-decrypt'].peakRssMb.toFixed(1)} MB   (aim < 150 MB)`,
);
writeResults('action-pgp', { sizeMb: SIZE_MB, rounds: ROUNDS, best, ratio, cpuRatio });

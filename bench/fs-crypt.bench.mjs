#!/usr/bin/env node
// fs-crypt throughput: @ferry/fs-crypt (CryptFs) against raw AES-256-GCM
// streaming with node:crypto, same disk, same run. Run from the repository root:
//
//   node bench/fs-crypt.bench.mjs
//
// Options (env): BENCH_MB (default 1024), BENCH_ROUNDS (default 2, best round
// kept), FERRY_BENCH_DIR (scratch directory, default: the OS temp directory).
// Every phase runs in its own child process so its peak RSS is its own.
// Phases, each moving BENCH_MB of pseudo-random bytes:
//   gcm-write    source -> one createCipheriv('aes-256-gcm') stream -> fs.createWriteStream
//   crypt-write  source -> CryptFs.openWrite (64 KiB GCM records, temp file + rename)
//   gcm-read     fs.createReadStream -> one createDecipheriv stream (tag checked at the end) -> sink
//   crypt-read   CryptFs.openRead (each record authenticated before its bytes go out) -> sink
// Prints MB/s, the ratio crypt / gcm per direction (aim: >= 0.8x) and peak RSS per phase.
import { spawnSync } from 'node:child_process';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

const MB = 1024 * 1024;
const SIZE_MB = Number(process.env.BENCH_MB ?? 1024);
const SIZE = SIZE_MB * MB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PASSPHRASE = 'benchmark passphrase';
const self = fileURLToPath(import.meta.url);

/** BENCH_MB of pseudo-random bytes (a random 1 MB block, repeated): costs nothing to produce. */
function source() {
  const block = randomBytes(MB);
  let left = SIZE;
  return new Readable({
    highWaterMark: MB,
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(left, MB);
      left -= n;
      this.push(n === MB ? block : block.subarray(0, n));
    },
  });
}

function sink() {
  const s = new Writable({
    highWaterMark: MB,
    write(chunk, _enc, cb) {
      s.bytes += chunk.length;
      cb();
    },
  });
  s.bytes = 0;
  return s;
}

async function cryptFs(dir) {
  const { cryptFsProvider } = await import('@ferry/fs-crypt');
  return cryptFsProvider.create({ passphrase: PASSPHRASE }, { username: 'bench', root: path.join(dir, 'home'), dataDir: path.join(dir, 'data') });
}

async function runPhase(phase, dir) {
  const gcmFile = path.join(dir, 'gcm.bin');
  const key = Buffer.alloc(32, 7);
  const iv = Buffer.alloc(12, 9);
  // Load modules and derive keys before the clock starts.
  const fs = phase.startsWith('crypt') ? await cryptFs(dir) : undefined;
  if (fs) await fs.keys.newFile();
  const startRss = process.memoryUsage().rss;
  const t0 = performance.now();
  let bytes = SIZE;
  if (phase === 'gcm-write') {
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    await pipeline(source(), cipher, createWriteStream(gcmFile));
    writeFileSync(`${gcmFile}.tag`, cipher.getAuthTag());
  } else if (phase === 'gcm-read') {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(readFileSync(`${gcmFile}.tag`));
    const out = sink();
    await pipeline(createReadStream(gcmFile, { highWaterMark: MB }), decipher, out);
    bytes = out.bytes;
  } else if (phase === 'crypt-write') {
    await mkdir(path.join(dir, 'home'), { recursive: true });
    const handle = await fs.openWrite('/big.bin', { size: SIZE });
    const [, result] = await Promise.all([pipeline(source(), handle.stream), handle.done]);
    bytes = result.size;
  } else if (phase === 'crypt-read') {
    const out = sink();
    await pipeline(await fs.openRead('/big.bin'), out);
    bytes = out.bytes;
  } else throw new Error(`unknown phase ${phase}`);
  const ms = performance.now() - t0;
  await fs?.close();
  return { ms, bytes, startRss };
}

if (process.argv[2]) {
  const r = await runPhase(process.argv[2], process.env.FERRY_BENCH_DIR_ACTIVE);
  if (r.bytes !== SIZE) throw new Error(`${process.argv[2]}: moved ${r.bytes} bytes, expected ${SIZE}`);
  const rssMb = process.resourceUsage().maxRSS / 1024;
  console.log(JSON.stringify({ ms: r.ms, bytes: r.bytes, rssMb, growthMb: rssMb - r.startRss / MB }));
  process.exit(0);
}

const dir = mkdtempSync(path.join(process.env.FERRY_BENCH_DIR ?? os.tmpdir(), 'ferry-crypt-bench-'));
const tsHook = import.meta.resolve('@tapjs/typescript/import');
const phases = ['gcm-write', 'crypt-write', 'gcm-read', 'crypt-read'];
const best = {};
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const phase of phases) {
      const r = spawnSync(process.execPath, ['--conditions=ferry-src', '--import', tsHook, self, phase], {
        env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1', FERRY_BENCH_DIR_ACTIVE: dir },
        encoding: 'utf8',
      });
      const line = r.stdout.trim().split('\n').pop() ?? '';
      if (r.status !== 0 || !line.startsWith('{')) {
        console.error(`${phase} failed:\n${r.stderr || r.stdout}`);
        process.exit(1);
      }
      const res = JSON.parse(line);
      const mbps = SIZE_MB / (res.ms / 1000);
      if (!best[phase] || mbps > best[phase].mbps) best[phase] = { mbps, rssMb: res.rssMb, growthMb: res.growthMb };
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const fmt = (n, w = 7) => n.toFixed(1).padStart(w);
console.log(`fs-crypt ${SIZE_MB} MB, best of ${ROUNDS} round(s), node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'}`);
console.log('phase          MB/s   peak RSS MB   (of which during the transfer)');
for (const p of phases) console.log(`${p.padEnd(12)} ${fmt(best[p].mbps)} ${fmt(best[p].rssMb, 9)}   ${fmt(best[p].growthMb, 9)}`);
for (const d of ['write', 'read']) {
  console.log(`ratio ${d.padEnd(6)} crypt/gcm ${(best[`crypt-${d}`].mbps / best[`gcm-${d}`].mbps).toFixed(2)}x   (aim >= 0.8x)`);
}

#!/usr/bin/env node
// Cost of race-free path confinement per operation (docs/confinement.md):
// small-file operations through LocalFs (fs-local, compiled) against the same
// system calls made directly with node:fs/promises on resolved paths, with no
// confinement at all, measured in the same run, in the same process:
//
//   node bench/local-ops.bench.mjs        (or: node bench/run.mjs local-ops)
//
//   stat      stat of a file 1 and 6 directories deep
//   read      open + read 4 KiB + close
//   write     atomic upload of 4 KiB (temp file, then rename) vs writeFile + rename
//   list      a directory of 200 entries
//
// Each line prints operations per second for both and the ratio. Optional:
// FERRY_BENCH_BEFORE=<another Ferry checkout, built> adds a third column with
// that checkout's LocalFs (e.g. the commit before a change), so a change's
// cost is measured against its predecessor in the same run.
// Env: BENCH_OPS (default 3000 per measurement), BENCH_ROUNDS (default 3; best kept).
// Writes bench/results/local-ops.json.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, opendir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildFerry } from './lib/ferry-server.mjs';
import { root as repoRoot, writeResults } from './lib/common.mjs';

const OPS = Number(process.env.BENCH_OPS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

if (process.env.FERRY_BENCH_NO_BUILD !== '1') buildFerry((...a) => console.log('[local-ops]', ...a));
const { LocalFs } = await import(pathToFileURL(path.join(repoRoot, 'plugins/fs-local/dist/src/index.js')).href);
const before = process.env.FERRY_BENCH_BEFORE
  ? (await import(pathToFileURL(path.join(path.resolve(process.env.FERRY_BENCH_BEFORE), 'plugins/fs-local/dist/src/index.js')).href)).LocalFs
  : undefined;

// In memory when /dev/shm exists, so the disk does not decide the figures.
const base = path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `ferry-bench-local-ops-${process.pid}`);
const home = path.join(base, 'home');
const tmp = path.join(base, 'tmp');
const deep = 'a/b/c/d/e';
mkdirSync(path.join(home, deep), { recursive: true });
mkdirSync(path.join(home, 'many'), { recursive: true });
mkdirSync(tmp, { recursive: true });
const body = Buffer.alloc(4096, 7);
writeFileSync(path.join(home, 'f.bin'), body);
writeFileSync(path.join(home, deep, 'f.bin'), body);
for (let i = 0; i < 200; i++) writeFileSync(path.join(home, 'many', `e${i}.txt`), 'x');

async function rate(fn) {
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) await fn(i);
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    best = Math.max(best, OPS / secs);
  }
  return best;
}

async function drain(s) {
  for await (const _ of s);
}

function ferryOps(fs) {
  return {
    'stat depth 1': () => fs.stat('/f.bin'),
    'stat depth 6': () => fs.stat(`/${deep}/f.bin`),
    'read 4 KiB depth 1': async () => drain(await fs.openRead('/f.bin')),
    'read 4 KiB depth 6': async () => drain(await fs.openRead(`/${deep}/f.bin`)),
    'write 4 KiB depth 6': async (i) => {
      const h = await fs.openWrite(`/${deep}/w${i % 50}.bin`);
      h.stream.end(body);
      await h.done;
    },
    'list 200 entries': async () => {
      for await (const _ of fs.list('/many'));
    },
  };
}

const raw = {
  'stat depth 1': () => lstat(path.join(home, 'f.bin')),
  'stat depth 6': () => lstat(path.join(home, deep, 'f.bin')),
  'read 4 KiB depth 1': () => readFile(path.join(home, 'f.bin')),
  'read 4 KiB depth 6': () => readFile(path.join(home, deep, 'f.bin')),
  'write 4 KiB depth 6': async (i) => {
    const t = path.join(tmp, `raw-${i}.upload`);
    await writeFile(t, body);
    await rename(t, path.join(home, deep, `r${i % 50}.bin`));
  },
  'list 200 entries': async () => {
    const d = await opendir(path.join(home, 'many'));
    const names = [];
    for await (const e of d) names.push(e.name);
    await Promise.all(names.map((n) => lstat(path.join(home, 'many', n))));
  },
};

const results = {};
try {
  const ferry = ferryOps(new LocalFs({ root: home, tempDir: tmp }));
  const old = before ? ferryOps(new before({ root: home, tempDir: tmp })) : undefined;
  for (const name of Object.keys(raw)) {
    const r = await rate(raw[name]);
    const f = await rate(ferry[name]);
    const o = old ? await rate(old[name]) : undefined;
    results[name] = { raw_ops_s: Math.round(r), ferry_ops_s: Math.round(f), ratio: +(f / r).toFixed(2) };
    let line = `${name.padEnd(22)} direct ${Math.round(r).toString().padStart(7)} ops/s   ferry ${Math.round(f).toString().padStart(7)} ops/s   ${(f / r).toFixed(2)}x`;
    if (o !== undefined) {
      results[name].before_ops_s = Math.round(o);
      results[name].vs_before = +(f / o).toFixed(2);
      line += `   before ${Math.round(o).toString().padStart(7)} ops/s   now/before ${(f / o).toFixed(2)}x`;
    }
    console.log('[local-ops]', line);
  }
  writeResults('local-ops', { ops: OPS, rounds: ROUNDS, results });
} finally {
  rmSync(base, { recursive: true, force: true });
}

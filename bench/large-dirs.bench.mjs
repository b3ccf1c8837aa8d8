#!/usr/bin/env node
// Large directories on fs-local, through a real `ferry serve` process (compiled CLI) at its
// default configuration, against baselines measured in the same run:
//
//   node bench/large-dirs.bench.mjs        (or: npm run bench large-dirs)
//
//   listing   GET /api/v2/user/dirs?path=/many, a directory of 100,000 files, vs
//             `find DIR -mindepth 1 -maxdepth 1 -printf ...` (one lstat per entry, as the listing does):
//             time to the first byte, total time, and Ferry's resident memory (peak minus before),
//             also for a directory of a tenth of the files: a streamed listing's memory does not
//             grow with the directory
//   delete    DELETE /api/v2/user/dirs?path=/del, a directory of 100,000 empty files, vs
//             `rm -rf` of the same directory (made again for each)
//   streamzip POST /api/v2/user/streamzip ["/tree"], 10,000 small files in 100 directories, vs
//             `zip -r -q -1 - tree` (zip's fastest deflate level, as Ferry's level 1) into /dev/null
//
// Ratios are baseline time / Ferry time (1.0: as fast). Best of BENCH_ROUNDS (default 3).
// Aims: the listing streams (first byte well before the end, memory growth under 20 MB and no
// larger for 100,000 entries than for 10,000); delete >= 0.5x rm -rf; streamzip >= 0.5x zip -r;
// peak RSS < 150 MB.
// zip (Debian package zip) is needed for the zip baseline; without it that ratio is skipped.
// Env: BENCH_FILES (default 100000), BENCH_ZIP_FILES (default 10000), BENCH_ROUNDS,
// FERRY_BENCH_DIR (scratch directory), FERRY_BENCH_NO_BUILD=1, FERRY_BENCH_NODE_ARGS (node
// options of the Ferry process, e.g. --cpu-prof --cpu-prof-dir=DIR).
// Writes bench/results/large-dirs.json.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSecondsOf, rssOf, scratchWorkspace, withPeakRss, writeResults, runBench } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';

const FILES = Number(process.env.BENCH_FILES ?? 100_000);
const ZIP_FILES = Number(process.env.BENCH_ZIP_FILES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const NODE_ARGS = (process.env.FERRY_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const { dir: scratch, children, cleanup } = scratchWorkspace(512, 'ferry-bench-dirs-');

function log(...a) {
  console.log('[large-dirs]', ...a);
}

/** A directory of `n` empty files named f000000... */
function manyFiles(dir, n) {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) closeSync(openSync(path.join(dir, `f${String(i).padStart(6, '0')}.txt`), 'w'));
}

/** `n` small files (200 bytes to 4 KiB of text) in directories of 100. */
function smallTree(dir, n) {
  for (let i = 0; i < n; i++) {
    const sub = path.join(dir, `d${String(Math.floor(i / 100)).padStart(3, '0')}`);
    if (i % 100 === 0) mkdirSync(sub, { recursive: true });
    const fd = openSync(path.join(sub, `file-${i}.txt`), 'w');
    writeSync(fd, `line ${i} of a small file with some text to compress\n`.repeat(4 + (i % 70)));
    closeSync(fd);
  }
}

/** curl in the background; resolves to { bytes, firstByte, total } (seconds). */
function curlTimed(args, out = '/dev/null') {
  return new Promise((resolve, reject) => {
    const p = spawn('curl', ['-s', '-S', '--fail', '-o', out, '-w', '%{size_download} %{time_starttransfer} %{time_total}', ...args]);
    let o = '';
    let err = '';
    p.stdout.on('data', (d) => (o += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => {
      if (code !== 0) return reject(new Error(`curl: ${err}`));
      const [bytes, firstByte, total] = o.trim().split(' ').map(Number);
      resolve({ bytes, firstByte, total });
    });
  });
}

/** Wall time of a shell command (its output to /dev/null), seconds. */
function timedShell(cmd, cwd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('bash', ['-o', 'pipefail', '-c', `${cmd} > /dev/null`], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function main() {
  buildFerry(log);
  const home = path.join(scratch, 'home');
  log(`creating ${FILES} + ${FILES / 10} empty files and a tree of ${ZIP_FILES} small files`);
  manyFiles(path.join(home, 'many'), FILES);
  manyFiles(path.join(home, 'tenth'), FILES / 10);
  smallTree(path.join(home, 'tree'), ZIP_FILES);
  const ferry = await startFerry({ dir: path.join(scratch, 'ferry'), nodeArgs: NODE_ARGS, children });
  const token = await ferry.createUser({ username: 'bench', password: 'bench-user-password-1', home_dir: home, filesystem: { provider: 0 } });
  const auth = ['-H', `Authorization: Bearer ${token}`];
  const pid = ferry.proc.pid;

  // correctness once: the whole listing, every entry
  const listFile = path.join(scratch, 'listing.json');
  await curlTimed([...auth, `${ferry.url}/api/v2/user/dirs?path=/many`], listFile);
  const entries = JSON.parse(readFileSync(listFile, 'utf8')).length;
  if (entries !== FILES) throw new Error(`the listing has ${entries} entries, not ${FILES}`);

  const listing = async (dirName) => {
    let best = { total: Infinity };
    let growth = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await sleep(200);
      const before = (await withPeakRss(() => sleep(100), pid)).peakRssMb;
      const { value, peakRssMb } = await withPeakRss(() => curlTimed([...auth, `${ferry.url}/api/v2/user/dirs?path=/${dirName}`]), pid);
      if (value.total < best.total) best = value;
      growth = Math.max(growth, peakRssMb - before);
    }
    return { ...best, rssGrowth: growth };
  };
  const many = await listing('many');
  const tenth = await listing('tenth');
  let findSecs = Infinity;
  for (let i = 0; i < ROUNDS; i++) findSecs = Math.min(findSecs, timedShell(`find many -mindepth 1 -maxdepth 1 -printf '%f %s %T@ %m\\n'`, home));

  let delSecs = Infinity;
  let delCpu = Infinity;
  let rmSecs = Infinity;
  for (let i = 0; i < ROUNDS; i++) {
    manyFiles(path.join(home, 'del'), FILES);
    const t0 = process.hrtime.bigint();
    const cpu0 = cpuSecondsOf(pid);
    await curlTimed([...auth, '-X', 'DELETE', `${ferry.url}/api/v2/user/dirs?path=/del`]);
    delSecs = Math.min(delSecs, Number(process.hrtime.bigint() - t0) / 1e9);
    // the server's CPU time (all its threads): the steadier figure on a busy machine
    delCpu = Math.min(delCpu, cpuSecondsOf(pid) - cpu0);
    manyFiles(path.join(home, 'del'), FILES);
    rmSecs = Math.min(rmSecs, timedShell('rm -rf del', home));
  }

  const zipArgs = [...auth, '-X', 'POST', '-H', 'Content-Type: application/json', '--data', '["/tree"]', `${ferry.url}/api/v2/user/streamzip`];
  let zipBest = { total: Infinity };
  let zipPeak = 0;
  // what the server holds before the first zip (after the listings and deletes above)
  const zipBefore = rssOf(pid);
  for (let i = 0; i < ROUNDS; i++) {
    const { value, peakRssMb } = await withPeakRss(() => curlTimed(zipArgs), pid);
    if (value.total < zipBest.total) zipBest = value;
    zipPeak = Math.max(zipPeak, peakRssMb);
  }
  const haveZip = spawnSync('zip', ['-v'], { stdio: 'ignore' }).status === 0;
  let zipSecs = null;
  if (haveZip) {
    zipSecs = Infinity;
    for (let i = 0; i < ROUNDS; i++) zipSecs = Math.min(zipSecs, timedShell('zip -r -q -1 - tree', home));
  }

  const results = {
    files: FILES,
    listing: {
      first_byte_s: many.firstByte,
      total_s: many.total,
      bytes: many.bytes,
      find_s: findSecs,
      ratio: findSecs / many.total,
      rss_growth_mb: many.rssGrowth,
      tenth: { files: FILES / 10, total_s: tenth.total, rss_growth_mb: tenth.rssGrowth },
    },
    delete: { files: FILES, ferry_s: delSecs, ferry_cpu_s: delCpu, rm_s: rmSecs, ratio: rmSecs / delSecs },
    streamzip: {
      files: ZIP_FILES,
      ferry_s: zipBest.total,
      bytes: zipBest.bytes,
      zip_s: zipSecs,
      ratio: zipSecs === null ? null : zipSecs / zipBest.total,
      peak_rss_mb: zipPeak,
      rss_before_mb: zipBefore,
    },
  };
  const s = (n) => `${n.toFixed(3)}s`;
  console.log('');
  console.log(`Large directories on fs-local, best of ${ROUNDS} (ratio = baseline time / Ferry time); load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  console.log(
    `  listing ${FILES} files  ferry first byte ${s(many.firstByte)}, all ${s(many.total)} (${(many.bytes / 1e6).toFixed(1)} MB JSON)   find ${s(findSecs)} (${results.listing.ratio.toFixed(2)}x)   RSS +${many.rssGrowth.toFixed(0)} MB (${FILES / 10} files: +${tenth.rssGrowth.toFixed(0)} MB)   aim: streamed, +< 20 MB`,
  );
  console.log(
    `  delete ${FILES} files  ferry ${s(delSecs)} (server CPU ${s(delCpu)})   rm -rf ${s(rmSecs)} (${results.delete.ratio.toFixed(2)}x)   aim >= 0.50x`,
  );
  console.log(
    `  streamzip ${ZIP_FILES} files  ferry ${s(zipBest.total)} (${(zipBest.bytes / 1e6).toFixed(1)} MB)   ` +
      (zipSecs === null ? 'zip not installed: no baseline' : `zip -r -1 ${s(zipSecs)} (${results.streamzip.ratio.toFixed(2)}x)`) +
      `   Ferry peak RSS ${zipPeak.toFixed(0)} MB (${zipBefore.toFixed(0)} MB before)   aim >= 0.50x, < 150 MB`,
  );
  writeResults('large-dirs', results);
  await ferry.stop();
}

runBench('large-dirs', main, cleanup);

#!/usr/bin/env node
// HTTP transfer throughput of the user file API against baselines measured in
// the same run, over loopback, with a real `ferry serve` process (compiled CLI):
//
//   node bench/http-transfer.bench.mjs        (or: npm run bench)
//
//   download  GET /api/v2/user/files?path=/big.bin      vs nginx (sendfile) serving the same file
//   share     GET /api/v2/shares/{id}/files?path=/big.bin (a public read share of the user's home) vs nginx
//   parallel  32 concurrent downloads of a 256 MiB file: aggregate MB/s vs nginx serving the same 32 in
//             the same run, and Ferry's peak resident memory meanwhile
//   upload    POST /api/v2/user/files/upload (atomic)   vs a bare node:http server piping to a file
//   rss       peak resident memory of the Ferry process while a 4 GiB file is uploaded, then downloaded
//
// The client is curl for both sides of each comparison (-T FILE for uploads,
// -o /dev/null for downloads); rounds alternate between the two sides and the
// best of each is kept. nginx is installed by bench/setup-nginx.sh (Debian
// package) and run on a free high port with bench/nginx/nginx.conf.
// Ferry is measured twice: a user with the local backend's default 64 KiB
// buffers, and one with osconfig read_buffer_size / write_buffer_size 1 MiB.
// Aims: download >= 0.9x nginx, share download >= 0.85x nginx, upload >= 0.85x bare node, peak RSS < 150 MB
// (also during the 32 concurrent downloads: downloads read into a bounded pool of reused buffers,
// core/src/sdk/read-buffers.ts, 32 MiB in all; see docs/performance-history.md).
//
// Files live in /dev/shm when it has room (so the disk's writeback does not
// decide the upload figures), else in the OS temp directory.
// Env: BENCH_MB (default 1024), BENCH_RSS_MB (default 4096; the memory run
// uses a fresh process and streams zeros from curl's stdin, chunked),
// BENCH_ROUNDS (default 3), BENCH_PAR (concurrent downloads, default 32; 0 skips them),
// BENCH_PAR_MB (size of the file they download, default 256), FERRY_BENCH_DIR (scratch directory),
// FERRY_BENCH_NO_BUILD=1 (use core/dist as it is), FERRY_BENCH_RSS_ENV (JSON
// object of extra environment for the memory-run process, e.g.
// '{"FERRY_NODE_OPTIONS":"--max-semi-space-size=16"}'). Ferry runs through
// core/bin/ferry, whose glibc and V8 defaults keep its memory small.
// Writes bench/results/http-transfer.json.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MB, benchDir as here, freePort, makeFile, scratchWorkspace, waitPort, withPeakRss, writeResults, runBench } from './lib/common.mjs';
import { buildFerry, startFerry as startFerryServer } from './lib/ferry-server.mjs';
import { startNginx as startNginxServer } from './lib/nginx.mjs';

const SIZE_MB = Number(process.env.BENCH_MB ?? 1024);
const RSS_MB = Number(process.env.BENCH_RSS_MB ?? 4096);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PAR = Number(process.env.BENCH_PAR ?? 32);
const PAR_MB = Number(process.env.BENCH_PAR_MB ?? 256);
const USER = { username: 'bench', password: 'bench-user-password-1' };

const { dir: scratch, children, cleanup } = scratchWorkspace(3 * SIZE_MB + RSS_MB + PAR_MB + 1024, 'ferry-bench-http-');

function log(...a) {
  console.log('[http-transfer]', ...a);
}

/** Runs curl, returns {bytes, seconds}. */
function curl(args) {
  const r = spawnSync('curl', ['-s', '-S', '--fail', '-o', '/dev/null', '-w', '%{size_download} %{size_upload} %{time_total} %{http_code}', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`curl ${args.join(' ')}: ${r.stderr || r.stdout}`);
  const [down, up, secs, code] = r.stdout.trim().split(' ');
  return { down: Number(down), up: Number(up), seconds: Number(secs), code: Number(code) };
}

const mbps = (bytes, secs) => bytes / MB / secs;

async function startNginx(www) {
  const conf = readFileSync(path.join(here, 'nginx', 'nginx.conf'), 'utf8');
  return startNginxServer({ conf, scratch, children, vars: { ROOT: www } });
}

async function startBareServer(target) {
  const port = await freePort();
  const code = `
    const http = require('node:http'); const fs = require('node:fs');
    http.createServer((req, res) => {
      const out = fs.createWriteStream(process.argv[2]);
      req.pipe(out);
      out.on('finish', () => { res.writeHead(201, { 'content-type': 'application/json' }); res.end('{"message":"ok"}'); });
      out.on('error', () => { res.writeHead(500); res.end(); });
    }).listen(Number(process.argv[1]), '127.0.0.1');`;
  const p = spawn(process.execPath, ['-e', code, String(port), target], { stdio: 'ignore' });
  children.push(p);
  await waitPort(port);
  return { url: `http://127.0.0.1:${port}`, proc: p };
}

async function startFerry(home, name = 'ferry') {
  const ferry = await startFerryServer({
    dir: path.join(scratch, name),
    children,
    // the PAR concurrent downloads come from one host: raise the per-host transfer limit (default 20) to let them in
    env: name === 'ferry-rss' ? JSON.parse(process.env.FERRY_BENCH_RSS_ENV ?? '{}') : { SERVICE_COMMON__MAX_PER_HOST_TRANSFERS: String(Math.max(20, PAR)) },
  });
  const tokens = {};
  for (const [variant, mib] of [
    ['default', 0],
    ['1mib', 1],
  ]) {
    tokens[variant] = await ferryUser(ferry, variant, home, mib);
  }
  /** A public read share of the home of the `variant` user (no password); resolves to its id. */
  async function share(variant) {
    const r = await fetch(`${ferry.url}/api/v2/user/shares`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[variant]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench-${variant}`, scope: 1, paths: ['/'] }),
    });
    if (r.status !== 201) throw new Error(`share: ${r.status} ${await r.text()}`);
    return r.headers.get('x-object-id');
  }
  return { url: ferry.url, proc: ferry.proc, tokens, share };
}

/**
 * PAR clients download the same PAR_MB file at once, from nginx then from
 * Ferry (default buffers), best of 2 rounds each; aggregate MB/s (all bytes
 * over the wall time) and Ferry's peak resident memory.
 */
async function parallelDownloads(www, nginx, ferry) {
  const file = path.join(www, 'par.bin');
  makeFile(file, PAR_MB);
  const size = statSync(file).size;
  const all = async (args) => {
    const t0 = process.hrtime.bigint();
    const rs = await Promise.all(Array.from({ length: PAR }, () => curlAsync(args)));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    if (rs.some(([down]) => down !== size)) throw new Error('short parallel download');
    return secs;
  };
  const ferryArgs = ['-H', `Authorization: Bearer ${ferry.tokens.default}`, `${ferry.url}/api/v2/user/files?path=/par.bin`];
  curl([`${nginx.url}/par.bin`]);
  const idle = await peakRss(ferry.proc.pid, () => sleep(300));
  const rounds = 2;
  let nginxSecs = Infinity;
  let ferrySecs = Infinity;
  let peak = 0;
  for (let i = 0; i < rounds; i++) {
    nginxSecs = Math.min(nginxSecs, await all([`${nginx.url}/par.bin`]));
    const { value, peakRssMb } = await withPeakRss(() => all(ferryArgs), ferry.proc.pid);
    ferrySecs = Math.min(ferrySecs, value);
    peak = Math.max(peak, peakRssMb);
  }
  rmSync(file, { force: true });
  const total = size * PAR;
  return {
    clients: PAR,
    file_mb: PAR_MB,
    rounds,
    nginx_mbps: mbps(total, nginxSecs),
    ferry_mbps: mbps(total, ferrySecs),
    ratio: nginxSecs / ferrySecs,
    idle_mb: idle,
    peak_rss_mb: peak,
  };
}

/** A user on the local backend with osconfig read/write buffers of `mib` MiB (0: the backend's default). */
function ferryUser(ferry, variant, home, mib) {
  return ferry.createUser({
    username: `${USER.username}-${variant}`,
    password: USER.password,
    home_dir: home,
    permissions: { '/': ['*'] },
    filesystem: { provider: 0, osconfig: { read_buffer_size: mib, write_buffer_size: mib } },
  });
}

/** Samples the resident set of a process while `fn` runs; returns the maximum in MB. */
async function peakRss(pid, fn) {
  return (await withPeakRss(fn, pid)).peakRssMb;
}

/** A shell pipeline in the background. */
function shell(cmd) {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', ['-o', 'pipefail', '-c', cmd], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd}: ${err}`))));
  });
}

/** curl in the background (so the RSS sampler keeps running). */
function curlAsync(args) {
  return new Promise((resolve, reject) => {
    const p = spawn('curl', ['-s', '-S', '--fail', '-o', '/dev/null', '-w', '%{size_download} %{size_upload} %{time_total}', ...args]);
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => (code === 0 ? resolve(out.trim().split(' ').map(Number)) : reject(new Error(`curl: ${err}`))));
  });
}

async function main() {
  if (spawnSync('curl', ['--version']).status !== 0) throw new Error('curl is required');
  buildFerry(log);
  const www = path.join(scratch, 'www');
  mkdirSync(www, { recursive: true, mode: 0o755 });
  spawnSync('chmod', ['755', scratch]);
  const big = path.join(www, 'big.bin');
  log(`writing a ${SIZE_MB} MiB file`);
  makeFile(big, SIZE_MB);
  const size = statSync(big).size;

  const nginx = await startNginx(www);
  const bare = await startBareServer(path.join(scratch, 'bare-upload.bin'));
  const ferry = await startFerry(www);
  const auth = (variant) => ['-H', `Authorization: Bearer ${ferry.tokens[variant]}`];
  log(`files in ${scratch}; ferry ${ferry.url}, nginx ${nginx.url}, bare node ${bare.url}; ${ROUNDS} rounds, best kept`);

  const shareId = await ferry.share('default');
  const shareUrl = `${ferry.url}/api/v2/shares/${shareId}/files?path=/big.bin`;

  // warm the page cache and every server
  curl([`${nginx.url}/big.bin`]);
  curl([...auth('default'), `${ferry.url}/api/v2/user/files?path=/big.bin`]);

  const dl = { nginx: Infinity, default: Infinity, '1mib': Infinity, share: Infinity };
  for (let i = 0; i < ROUNDS; i++) {
    const runs = [
      ['nginx', () => curl([`${nginx.url}/big.bin`])],
      ['default', () => curl([...auth('default'), `${ferry.url}/api/v2/user/files?path=/big.bin`])],
      ['1mib', () => curl([...auth('1mib'), `${ferry.url}/api/v2/user/files?path=/big.bin`])],
      ['share', () => curl([shareUrl])],
    ];
    for (const [k, run] of runs) {
      const r = run();
      if (r.down !== size) throw new Error(`short download (${k})`);
      dl[k] = Math.min(dl[k], r.seconds);
    }
  }
  // before the uploads, so the memory figures are those of a process that has only downloaded
  const parallel = PAR > 0 ? await parallelDownloads(www, nginx, ferry) : null;
  const upArgs = ['-H', 'Expect:', '-H', 'Content-Type: application/octet-stream', '-X', 'POST', '-T'];
  const up = { bare: Infinity, default: Infinity, '1mib': Infinity };
  const upTarget = { bare: path.join(scratch, 'bare-upload.bin'), default: path.join(www, 'up.bin'), '1mib': path.join(www, 'up.bin') };
  for (let i = 0; i < ROUNDS; i++) {
    const runs = [
      ['bare', () => curl([...upArgs, big, `${bare.url}/upload`])],
      ['default', () => curl([...auth('default'), ...upArgs, big, `${ferry.url}/api/v2/user/files/upload?path=/up.bin`])],
      ['1mib', () => curl([...auth('1mib'), ...upArgs, big, `${ferry.url}/api/v2/user/files/upload?path=/up.bin`])],
    ];
    for (const [k, run] of runs) {
      const r = run();
      if (statSync(upTarget[k]).size !== size) throw new Error(`short upload (${k})`);
      rmSync(upTarget[k], { force: true });
      up[k] = Math.min(up[k], r.seconds);
    }
  }

  const results = {
    size_mb: SIZE_MB,
    download: {
      nginx_mbps: mbps(size, dl.nginx),
      ferry_mbps: mbps(size, dl.default),
      ferry_1mib_mbps: mbps(size, dl['1mib']),
    },
    upload: {
      bare_node_mbps: mbps(size, up.bare),
      ferry_mbps: mbps(size, up.default),
      ferry_1mib_mbps: mbps(size, up['1mib']),
    },
  };
  results.download.ratio = dl.nginx / dl.default;
  results.download.ratio_1mib = dl.nginx / dl['1mib'];
  results.parallel = parallel;
  results.share_download = { nginx_mbps: mbps(size, dl.nginx), ferry_mbps: mbps(size, dl.share), ratio: dl.nginx / dl.share };
  results.upload.ratio = up.bare / up.default;
  results.upload.ratio_1mib = up.bare / up['1mib'];
  rmSync(big, { force: true });

  let rss = null;
  if (RSS_MB > 0) {
    // a fresh process, so the figures are those of this transfer only
    ferry.proc.kill('SIGTERM');
    nginx.proc.kill('SIGTERM');
    bare.proc.kill('SIGTERM');
    const fresh = await startFerry(www, 'ferry-rss');
    log(`memory run on a fresh process: ${RSS_MB} MiB up (streamed, chunked), then down, default buffers`);
    // the logins' password hashing keeps its 19 MiB block a second after the last one (@ferry/argon2-pool): idle is measured after that
    await sleep(1200);
    const idle = await peakRss(fresh.proc.pid, () => sleep(300));
    const zeros = `head -c ${RSS_MB * MB} /dev/zero | curl -s -S --fail -o /dev/null -H 'Authorization: Bearer ${fresh.tokens.default}' -H 'Expect:' -H 'Content-Type: application/octet-stream' -X POST -T - '${fresh.url}/api/v2/user/files/upload?path=/huge.bin'`;
    const upPeak = await peakRss(fresh.proc.pid, () => shell(zeros));
    if (statSync(path.join(www, 'huge.bin')).size !== RSS_MB * MB) throw new Error('short memory-run upload');
    const downPeak = await peakRss(fresh.proc.pid, () =>
      curlAsync(['-H', `Authorization: Bearer ${fresh.tokens.default}`, `${fresh.url}/api/v2/user/files?path=/huge.bin`]),
    );
    rmSync(path.join(www, 'huge.bin'), { force: true });
    rss = { file_mb: RSS_MB, idle_mb: idle, upload_peak_mb: upPeak, download_peak_mb: downPeak };
  }
  results.rss = rss;

  const f = (n) => n.toFixed(0).padStart(6);
  const r = (n) => `${n.toFixed(2)}x`;
  console.log('');
  console.log(`HTTP transfers over loopback, ${SIZE_MB} MiB, best of ${ROUNDS} (MB/s; ratio = Ferry / baseline)`);
  console.log(
    `  download  nginx ${f(results.download.nginx_mbps)}   ferry ${f(results.download.ferry_mbps)} (${r(results.download.ratio)})   ferry, 1 MiB buffers ${f(results.download.ferry_1mib_mbps)} (${r(results.download.ratio_1mib)})   aim >= 0.90x`,
  );
  console.log(
    `  upload    node  ${f(results.upload.bare_node_mbps)}   ferry ${f(results.upload.ferry_mbps)} (${r(results.upload.ratio)})   ferry, 1 MiB buffers ${f(results.upload.ferry_1mib_mbps)} (${r(results.upload.ratio_1mib)})   aim >= 0.85x`,
  );
  console.log(
    `  share     nginx ${f(results.download.nginx_mbps)}   ferry ${f(results.share_download.ferry_mbps)} (${r(results.share_download.ratio)})   GET /api/v2/shares/{id}/files   aim >= 0.85x`,
  );
  const p = results.parallel;
  if (p) {
    console.log(
      `  ${p.clients} concurrent downloads of ${p.file_mb} MiB, best of ${p.rounds} (aggregate MB/s): nginx ${f(p.nginx_mbps)}   ferry ${f(p.ferry_mbps)} (${r(p.ratio)})   Ferry RSS before ${f(p.idle_mb)}, peak ${f(p.peak_rss_mb)} MB (aim < 150)`,
    );
  }
  if (rss) {
    console.log(`Ferry resident memory while moving a ${RSS_MB} MiB file, fresh process (MB, aim < 150)`);
    console.log(
      `  idle after login ${f(rss.idle_mb)}   upload peak ${f(rss.upload_peak_mb)} (+${(rss.upload_peak_mb - rss.idle_mb).toFixed(0)})   download peak ${f(rss.download_peak_mb)} (+${(rss.download_peak_mb - rss.idle_mb).toFixed(0)})`,
    );
  }
  writeResults('http-transfer', results);
}

runBench('http-transfer', main, cleanup);

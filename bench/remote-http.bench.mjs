#!/usr/bin/env node
// Remote backends through Ferry's HTTP file API against their SDK used
// directly on the same server, in the same run (issue 5):
//
//   node bench/remote-http.bench.mjs          (or: node bench/run.mjs remote-http)
//
// bench-servers: s3 azurite gcs sftp
//
// A real `ferry serve` process (compiled CLI, SQLite) gets one user per
// backend, created through the admin API: S3 on s3rver, Azure Blob on
// Azurite, GCS on firebase-tools' storage emulator, SFTP on the sshd of
// scripts/servers (started when down). For each
// backend and direction, FERRY_BENCH_MB (default 256) MiB are moved:
//
//   ferry upload    POST /api/v2/user/files/upload (raw body with Content-Length,
//                   streamed from a generator: one random MiB repeated)
//   ferry download  GET /api/v2/user/files
//   sdk   upload    s3: @aws-sdk/lib-storage Upload (5 MiB parts, 5 in flight: the plugin's defaults)
//                   azblob: BlockBlobClient.uploadStream (5 MiB blocks, 5 in flight; the plugin stages 4 MiB blocks, 2 at once)
//                   gcs: File.createWriteStream, resumable, 8 MiB chunks (the plugin's default), crc32c
//                   sftp: ssh2-sftp-client put(Readable) and fastPut(local file), the faster is the baseline
//   sdk   download  s3: GetObject; azblob: BlobClient.download(); gcs: File.createReadStream (crc32c checked);
//                   sftp: ssh2-sftp-client get(path, Writable) and fastGet(remote, local file), the faster is the baseline
//
//   bare proxy      s3, azblob and gcs: a plain node:http server (bench/lib/bare-proxy.mjs)
//                   that hands the request body to the same SDK calls and pipes the
//                   SDK's stream to the response: what one extra HTTP hop costs on
//                   this machine, without anything Ferry does
//
// Everything runs on loopback; the client side of every path is this process
// (node:http for Ferry and the proxy). Rounds alternate the order of the
// paths; the best of FERRY_BENCH_ROUNDS (default 2) is kept and the worst is
// printed too. Ratio = Ferry MB/s / SDK MB/s (aims: S3 >= 0.8x, Azure and
// GCS >= 0.85x, SFTP >= 0.8x); ferry/hop = Ferry MB/s / the bare proxy's
// (aim for downloads: >= 0.9x, what Ferry costs beyond one more HTTP hop). The resident memory of the Ferry process and
// of the proxy is sampled every 20 ms during their transfers (peak per
// direction; aim for Ferry: under 150 MB with the plugins' default part sizes
// and concurrency); Ferry's kernel-recorded peak (VmHWM) is printed at the
// end. "CPU ferry/proxy" is the CPU time (user + system) the
// Ferry process and the proxy used for one transfer (the least over the
// rounds): their own cost, whatever the load of the machine.
//
// Env: FERRY_BENCH_MB, FERRY_BENCH_ROUNDS, FERRY_BENCH_ONLY=s3,azblob,gcs,sftp (a
// subset), FERRY_BENCH_FS_OPTS='{"s3":{"download_concurrency":4}}' (extra
// filesystem options of the Ferry users, per backend), FERRY_BENCH_NODE_ARGS
// (node options of the Ferry process, e.g. "--cpu-prof --cpu-prof-dir=DIR";
// the results then list each Ferry transfer's start and end on the monotonic
// clock of the profile's timestamps, to cut the profile into phases),
// FERRY_BENCH_SFTP_DIR (a directory of the SFTP server the test user can
// write, when its login directory is not writable), FERRY_BENCH_NO_BUILD=1 (use
// the compiled output as it is), FERRY_BENCH_DIR (scratch directory).
// Writes bench/results/remote-http.json.
import { spawn } from 'node:child_process';
import { createWriteStream, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  AZURITE,
  GCS,
  S3,
  SFTP,
  azContainer,
  azRemovePrefix,
  benchPrefix,
  ferryFilesystem,
  gcsBucket,
  gcsRemovePrefix,
  remotePlugins,
  s3Client,
  s3RemovePrefix,
  sftpClient,
  sftpDir,
} from './lib/backends.mjs';
import {
  MB,
  benchDir,
  countingSink,
  cpuSecondsOf,
  freePort,
  waitPort,
  drain,
  ensureServers,
  envNumber,
  patternSource,
  rssOf,
  scratchWorkspace,
  timed,
  withPeakRss,
  writeResults,
  runBench,
} from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';

const SIZE_MB = envNumber('FERRY_BENCH_MB', 256);
const SIZE = Math.round(SIZE_MB * MB);
const ROUNDS = Math.max(1, envNumber('FERRY_BENCH_ROUNDS', 2));
const ALL = ['s3', 'azblob', 'gcs', 'sftp'];
/** Ferry/SDK throughput aims per backend, and the resident-memory budget of the Ferry process during one transfer. */
const AIMS = { s3: 0.8, azblob: 0.85, gcs: 0.85, sftp: 0.8 };
const RSS_BUDGET_MB = 150;
/** Ferry's download throughput / the bare proxy's, same run: what Ferry costs beyond the extra HTTP hop. */
const HOP_AIM = 0.9;
const ONLY = (process.env.FERRY_BENCH_ONLY ?? '').split(',').filter(Boolean);
for (const b of ONLY) if (!ALL.includes(b)) throw new Error(`FERRY_BENCH_ONLY: unknown backend ${b} (have ${ALL.join(', ')})`);
const BACKENDS = ONLY.length ? ALL.filter((b) => ONLY.includes(b)) : ALL;
const FS_OPTS = JSON.parse(process.env.FERRY_BENCH_FS_OPTS ?? '{}');
const NODE_ARGS = (process.env.FERRY_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const PASSWORD = 'bench-user-password-1';
const SERVERS = { s3: S3, azblob: AZURITE, gcs: GCS, sftp: SFTP };

// monotonic clock in µs, the clock of --cpu-prof timestamps: lets a profile be cut into phases
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);
const phases = [];
const log = (...a) => console.log('[remote-http]', ...a);
const { dir: scratch, children, cleanup } = scratchWorkspace(SIZE_MB + 64, 'ferry-bench-remote-http-');

/** POSTs a streamed body of SIZE bytes (with Content-Length); resolves to SIZE once the server answers 201. */
function httpUpload(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': SIZE } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 201 ? resolve(SIZE) : reject(new Error(`upload ${url}: ${res.statusCode} ${body}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    pipeline(patternSource(SIZE), req).catch(reject);
  });
}

/** GETs a URL; resolves to the number of body bytes received. */
function httpDownload(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`download ${url}: ${res.statusCode}`));
        return;
      }
      drain(res).then(resolve, reject);
    });
    req.on('error', reject);
  });
}

/** The bare proxy of bench/lib/bare-proxy.mjs for one backend, storing under `prefix`. */
async function startProxy(backend, prefix) {
  const port = await freePort();
  const proc = spawn(process.execPath, [path.join(benchDir, 'lib/bare-proxy.mjs'), String(port), backend, prefix], { stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(proc);
  await waitPort(port);
  return { url: `http://127.0.0.1:${port}`, proc };
}

/** The SDK paths of a backend: { label, upload: {name: fn}, download: {name: fn}, cleanup }. */
async function sdkCases(backend, prefix) {
  if (backend === 's3') {
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    const { Upload } = await import('@aws-sdk/lib-storage');
    const client = await s3Client();
    const key = `${prefix}/sdk.bin`;
    return {
      label: 's3 (s3rver)',
      upload: {
        'lib-storage Upload': async () => {
          await new Upload({ client, partSize: 5 * MB, queueSize: 5, params: { Bucket: S3.bucket, Key: key, Body: patternSource(SIZE) } }).done();
          return SIZE;
        },
      },
      download: { GetObject: async () => drain((await client.send(new GetObjectCommand({ Bucket: S3.bucket, Key: key }))).Body) },
      async cleanup() {
        await s3RemovePrefix(client, `${prefix}/`);
        client.destroy();
      },
    };
  }
  if (backend === 'azblob') {
    const container = await azContainer();
    const name = `${prefix}/sdk.bin`;
    return {
      label: 'azblob (Azurite)',
      upload: {
        uploadStream: async () => {
          await container.getBlockBlobClient(name).uploadStream(patternSource(SIZE), 5 * MB, 5);
          return SIZE;
        },
      },
      download: { download: async () => drain((await container.getBlobClient(name).download()).readableStreamBody) },
      cleanup: () => azRemovePrefix(container, `${prefix}/`),
    };
  }
  if (backend === 'gcs') {
    const bucket = await gcsBucket();
    const file = bucket.file(`${prefix}/sdk.bin`);
    return {
      label: 'gcs (emulator)',
      upload: {
        createWriteStream: async () => {
          await pipeline(patternSource(SIZE), file.createWriteStream({ resumable: true, chunkSize: 8 * MB, validation: 'crc32c' }));
          return SIZE;
        },
      },
      download: { createReadStream: async () => drain(file.createReadStream({ validation: 'crc32c', decompress: false })) },
      cleanup: () => gcsRemovePrefix(bucket, `${prefix}/`),
    };
  }
  // sftp: one connection for the direct paths, made before timing (Ferry's pool is warm too after the first round)
  const c = await sftpClient();
  const dir = sftpDir(prefix);
  try {
    await c.mkdir(dir, true);
  } catch (err) {
    const cwd = await c.cwd().catch(() => '?');
    await c.end();
    throw new Error(
      `cannot create ${dir} on the SFTP server (login directory ${cwd}): ${err.message}; set FERRY_BENCH_SFTP_DIR to a directory ${SFTP.username} can write`,
    );
  }
  const local = path.join(scratch, 'sftp-local.bin');
  await pipeline(patternSource(SIZE), createWriteStream(local));
  return {
    label: 'sftp (sshd)',
    upload: {
      'put(Readable)': async () => {
        await c.put(patternSource(SIZE), `${dir}/stream.bin`);
        return SIZE;
      },
      fastPut: async () => {
        await c.fastPut(local, `${dir}/fast.bin`);
        return SIZE;
      },
    },
    download: {
      'get(Writable)': async () => {
        const sink = countingSink();
        await c.get(`${dir}/stream.bin`, sink);
        return sink.bytes;
      },
      fastGet: async () => {
        const out = path.join(scratch, 'sftp-fastget.bin');
        await c.fastGet(`${dir}/fast.bin`, out);
        const { size } = statSync(out);
        rmSync(out, { force: true });
        return size;
      },
    },
    async cleanup() {
      await c.rmdir(dir, true).catch(() => undefined);
      await c.end();
      rmSync(local, { force: true });
    },
  };
}

async function benchBackend(ferry, backend) {
  const progress = (round, what, r) => log(`${backend} round ${round + 1}: ${what} ${r.mbps.toFixed(1)} MB/s`);
  const prefix = benchPrefix('bench-http');
  const username = `bench-${backend}`;
  const token = await ferry.createUser({
    username,
    password: PASSWORD,
    home_dir: path.join(scratch, 'homes', username),
    filesystem: ferryFilesystem(backend, prefix, FS_OPTS[backend] ?? {}),
  });
  const sdk = await sdkCases(backend, prefix);
  const proxy = backend !== 'sftp' ? await startProxy(backend, prefix) : undefined;
  const auth = { authorization: `Bearer ${token}` };
  const paths = {
    ferry: {
      upload: () => httpUpload(`${ferry.url}/api/v2/user/files/upload?path=%2Fferry.bin`, auth),
      download: () => httpDownload(`${ferry.url}/api/v2/user/files?path=%2Fferry.bin`, auth),
    },
    proxy: proxy && { upload: () => httpUpload(`${proxy.url}/proxy.bin`), download: () => httpDownload(`${proxy.url}/proxy.bin`) },
  };
  const runs = {}; // name -> [{mbps, secs, serverPeakRssMb?, serverCpuSecs?}]
  const add = (name, r) => (runs[name] ??= []).push(r);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const dir of ['upload', 'download']) {
        const ferryRun = async () => {
          const cpu0 = cpuSecondsOf(ferry.proc.pid);
          const rssBefore = rssOf(ferry.proc.pid);
          const t0 = monotonicMicros();
          const { value, peakRssMb } = await withPeakRss(() => timed(SIZE, paths.ferry[dir]), ferry.proc.pid);
          if (NODE_ARGS.length) phases.push({ backend, dir, round, start_us: t0, end_us: monotonicMicros() });
          add(`ferry ${dir}`, { ...value, serverPeakRssMb: peakRssMb, serverRssBeforeMb: rssBefore, serverCpuSecs: cpuSecondsOf(ferry.proc.pid) - cpu0 });
          progress(round, `ferry ${dir}`, value);
        };
        const proxyRun = async () => {
          const cpu0 = cpuSecondsOf(proxy.proc.pid);
          const { value, peakRssMb } = await withPeakRss(() => timed(SIZE, paths.proxy[dir]), proxy.proc.pid);
          add(`proxy ${dir}`, { ...value, serverPeakRssMb: peakRssMb, serverCpuSecs: cpuSecondsOf(proxy.proc.pid) - cpu0 });
          progress(round, `bare proxy ${dir}`, value);
        };
        const sdkRuns = Object.entries(sdk[dir]).map(([name, fn]) => async () => {
          const value = await timed(SIZE, fn);
          add(`sdk ${dir} ${name}`, value);
          progress(round, `sdk ${dir} ${name}`, value);
        });
        // alternate the order, so warm-up and caches favour no path
        const mine = proxy ? [proxyRun, ferryRun] : [ferryRun];
        const order = round % 2 === 0 ? [...sdkRuns, ...mine] : [...mine.reverse(), ...sdkRuns];
        for (const run of order) await run();
      }
    }
  } finally {
    proxy?.proc.kill('SIGTERM');
    await sdk.cleanup().catch((err) => log(`cleanup of ${backend} failed: ${err.message}`));
  }
  const best = (name) => Math.max(...runs[name].map((r) => r.mbps));
  const worst = (name) => Math.min(...runs[name].map((r) => r.mbps));
  const out = { key: backend, backend: sdk.label, rounds: ROUNDS, aim: AIMS[backend], rss_budget_mb: RSS_BUDGET_MB, directions: {} };
  for (const dir of ['upload', 'download']) {
    const sdkNames = Object.keys(sdk[dir]);
    const baseline = sdkNames.reduce((a, b) => (best(`sdk ${dir} ${b}`) >= best(`sdk ${dir} ${a}`) ? b : a));
    const f = `ferry ${dir}`;
    out.directions[dir] = {
      ferry_mbps: best(f),
      ferry_worst_mbps: worst(f),
      sdk: Object.fromEntries(sdkNames.map((n) => [n, { mbps: best(`sdk ${dir} ${n}`), worst_mbps: worst(`sdk ${dir} ${n}`) }])),
      baseline,
      ratio: best(f) / best(`sdk ${dir} ${baseline}`),
      ...(proxy
        ? {
            proxy_mbps: best(`proxy ${dir}`),
            proxy_worst_mbps: worst(`proxy ${dir}`),
            proxy_ratio: best(`proxy ${dir}`) / best(`sdk ${dir} ${baseline}`),
            ferry_to_proxy: best(f) / best(`proxy ${dir}`),
            proxy_cpu_secs: Math.min(...runs[`proxy ${dir}`].map((r) => r.serverCpuSecs)),
            proxy_peak_rss_mb: Math.max(...runs[`proxy ${dir}`].map((r) => r.serverPeakRssMb)),
          }
        : {}),
      server_peak_rss_mb: Math.max(...runs[f].map((r) => r.serverPeakRssMb)),
      // the most a transfer added to the RSS Ferry had just before it (SDK loaded, earlier transfers' memory kept)
      server_rss_growth_mb: Math.max(...runs[f].map((r) => r.serverPeakRssMb - r.serverRssBeforeMb)),
      server_cpu_secs: Math.min(...runs[f].map((r) => r.serverCpuSecs)),
    };
  }
  return out;
}

async function main() {
  await ensureServers(BACKENDS.map((b) => SERVERS[b]));
  buildFerry(log);
  const ferry = await startFerry({
    dir: path.join(scratch, 'ferry'),
    plugins: remotePlugins(),
    nodeArgs: NODE_ARGS,
    children,
  });
  log(`ferry ${ferry.url} (pid ${ferry.proc.pid}); ${SIZE_MB} MiB per transfer, best of ${ROUNDS} round(s), ${BACKENDS.join(', ')}; Node ${process.version}`);
  const idleRssMb = rssOf(ferry.proc.pid);
  const results = [];
  for (const b of BACKENDS) results.push(await benchBackend(ferry, b));
  const hwmMb = rssOf(ferry.proc.pid, 'VmHWM');
  await ferry.stop();

  const spread = (best, worst) => `${best.toFixed(1)} (${worst.toFixed(1)}..)`;
  const pad = (s, w) => String(s).padEnd(w);
  console.log('');
  console.log(`Remote backends through Ferry's HTTP file API vs their SDK direct, ${SIZE_MB} MiB, best of ${ROUNDS} round(s)`);
  console.log(
    `MB/s, best (worst..); ratio = Ferry / SDK, aim >= 0.80x (Azure, GCS 0.85x); Ferry RSS aim < ${RSS_BUDGET_MB} MB; bare proxy = a plain node:http hop in front of the same SDK calls`,
  );
  console.log(
    `${pad('backend', 18)}${pad('op', 10)}${pad('SDK direct', 34)}${pad('ferry', 17)}${pad('ratio', 8)}${pad('bare proxy', 17)}${pad('ratio', 8)}${pad('CPU ferry/proxy', 17)}RSS peak ferry/proxy`,
  );
  for (const r of results) {
    for (const [dir, d] of Object.entries(r.directions)) {
      const base = d.sdk[d.baseline];
      const flags = [];
      if (d.ratio < r.aim) flags.push(`below ${r.aim}x`);
      if (dir === 'download' && d.proxy_mbps && d.ferry_to_proxy < HOP_AIM) flags.push(`below ${HOP_AIM}x of the hop`);
      if (d.server_peak_rss_mb >= RSS_BUDGET_MB) flags.push(`RSS over ${RSS_BUDGET_MB} MB`);
      const flag = flags.length ? `  (${flags.join(', ')})` : '';
      console.log(
        pad(r.backend, 18) +
          pad(dir, 10) +
          pad(`${spread(base.mbps, base.worst_mbps)} ${d.baseline}`, 34) +
          pad(spread(d.ferry_mbps, d.ferry_worst_mbps), 17) +
          pad(d.ratio.toFixed(2) + 'x', 8) +
          pad(d.proxy_mbps ? spread(d.proxy_mbps, d.proxy_worst_mbps) : '-', 17) +
          pad(d.proxy_mbps ? d.proxy_ratio.toFixed(2) + 'x' : '', 8) +
          pad(`${d.server_cpu_secs.toFixed(2)}/${d.proxy_mbps ? d.proxy_cpu_secs.toFixed(2) : '-'} s`, 17) +
          `${d.server_peak_rss_mb.toFixed(0)}/${d.proxy_mbps ? d.proxy_peak_rss_mb.toFixed(0) : '-'} MB (ferry +${d.server_rss_growth_mb.toFixed(0)})` +
          (d.proxy_mbps ? `   ferry/hop ${d.ferry_to_proxy.toFixed(2)}x` : '') +
          `   aim >= ${r.aim.toFixed(2)}x of the SDK${dir === 'download' && d.proxy_mbps ? `, >= ${HOP_AIM.toFixed(2)}x of the hop` : ''}, < ${RSS_BUDGET_MB} MB${flag}`,
      );
      for (const [k, v] of Object.entries(d.sdk))
        if (k !== d.baseline) console.log(`${pad('', 28)}${spread(v.mbps, v.worst_mbps)} ${k} (not the baseline: slower)`);
    }
  }
  console.log(
    `Ferry process RSS: ${idleRssMb.toFixed(0)} MB after start, peak ${hwmMb.toFixed(0)} MB (VmHWM), all four SDKs loaded   aim < ${RSS_BUDGET_MB} MB`,
  );
  writeResults('remote-http', {
    size_mb: SIZE_MB,
    rounds: ROUNDS,
    node: process.version,
    ferry_rss_start_mb: idleRssMb,
    ferry_rss_peak_mb: hwmMb,
    results,
    ...(phases.length ? { ferry_phases: phases } : {}),
  });
}

runBench('remote-http', main, cleanup);

#!/usr/bin/env node
// Small downloads from remote backends: how long one download of a small
// file takes through Ferry's HTTP file API, against the SDK reading it
// directly, in the same run:
//
//   node bench/remote-small.bench.mjs          (or: node bench/run.mjs remote-small)
//
// bench-servers: s3 azurite gcs sftp
//
// A real `ferry serve` process (compiled CLI, SQLite) gets one user per
// backend. FERRY_BENCH_FILES (default 50) files of FERRY_BENCH_KB (default
// 16) KiB are written to the backend, then each path reads every file in
// turn, one at a time (a keep-alive HTTP agent for Ferry), for
// FERRY_BENCH_ROUNDS (default 3) rounds; the median time per download is
// kept:
//
//   sdk direct       one read of the object (s3: GetObject; azblob: download();
//                    gcs: createReadStream; sftp: get() on an open connection)
//   ferry whole      GET /api/v2/user/files?path=...: a backend that reports
//                    the metadata with the bytes (Fs.openReadWithInfo: S3, Azure)
//                    answers from one request to the storage
//   ferry ranged     the same GET with `Range: bytes=0-` (the whole file as a
//                    206): a ranged download asks the metadata first (stat),
//                    then the bytes: two requests, what every download cost
//                    before openReadWithInfo
//
// Ratio = SDK direct time / Ferry time (1.0x: Ferry adds nothing). Aim:
// ferry whole >= 0.5x of the SDK direct (one HTTP hop in front of one
// storage request); "saved" is ranged - whole, what the second request cost.
//
// FERRY_BENCH_RTT_MS (default 0) puts a relay in front of each storage server
// that delays every byte by half that in each direction (bench/lib/latency-relay.mjs),
// for the SDK and Ferry alike: what each storage round trip costs when the
// storage is not on the loopback.
//
// Env: FERRY_BENCH_FILES, FERRY_BENCH_KB, FERRY_BENCH_ROUNDS, FERRY_BENCH_RTT_MS,
// FERRY_BENCH_ONLY=s3,azblob,gcs,sftp, FERRY_BENCH_NODE_ARGS (node options of the
// Ferry process, e.g. "--cpu-prof --cpu-prof-dir=DIR"), FERRY_BENCH_NO_BUILD=1,
// FERRY_BENCH_DIR.
// Writes bench/results/remote-small.json.
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
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
import { countingSink, drain, ensureServers, envNumber, scratchWorkspace, writeResults, runBench } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';
import { startLatencyRelay } from './lib/latency-relay.mjs';

const FILES = Math.max(1, envNumber('FERRY_BENCH_FILES', 50));
const SIZE = Math.max(1, Math.round(envNumber('FERRY_BENCH_KB', 16) * 1024));
const ROUNDS = Math.max(1, envNumber('FERRY_BENCH_ROUNDS', 3));
const RTT_MS = Math.max(0, envNumber('FERRY_BENCH_RTT_MS', 0));
const ALL = ['s3', 'azblob', 'gcs', 'sftp'];
const AIM = 0.5;
const ONLY = (process.env.FERRY_BENCH_ONLY ?? '').split(',').filter(Boolean);
for (const b of ONLY) if (!ALL.includes(b)) throw new Error(`FERRY_BENCH_ONLY: unknown backend ${b} (have ${ALL.join(', ')})`);
const BACKENDS = ONLY.length ? ALL.filter((b) => ONLY.includes(b)) : ALL;
const NODE_ARGS = (process.env.FERRY_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const SERVERS = { s3: S3, azblob: AZURITE, gcs: GCS, sftp: SFTP };
const PASSWORD = 'bench-user-password-1';
const log = (...a) => console.log('[remote-small]', ...a);
const { dir: scratch, children, cleanup } = scratchWorkspace(64, 'ferry-bench-remote-small-');
const body = Buffer.alloc(SIZE, 'ferry small download ');
const names = Array.from({ length: FILES }, (_, i) => `f${String(i).padStart(4, '0')}.bin`);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** GETs a URL on the keep-alive agent; resolves once the whole body arrived (its size checked). */
function get(url, headers, status) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      if (res.statusCode !== status) {
        res.resume();
        reject(new Error(`GET ${url}: ${res.statusCode}, expected ${status}`));
        return;
      }
      drain(res).then((n) => (n === SIZE ? resolve(n) : reject(new Error(`GET ${url}: ${n} bytes, expected ${SIZE}`))), reject);
    });
    req.on('error', reject);
  });
}

/** Writes the files through the SDK; returns { read(name) → bytes, cleanup }. */
async function direct(backend, prefix) {
  if (backend === 's3') {
    const { GetObjectCommand, PutObjectCommand } = await import('@aws-sdk/client-s3');
    const client = await s3Client();
    for (const n of names) await client.send(new PutObjectCommand({ Bucket: S3.bucket, Key: `${prefix}/${n}`, Body: body }));
    return {
      label: 's3 (s3rver)',
      read: async (n) => drain((await client.send(new GetObjectCommand({ Bucket: S3.bucket, Key: `${prefix}/${n}` }))).Body),
      cleanup: async () => {
        await s3RemovePrefix(client, `${prefix}/`);
        client.destroy();
      },
    };
  }
  if (backend === 'azblob') {
    const container = await azContainer();
    for (const n of names) await container.getBlockBlobClient(`${prefix}/${n}`).upload(body, body.length);
    return {
      label: 'azblob (Azurite)',
      read: async (n) => drain((await container.getBlobClient(`${prefix}/${n}`).download()).readableStreamBody),
      cleanup: () => azRemovePrefix(container, `${prefix}/`),
    };
  }
  if (backend === 'gcs') {
    const bucket = await gcsBucket();
    for (const n of names) await bucket.file(`${prefix}/${n}`).save(body, { resumable: false });
    return {
      label: 'gcs (emulator)',
      read: (n) => drain(bucket.file(`${prefix}/${n}`).createReadStream({ validation: 'crc32c', decompress: false })),
      cleanup: () => gcsRemovePrefix(bucket, `${prefix}/`),
    };
  }
  const c = await sftpClient();
  const dir = sftpDir(prefix);
  await c.mkdir(dir, true);
  for (const n of names) await c.put(Readable.from([body]), `${dir}/${n}`);
  return {
    label: 'sftp (sshd)',
    read: async (n) => {
      const sink = countingSink();
      await c.get(`${dir}/${n}`, sink);
      return sink.bytes;
    },
    cleanup: async () => {
      await c.rmdir(dir, true).catch(() => undefined);
      await c.end();
    },
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** Times `fn` over every file, one at a time; returns the ms of each download. */
async function pass(fn) {
  const times = [];
  for (const n of names) {
    const t0 = process.hrtime.bigint();
    const got = await fn(n);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (got !== SIZE) throw new Error(`${n}: read ${got} bytes, expected ${SIZE}`);
  }
  return times;
}

async function benchBackend(ferry, backend) {
  const prefix = benchPrefix('bench-small');
  const username = `small-${backend}`;
  const token = await ferry.createUser({
    username,
    password: PASSWORD,
    home_dir: path.join(scratch, 'homes', username),
    filesystem: ferryFilesystem(backend, prefix, {}),
  });
  const sdk = await direct(backend, prefix);
  const auth = { authorization: `Bearer ${token}` };
  const url = (n) => `${ferry.url}/api/v2/user/files?path=${encodeURIComponent(`/${n}`)}`;
  const paths = {
    sdk: (n) => sdk.read(n),
    whole: (n) => get(url(n), auth, 200),
    ranged: (n) => get(url(n), { ...auth, range: 'bytes=0-' }, 206),
  };
  const times = { sdk: [], whole: [], ranged: [] };
  try {
    for (const p of Object.keys(paths)) await pass(paths[p]); // warm-up: connections, SDK clients, Ferry's session cache
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['sdk', 'whole', 'ranged'] : ['ranged', 'whole', 'sdk'];
      for (const p of order) times[p].push(...(await pass(paths[p])));
      log(
        `${backend} round ${round + 1}: ${Object.entries(times)
          .map(([k, v]) => `${k} ${median(v).toFixed(2)} ms`)
          .join(', ')}`,
      );
    }
  } finally {
    await sdk.cleanup().catch((err) => log(`cleanup of ${backend} failed: ${err.message}`));
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  return { key: backend, backend: sdk.label, ms: m, ratio_whole: m.sdk / m.whole, ratio_ranged: m.sdk / m.ranged, saved_ms: m.ranged - m.whole };
}

/** Puts a latency relay in front of each server of BACKENDS and points the SDKs and Ferry at it. */
async function relayServers() {
  const relays = [];
  for (const b of BACKENDS) {
    const server = SERVERS[b];
    const relay = await startLatencyRelay({ port: server.port, oneWayMs: RTT_MS / 2 });
    relays.push(relay);
    server.port = relay.port;
    // S3 and Azurite name their endpoint as a value, GCS computes it from the port, SFTP has none
    if (b === 's3' || b === 'azblob') server.endpoint = `http://127.0.0.1:${relay.port}`;
  }
  return () => Promise.all(relays.map((r) => r.stop()));
}

async function main() {
  await ensureServers(BACKENDS.map((b) => SERVERS[b]));
  const stopRelays = RTT_MS > 0 ? await relayServers() : async () => undefined;
  buildFerry(log);
  const ferry = await startFerry({
    dir: path.join(scratch, 'ferry'),
    plugins: remotePlugins(),
    nodeArgs: NODE_ARGS,
    children,
  });
  log(
    `ferry ${ferry.url} (pid ${ferry.proc.pid}); ${FILES} files of ${SIZE} bytes, ${ROUNDS} round(s), ${BACKENDS.join(', ')}; ` +
      `storage round trip +${RTT_MS} ms; Node ${process.version}`,
  );
  const results = [];
  for (const b of BACKENDS) results.push(await benchBackend(ferry, b));
  await ferry.stop();
  agent.destroy();
  await stopRelays();

  const pad = (s, w) => String(s).padEnd(w);
  console.log('');
  console.log(
    `Small downloads (${SIZE} bytes) from remote backends: median ms per download, one at a time, ${FILES} files x ${ROUNDS} rounds` +
      (RTT_MS > 0 ? `, each storage round trip ${RTT_MS} ms longer (latency relay)` : ''),
  );
  console.log(`ratio = SDK direct / Ferry; aim: ferry whole >= ${AIM}x; ranged = Range: bytes=0- (stat, then the read: two storage requests)`);
  console.log(
    `${pad('backend', 18)}${pad('SDK direct', 12)}${pad('ferry whole', 13)}${pad('ratio', 8)}${pad('ferry ranged', 14)}${pad('ratio', 8)}saved by one request`,
  );
  for (const r of results) {
    const flag = r.ratio_whole < AIM ? `  (below ${AIM}x)` : '';
    console.log(
      pad(r.backend, 18) +
        pad(`${r.ms.sdk.toFixed(2)} ms`, 12) +
        pad(`${r.ms.whole.toFixed(2)} ms`, 13) +
        pad(`${r.ratio_whole.toFixed(2)}x`, 8) +
        pad(`${r.ms.ranged.toFixed(2)} ms`, 14) +
        pad(`${r.ratio_ranged.toFixed(2)}x`, 8) +
        `${r.saved_ms.toFixed(2)} ms (${((100 * r.saved_ms) / r.ms.ranged).toFixed(0)}%)   aim >= ${AIM}x (whole)${flag}`,
    );
  }
  writeResults(RTT_MS > 0 ? `remote-small-rtt${RTT_MS}` : 'remote-small', {
    files: FILES,
    size: SIZE,
    rounds: ROUNDS,
    rtt_ms: RTT_MS,
    node: process.version,
    results,
  });
}

runBench('remote-small', main, cleanup);

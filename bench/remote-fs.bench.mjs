#!/usr/bin/env node
// Remote filesystem throughput: 256 MB upload and download through the Ferry
// Fs of @ferry/fs-s3 and @ferry/fs-azblob (openWrite / openRead) against the
// SDK used directly on the same server, in the same run. Starts the test
// servers (s3rver, Azurite) with the project's scripts when they are down.
//
//   node bench/remote-fs.bench.mjs
//
// Env: FERRY_BENCH_MB (default 256), FERRY_BENCH_ROUNDS (default 2, best of),
// FERRY_BENCH_ONLY=s3|azblob, FERRY_BENCH_FS_OPTS='{"download_concurrency":1}' (extra
// plugin options, e.g. to compare part sizes). Prints MB/s per path, the Fs/SDK ratio (aim >= 0.8)
// and the peak RSS sampled during each phase; writes bench/results/remote-fs.json.
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// The plugins are TypeScript sources (exports condition "ferry-src"): re-run
// this file under the TypeScript loader tap uses when it is not loaded yet.
if (!process.execArgv.includes('--conditions=ferry-src')) {
  const loader = path.join(root, 'node_modules/@tapjs/typescript/dist/esm/import.mjs');
  const r = spawnSync(
    process.execPath,
    [`--import=${loader}`, '--conditions=ferry-src', '--no-warnings', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' } },
  );
  process.exit(r.status ?? 1);
}

const MB = 1024 * 1024;
const SIZE = Number(process.env.FERRY_BENCH_MB ?? 256) * MB;
const ROUNDS = Number(process.env.FERRY_BENCH_ROUNDS ?? 2);
const ONLY = process.env.FERRY_BENCH_ONLY ?? '';
const CHUNK = randomBytes(MB);
const FS_OPTS = JSON.parse(process.env.FERRY_BENCH_FS_OPTS ?? '{}');

/** SIZE bytes in 1 MiB chunks (one random buffer reused: no 256 MB in memory). */
function source() {
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < SIZE; sent += MB) yield sent + MB <= SIZE ? CHUNK : CHUNK.subarray(0, SIZE - sent);
    })(),
    { objectMode: false },
  );
}

/** Consumes a stream, counting bytes. */
async function drain(stream) {
  let n = 0;
  await pipeline(
    stream,
    new Writable({
      write(c, _e, cb) {
        n += c.length;
        cb();
      },
    }),
  );
  return n;
}

/** Runs fn, returning MB/s and the peak RSS sampled every 20 ms meanwhile. */
async function measure(fn) {
  global.gc?.();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = process.hrtime.bigint();
  const bytes = await fn();
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  if (bytes !== SIZE) throw new Error(`moved ${bytes} bytes, expected ${SIZE}`);
  return { mbps: SIZE / MB / secs, secs, peakRssMb: peak / MB };
}

async function s3Cases() {
  const { s3Provider } = await import('@ferry/fs-s3');
  const { S3Client, GetObjectCommand, DeleteObjectsCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const port = Number(process.env.FERRY_S3_PORT ?? 19000);
  const endpoint = `http://127.0.0.1:${port}`;
  const bucket = 'ferry-test';
  const prefix = `bench-${randomUUID()}/`;
  const opts = { bucket, endpoint, region: 'us-east-1', access_key: 'S3RVER', access_secret: 'S3RVER', force_path_style: true };
  const fs = await s3Provider.create({ ...opts, ...FS_OPTS, key_prefix: prefix }, { username: 'bench', dataDir: '/nonexistent' });
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    name: 's3 (s3rver)',
    sdkUpload: async () => {
      // Same part size and queue as the Fs defaults (5 MB, 5).
      await new Upload({ client, partSize: 5 * MB, queueSize: 5, params: { Bucket: bucket, Key: `${prefix}sdk.bin`, Body: source() } }).done();
      return SIZE;
    },
    fsUpload: async () => {
      const h = await fs.openWrite('/fs.bin', { size: SIZE });
      await pipeline(source(), h.stream);
      return (await h.done).size;
    },
    sdkDownload: async () => drain((await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}sdk.bin` }))).Body),
    fsDownload: async () => drain(await fs.openRead('/fs.bin')),
    async cleanup() {
      const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      const keys = (out.Contents ?? []).map((o) => ({ Key: o.Key }));
      if (keys.length) await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
      await fs.close();
      client.destroy();
    },
  };
}

async function azCases() {
  const { azBlobProvider } = await import('@ferry/fs-azblob');
  const { BlobServiceClient, StorageSharedKeyCredential } = await import('@azure/storage-blob');
  const port = Number(process.env.FERRY_AZURITE_PORT ?? 19001);
  const account = 'devstoreaccount1';
  const key = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
  const container = new BlobServiceClient(`http://127.0.0.1:${port}/${account}`, new StorageSharedKeyCredential(account, key))
    .getContainerClient('ferry-test');
  await container.createIfNotExists();
  const prefix = `bench-${randomUUID()}/`;
  const fs = await azBlobProvider.create(
    { container: 'ferry-test', use_emulator: true, endpoint: `http://127.0.0.1:${port}`, ...FS_OPTS, key_prefix: prefix },
    { username: 'bench', dataDir: '/nonexistent' },
  );
  return {
    name: 'azblob (Azurite)',
    sdkUpload: async () => {
      await container.getBlockBlobClient(`${prefix}sdk.bin`).uploadStream(source(), 5 * MB, 5);
      return SIZE;
    },
    fsUpload: async () => {
      const h = await fs.openWrite('/fs.bin', { size: SIZE });
      await pipeline(source(), h.stream);
      return (await h.done).size;
    },
    sdkDownload: async () => drain((await container.getBlobClient(`${prefix}sdk.bin`).download()).readableStreamBody),
    fsDownload: async () => drain(await fs.openRead('/fs.bin')),
    async cleanup() {
      for await (const b of container.listBlobsFlat({ prefix })) await container.deleteBlob(b.name);
      await fs.close();
    },
  };
}

function ensureServers() {
  for (const s of ['start-s3.sh', 'start-azurite.sh']) {
    const r = spawnSync('bash', [path.join(root, 'scripts/servers', s)], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`scripts/servers/${s} failed`);
  }
}

ensureServers();
const results = [];
const backends = [
  ['s3', s3Cases],
  ['azblob', azCases],
].filter(([k]) => !ONLY || ONLY === k);
console.log(`remote-fs bench: ${SIZE / MB} MB per transfer, best of ${ROUNDS} round(s), Node ${process.version}`);
for (const [, make] of backends) {
  const c = await make();
  const best = {};
  try {
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which path goes first so warm-up favours neither.
      const order = r % 2 === 0 ? ['sdkUpload', 'fsUpload', 'sdkDownload', 'fsDownload'] : ['fsUpload', 'sdkUpload', 'fsDownload', 'sdkDownload'];
      for (const op of order) {
        const m = await measure(c[op]);
        if (!best[op] || m.mbps > best[op].mbps) best[op] = { ...m, peakRssMb: Math.max(m.peakRssMb, best[op]?.peakRssMb ?? 0) };
      }
    }
  } finally {
    await c.cleanup();
  }
  for (const dir of ['Upload', 'Download']) {
    const sdk = best[`sdk${dir}`];
    const fs = best[`fs${dir}`];
    results.push({
      backend: c.name,
      op: dir.toLowerCase(),
      sdkMBps: +sdk.mbps.toFixed(1),
      fsMBps: +fs.mbps.toFixed(1),
      ratio: +(fs.mbps / sdk.mbps).toFixed(2),
      sdkPeakRssMb: Math.round(sdk.peakRssMb),
      fsPeakRssMb: Math.round(fs.peakRssMb),
    });
  }
}
const pad = (s, n) => String(s).padEnd(n);
console.log(`${pad('backend', 18)}${pad('op', 10)}${pad('SDK MB/s', 10)}${pad('Fs MB/s', 10)}${pad('Fs/SDK', 8)}${pad('SDK peak RSS', 14)}Fs peak RSS`);
for (const r of results) {
  const flag = r.ratio >= 0.8 ? '' : '  (below 0.8x)';
  console.log(
    `${pad(r.backend, 18)}${pad(r.op, 10)}${pad(r.sdkMBps, 10)}${pad(r.fsMBps, 10)}${pad(r.ratio + 'x', 8)}${pad(r.sdkPeakRssMb + ' MB', 14)}${r.fsPeakRssMb} MB${flag}`,
  );
}
console.log(`process peak RSS (maxRSS): ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
mkdirSync(path.join(root, 'bench/results'), { recursive: true });
writeFileSync(path.join(root, 'bench/results/remote-fs.json'), JSON.stringify({ date: new Date().toISOString(), sizeMb: SIZE / MB, results }, null, 2));

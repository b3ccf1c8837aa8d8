#!/usr/bin/env node
// Remote filesystem throughput: 256 MB upload and download through the Ferry
// Fs of @ferry/fs-s3, @ferry/fs-azblob and @ferry/fs-gcs (openWrite /
// openRead) against the SDK used directly on the same server, in the same
// run. Starts the test servers (s3rver, Azurite, the GCS emulator) with the
// project's scripts when they are down. Through Ferry's HTTP API (the second
// hop included): bench/remote-http.bench.mjs.
//
//   node bench/remote-fs.bench.mjs
//
// bench-servers: s3 azurite gcs
//
// Env: FERRY_BENCH_MB (default 256), FERRY_BENCH_ROUNDS (default 2, best of),
// FERRY_BENCH_ONLY=s3|azblob|gcs, FERRY_BENCH_FS_OPTS='{"download_concurrency":1}' (extra
// plugin options, e.g. to compare part sizes). Prints MB/s per path, the Fs/SDK ratio (aim >= 0.8)
// and the peak RSS sampled during each phase; writes bench/results/remote-fs.json.
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { AZURITE, GCS, S3, azContainer, azRemovePrefix, gcsBucket, gcsRemovePrefix, gcsServiceAccountB64, s3Client, s3RemovePrefix } from './lib/backends.mjs';
import { MB, drain, ensureServers, envNumber, patternSource, reexecWithTypeScript, timed, withPeakRss, writeResults } from './lib/common.mjs';

// The plugins are TypeScript sources (exports condition "ferry-src"): re-run
// this file under the TypeScript loader tap uses when it is not loaded yet.
reexecWithTypeScript(import.meta.url);

const SIZE = envNumber('FERRY_BENCH_MB', 256) * MB;
const ROUNDS = envNumber('FERRY_BENCH_ROUNDS', 2);
const ONLY = process.env.FERRY_BENCH_ONLY ?? '';
const FS_OPTS = JSON.parse(process.env.FERRY_BENCH_FS_OPTS ?? '{}');

/** SIZE bytes in 1 MiB chunks (one random buffer reused: no 256 MB in memory). */
const source = () => patternSource(SIZE);

/** Runs fn, returning MB/s and the peak RSS of this process sampled every 20 ms meanwhile. */
async function measure(fn) {
  global.gc?.();
  const { value, peakRssMb } = await withPeakRss(() => timed(SIZE, fn));
  return { ...value, peakRssMb };
}

async function s3Cases() {
  const { s3Provider } = await import('@ferry/fs-s3');
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const { endpoint, bucket } = S3;
  const prefix = `bench-${randomUUID()}/`;
  const opts = { bucket, endpoint, region: S3.region, access_key: S3.accessKey, access_secret: S3.secret, force_path_style: true };
  const fs = await s3Provider.create({ ...opts, ...FS_OPTS, key_prefix: prefix }, { username: 'bench', dataDir: '/nonexistent' });
  const client = await s3Client();
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
      await s3RemovePrefix(client, prefix);
      await fs.close();
      client.destroy();
    },
  };
}

async function azCases() {
  const { azBlobProvider } = await import('@ferry/fs-azblob');
  const container = await azContainer();
  const prefix = `bench-${randomUUID()}/`;
  const fs = await azBlobProvider.create(
    { container: AZURITE.container, use_emulator: true, endpoint: AZURITE.endpoint, ...FS_OPTS, key_prefix: prefix },
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
      await azRemovePrefix(container, prefix);
      await fs.close();
    },
  };
}

async function gcsCases() {
  const { gcsProvider } = await import('@ferry/fs-gcs');
  const bucket = await gcsBucket();
  const prefix = `bench-${randomUUID()}/`;
  const fs = await gcsProvider(GCS.pluginConfig).create(
    { bucket: GCS.bucket, credentials: gcsServiceAccountB64(), ...FS_OPTS, key_prefix: prefix },
    { username: 'bench', dataDir: '/nonexistent' },
  );
  return {
    name: 'gcs (emulator)',
    sdkUpload: async () => {
      // Same chunk size as the Fs default (8 MB, one request at a time), crc32c as the Fs.
      await pipeline(source(), bucket.file(`${prefix}sdk.bin`).createWriteStream({ resumable: true, chunkSize: 8 * MB, validation: 'crc32c' }));
      return SIZE;
    },
    fsUpload: async () => {
      const h = await fs.openWrite('/fs.bin', { size: SIZE });
      await pipeline(source(), h.stream);
      return (await h.done).size;
    },
    sdkDownload: async () => drain(bucket.file(`${prefix}sdk.bin`).createReadStream({ validation: 'crc32c', decompress: false })),
    fsDownload: async () => drain(await fs.openRead('/fs.bin')),
    async cleanup() {
      await gcsRemovePrefix(bucket, prefix);
      await fs.close();
    },
  };
}

const SERVER_OF = { s3: S3, azblob: AZURITE, gcs: GCS };
const backends = [
  ['s3', s3Cases],
  ['azblob', azCases],
  ['gcs', gcsCases],
].filter(([k]) => !ONLY || ONLY === k);
await ensureServers(backends.map(([k]) => SERVER_OF[k]));
const results = [];
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
writeResults('remote-fs', { sizeMb: SIZE / MB, results });

#!/usr/bin/env node
// Large S3 "directories" listed through Ferry (issue 15, part 5, S3 half):
// GET /api/v2/user/dirs of a user on S3 against ListObjectsV2 used directly
// (every page, Delimiter '/') on the same server, in the same run.
//
//   node bench/s3-list.bench.mjs          (or: node bench/run.mjs s3-list)
//
// bench-servers: s3
//
// Two directories are created in s3rver with empty objects: "small" with
// COUNT/10 objects and "big" with COUNT. A real `ferry serve` (compiled CLI,
// SQLite) lists each over HTTP; the listing must stream: Ferry asks S3 for
// the next 1,000-key page only as the client reads, so the time to the first
// byte stays that of one page and Ferry's resident memory does not grow with
// the size of the directory. Printed per directory: entries received, the
// SDK's time for all pages and for the first, Ferry's time to the first body
// byte and to the end, the ratio SDK time / Ferry time (aim >= 0.8x), and
// how much Ferry's RSS rose during the listing (aim: the same for COUNT/10
// and COUNT, i.e. flat).
//
// Env: FERRY_BENCH_LIST_COUNT (default 10000 objects; the figure is
// 100000, which s3rver takes several minutes to create: one directory and two
// files per object), FERRY_BENCH_ROUNDS (default 2, best of), FERRY_BENCH_NO_BUILD=1.
// Writes bench/results/s3-list.json.
import http from 'node:http';
import path from 'node:path';
import { S3, benchPrefix, ferryFilesystem, s3Client } from './lib/backends.mjs';
import { ensureServers, envNumber, rssOf, scratchWorkspace, withPeakRss, writeResults, runBench } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';

const COUNT = Math.max(10, Math.round(envNumber('FERRY_BENCH_LIST_COUNT', 10_000)));
const ROUNDS = Math.max(1, envNumber('FERRY_BENCH_ROUNDS', 2));
const log = (...a) => console.log('[s3-list]', ...a);
const { dir: scratch, children, cleanup } = scratchWorkspace(64, 'ferry-bench-s3-list-');

/** Puts `n` empty objects under `prefix`, 32 requests in flight. */
async function createObjects(client, PutObjectCommand, prefix, n) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await client.send(new PutObjectCommand({ Bucket: S3.bucket, Key: `${prefix}f-${String(i).padStart(7, '0')}.txt`, Body: '' }));
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** Deletes everything under `prefix`, page by page. */
async function removeAll(client, prefix) {
  const { DeleteObjectsCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  for (;;) {
    const out = await client.send(new ListObjectsV2Command({ Bucket: S3.bucket, Prefix: prefix, MaxKeys: 1000 }));
    const keys = (out.Contents ?? []).map((o) => ({ Key: o.Key }));
    if (!keys.length) return;
    await client.send(new DeleteObjectsCommand({ Bucket: S3.bucket, Delete: { Objects: keys } }));
  }
}

/** Every page of a delimited listing; resolves to { entries, firstMs, totalMs }. */
async function sdkList(client, ListObjectsV2Command, prefix) {
  const t0 = performance.now();
  let firstMs;
  let entries = 0;
  let token;
  do {
    const out = await client.send(new ListObjectsV2Command({ Bucket: S3.bucket, Prefix: prefix, Delimiter: '/', MaxKeys: 1000, ContinuationToken: token }));
    firstMs ??= performance.now() - t0;
    entries += (out.Contents?.length ?? 0) + (out.CommonPrefixes?.length ?? 0);
    token = out.IsTruncated ? out.NextContinuationToken : undefined;
  } while (token);
  return { entries, firstMs, totalMs: performance.now() - t0 };
}

/** GET of a listing, counting entries as the body streams in; resolves to { entries, firstMs, totalMs }. */
function ferryList(url, token) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    http
      .get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`${url}: ${res.statusCode}`));
        }
        let firstMs;
        let entries = 0;
        let tail = '';
        res.setEncoding('utf8');
        res.on('data', (s) => {
          firstMs ??= performance.now() - t0;
          const text = tail + s;
          for (let i = text.indexOf('{"name":'); i !== -1; i = text.indexOf('{"name":', i + 1)) entries++;
          tail = text.slice(-7); // shorter than the marker: never counted twice
        });
        res.on('end', () => resolve({ entries, firstMs, totalMs: performance.now() - t0 }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function main() {
  await ensureServers([S3]);
  buildFerry(log);
  const { ListObjectsV2Command, PutObjectCommand } = await import('@aws-sdk/client-s3');
  const client = await s3Client();
  const prefix = benchPrefix('bench-list');
  const dirs = [
    { name: 'small', count: Math.max(1, Math.round(COUNT / 10)) },
    { name: 'big', count: COUNT },
  ];
  const ferry = await startFerry({ dir: path.join(scratch, 'ferry'), plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-s3' }], children });
  const results = [];
  try {
    for (const d of dirs) {
      const t0 = performance.now();
      await createObjects(client, PutObjectCommand, `${prefix}/${d.name}/`, d.count);
      log(`created ${d.count} objects in ${d.name}/ in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    const token = await ferry.createUser({
      username: 'bench-list',
      password: 'bench-user-password-1',
      home_dir: path.join(scratch, 'home'),
      filesystem: ferryFilesystem('s3', prefix),
    });
    // one small listing first: the S3 client, the user's session and the route are warm for every measured run
    await ferryList(`${ferry.url}/api/v2/user/dirs?path=%2F`, token);
    for (const d of dirs) {
      const best = {};
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? ['sdk', 'ferry'] : ['ferry', 'sdk'];
        for (const who of order) {
          let r;
          if (who === 'sdk') r = await sdkList(client, ListObjectsV2Command, `${prefix}/${d.name}/`);
          else {
            const before = rssOf(ferry.proc.pid);
            const { value, peakRssMb } = await withPeakRss(() => ferryList(`${ferry.url}/api/v2/user/dirs?path=%2F${d.name}`, token), ferry.proc.pid);
            r = { ...value, rssGrowthMb: peakRssMb - before, peakRssMb };
          }
          if (r.entries !== d.count) throw new Error(`${who} listed ${r.entries} entries of ${d.name}, expected ${d.count}`);
          log(`${d.name} round ${round + 1}: ${who} ${r.totalMs.toFixed(0)} ms (first ${r.firstMs.toFixed(0)} ms)`);
          if (!best[who] || r.totalMs < best[who].totalMs) best[who] = { ...r, rssGrowthMb: Math.max(r.rssGrowthMb ?? 0, best[who]?.rssGrowthMb ?? 0) };
        }
      }
      results.push({
        dir: d.name,
        entries: d.count,
        sdk_total_ms: +best.sdk.totalMs.toFixed(1),
        sdk_first_page_ms: +best.sdk.firstMs.toFixed(1),
        ferry_first_byte_ms: +best.ferry.firstMs.toFixed(1),
        ferry_total_ms: +best.ferry.totalMs.toFixed(1),
        ratio: +(best.sdk.totalMs / best.ferry.totalMs).toFixed(2),
        ferry_rss_growth_mb: +best.ferry.rssGrowthMb.toFixed(1),
        ferry_peak_rss_mb: +best.ferry.peakRssMb.toFixed(1),
      });
    }
  } finally {
    await ferry.stop();
    await removeAll(client, `${prefix}/`).catch((err) => log(`cleanup failed: ${err.message}`));
    client.destroy();
  }
  const pad = (s, n) => String(s).padEnd(n);
  console.log('');
  console.log(
    `S3 directory listings: GET /api/v2/user/dirs vs ListObjectsV2 direct (all pages), best of ${ROUNDS}; ratio = SDK time / Ferry time, aim >= 0.8x`,
  );
  console.log(`${pad('dir', 8)}${pad('entries', 10)}${pad('SDK all/first', 20)}${pad('Ferry end/first byte', 24)}${pad('ratio', 8)}Ferry RSS growth (peak)`);
  for (const r of results) {
    console.log(
      pad(r.dir, 8) +
        pad(r.entries, 10) +
        pad(`${r.sdk_total_ms.toFixed(0)}/${r.sdk_first_page_ms.toFixed(0)} ms`, 20) +
        pad(`${r.ferry_total_ms.toFixed(0)}/${r.ferry_first_byte_ms.toFixed(0)} ms`, 24) +
        pad(`${r.ratio}x`, 8) +
        `+${r.ferry_rss_growth_mb} MB (${r.ferry_peak_rss_mb} MB)${r.ratio < 0.8 ? '  (below 0.8x)' : ''}`,
    );
  }
  const [small, big] = results;
  console.log(
    `memory: +${small.ferry_rss_growth_mb} MB for ${small.entries} entries, +${big.ferry_rss_growth_mb} MB for ${big.entries} (flat when about equal); ` +
      `first byte ${small.ferry_first_byte_ms.toFixed(0)} vs ${big.ferry_first_byte_ms.toFixed(0)} ms`,
  );
  console.log(
    `load average: ${(await import('node:os'))
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  writeResults('s3-list', { count: COUNT, rounds: ROUNDS, node: process.version, results });
}

runBench('s3-list', main, cleanup);

#!/usr/bin/env node
// Multipart upload cost per part: POST /api/v2/user/files with many small
// file parts, against a real `ferry serve` process (compiled CLI), over
// loopback. Run from the repository root:
//
//   node bench/multipart.bench.mjs        (or: node bench/run.mjs multipart)
//
// For each backend (fs-local, fs-crypt) and each part count of BENCH_PARTS
// (default "250,500,1000,2000"), one request carries that many parts of
// BENCH_PART_BYTES bytes (default 1024), each into a fresh directory. The
// body is produced by a generator as it is sent (never held in memory).
// Prints the time of the whole request (first byte sent to answer read), the
// CPU time the Ferry process spent on it (user + system, all its threads:
// the steadier figure on a busy machine), both per part, and the ratio of
// the per-part CPU cost of the largest count to the smallest (about 1 when
// the cost is linear); every file of every request is checked afterwards
// through the listing (names and sizes). Aim: 1,000 parts in well under a
// second.
// Env: BENCH_PARTS, BENCH_PART_BYTES, BENCH_ROUNDS (default 3, best round
// kept), FERRY_BENCH_DIR (scratch directory), FERRY_BENCH_NO_BUILD=1 (use
// core/dist as it is), FERRY_BENCH_NODE_ARGS (node options of the Ferry
// process, e.g. --cpu-prof --cpu-prof-dir=DIR). Writes bench/results/multipart.json.
import http from 'node:http';
import { Readable } from 'node:stream';
import { cpuSecondsOf, envNumber, scratchWorkspace, writeResults } from './lib/common.mjs';
import { buildFerry, startFerry } from './lib/ferry-server.mjs';

const PARTS = (process.env.BENCH_PARTS || '250,500,1000,2000').split(',').map((s) => Number(s.trim()));
if (PARTS.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error('BENCH_PARTS must be a comma-separated list of positive integers');
const PART_BYTES = envNumber('BENCH_PART_BYTES', 1024);
const ROUNDS = Math.max(1, envNumber('BENCH_ROUNDS', 3));
const MAX_PARTS = Math.max(...PARTS);
const BOUNDARY = '----ferry-bench-multipart';
const NODE_ARGS = (process.env.FERRY_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);

const { dir: scratch, children, cleanup } = scratchWorkspace(64 + (MAX_PARTS * PART_BYTES * ROUNDS * PARTS.length * 2) / (1024 * 1024), 'ferry-bench-mp-');

function log(...a) {
  console.log('[multipart]', ...a);
}

function partName(i) {
  return `f${String(i).padStart(6, '0')}.bin`;
}

/** The multipart body of `n` parts, generated as it is sent, and its exact length. */
function multipartBody(n) {
  const data = Buffer.alloc(PART_BYTES, 0x61);
  const head = (i) =>
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="filenames"; filename="${partName(i)}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
  const tail = Buffer.from(`--${BOUNDARY}--\r\n`);
  const crlf = Buffer.from('\r\n');
  let length = tail.length;
  for (let i = 0; i < n; i++) length += head(i).length + data.length + crlf.length;
  const stream = Readable.from(
    (function* () {
      // about 64 KiB per chunk, as a client socket would send them
      let batch = [];
      let size = 0;
      for (let i = 0; i < n; i++) {
        const h = head(i);
        batch.push(h, data, crlf);
        size += h.length + data.length + crlf.length;
        if (size >= 64 * 1024) {
          yield Buffer.concat(batch, size);
          batch = [];
          size = 0;
        }
      }
      batch.push(tail);
      yield Buffer.concat(batch);
    })(),
    { objectMode: false },
  );
  return { stream, length };
}

/** Sends one multipart request of `n` parts into `dir`; resolves to { status, secs, text }. */
function upload(url, token, dir, n) {
  const { stream, length } = multipartBody(n);
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(`${url}/api/v2/user/files?path=${encodeURIComponent(dir)}&mkdir_parents=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, secs: Number(process.hrtime.bigint() - t0) / 1e9, text }));
    });
    stream.pipe(req);
  });
}

/** Checks that `dir` holds exactly the `n` files of a request, each of PART_BYTES bytes. */
async function check(url, token, dir, n) {
  const r = await fetch(`${url}/api/v2/user/dirs?path=${encodeURIComponent(dir)}`, { headers: { authorization: `Bearer ${token}` } });
  if (r.status !== 200) throw new Error(`listing ${dir}: ${r.status}`);
  const list = await r.json();
  if (list.length !== n) throw new Error(`${dir}: ${list.length} entries, expected ${n}`);
  const names = new Set(list.map((e) => e.name));
  for (let i = 0; i < n; i++) if (!names.has(partName(i))) throw new Error(`${dir}: ${partName(i)} missing`);
  const wrong = list.find((e) => e.size !== PART_BYTES);
  if (wrong) throw new Error(`${dir}/${wrong.name}: ${wrong.size} bytes, expected ${PART_BYTES}`);
}

async function main() {
  buildFerry(log);
  const results = {};
  const backends = [
    { name: 'fs-local', user: {} },
    {
      name: 'fs-crypt',
      user: { filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'bench-multipart-passphrase' } } } },
    },
  ];
  const ferry = await startFerry({
    dir: scratch,
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }],
    env: { SERVICE_HTTPD__MAX_MULTIPART_FILES: String(MAX_PARTS) },
    nodeArgs: NODE_ARGS,
    children,
  });
  try {
    for (const b of backends) {
      const token = await ferry.createUser({ username: `mp-${b.name}`, password: 'bench-user-password-1', home_dir: `${scratch}/homes/${b.name}`, ...b.user });
      // one request first, so the figures do not include the first-use costs (JIT, scrypt of fs-crypt)
      const warm = await upload(ferry.url, token, '/warm-up', 50);
      if (warm.status !== 201) throw new Error(`warm-up: ${warm.status} ${warm.text}`);
      results[b.name] = {};
      for (const n of PARTS) {
        let best = Infinity;
        let bestCpu = Infinity;
        for (let round = 0; round < ROUNDS; round++) {
          const dir = `/n${n}-r${round}`;
          const cpu0 = cpuSecondsOf(ferry.proc.pid);
          const r = await upload(ferry.url, token, dir, n);
          const cpu = cpuSecondsOf(ferry.proc.pid) - cpu0;
          if (r.status !== 201) throw new Error(`${b.name}, ${n} parts: ${r.status} ${r.text}`);
          await check(ferry.url, token, dir, n);
          best = Math.min(best, r.secs);
          bestCpu = Math.min(bestCpu, cpu);
        }
        results[b.name][n] = { secs: best, msPerPart: (best * 1000) / n, cpuSecs: bestCpu, cpuMsPerPart: (bestCpu * 1000) / n };
        log(
          `${b.name}: ${n} parts of ${PART_BYTES} B in ${best.toFixed(3)} s (${((best * 1000) / n).toFixed(3)} ms per part), ` +
            `server CPU ${bestCpu.toFixed(2)} s (${((bestCpu * 1000) / n).toFixed(3)} ms per part), best of ${ROUNDS}` +
            (n === 1000 ? '   aim < 0.5 s' : ''),
        );
      }
      const lo = results[b.name][Math.min(...PARTS)];
      const hi = results[b.name][MAX_PARTS];
      results[b.name].growth = hi.cpuMsPerPart / lo.cpuMsPerPart;
      log(`${b.name}: per-part CPU at ${MAX_PARTS} parts / at ${Math.min(...PARTS)} parts = ${results[b.name].growth.toFixed(2)}x (1 = linear)   aim about 1`);
    }
  } finally {
    await ferry.stop();
  }
  writeResults('multipart', { partBytes: PART_BYTES, rounds: ROUNDS, results });
  cleanup();
}

main().catch((err) => {
  console.error(err);
  cleanup();
  process.exit(1);
});

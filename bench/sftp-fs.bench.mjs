#!/usr/bin/env node
// SFTP throughput: @ferry/fs-sftp (SftpFs) against ssh2-sftp-client used
// directly, same sshd, same run. Starts the test sshd with the project's
// script (scripts/servers/start-sftp.sh) when it is down. Run from the
// repository root:
//
//   node bench/sftp-fs.bench.mjs          (or: node bench/run.mjs sftp-fs)
//
// bench-servers: sftp
//
// Options (env): BENCH_MB (default 256), BENCH_ROUNDS (default 2, best round kept),
// FERRY_BENCH_SFTP_DIR (a directory the test user can write, when its login directory is not).
// Every phase runs in its own child process so its peak RSS is its own.
// Phases: upload and download of BENCH_MB through
//   fs        SftpFs.openWrite / openRead (streams, pooled connection, temp file + rename)
//   client    ssh2-sftp-client put(Readable) / get(path, Writable): the library's stream API
//   fast      ssh2-sftp-client fastPut / fastGet: local file <-> remote, parallel requests
// Prints MB/s, the ratio fs / baseline (aim: >= 0.8x) and peak RSS per phase
// (and how much of it came during the transfer, above the RSS after startup:
// the fs phases load @ferry/core, so their starting RSS is higher).
import { spawnSync } from 'node:child_process';
import { createWriteStream, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { SFTP, sftpClient, sftpDir } from './lib/backends.mjs';
import { MB, countingSink, ensureServers, envNumber, patternSource, tsArgs, tsEnv } from './lib/common.mjs';

const SIZE_MB = envNumber('BENCH_MB', 256);
const SIZE = SIZE_MB * MB;
const ROUNDS = envNumber('BENCH_ROUNDS', 2);
const { host: HOST, port: PORT, username: USER, password: PASSWORD } = SFTP;
const DIR = sftpDir('ferry-bench');
const self = fileURLToPath(import.meta.url);
const localFile = process.env.FERRY_BENCH_TMP ?? path.join(os.tmpdir(), `ferry-sftp-bench-${process.pid}.bin`);

/** BENCH_MB of pseudo-random bytes (a random 1 MB block, repeated). */
const source = () => patternSource(SIZE);
const counter = countingSink;

async function runPhase(phase) {
  const started = { t: 0, rss: 0 };
  const time = () => {
    started.rss = process.memoryUsage().rss;
    started.t = performance.now();
  };
  let bytes = SIZE;
  if (phase.startsWith('fs-')) {
    const { sftpProvider, closeAllPools } = await import('@ferry/fs-sftp');
    const fs = await sftpProvider().create(
      { endpoint: `${HOST}:${PORT}`, username: USER, password: PASSWORD, prefix: DIR },
      { username: 'bench', dataDir: os.tmpdir() },
    );
    await fs.stat('/'); // connect before timing, like the client phases
    time();
    if (phase === 'fs-upload') {
      const h = await fs.openWrite('/fs.bin', { size: SIZE });
      await Promise.all([pipeline(source(), h.stream), h.done]);
    } else {
      const sink = counter();
      await pipeline(await fs.openRead('/fs.bin'), sink);
      bytes = sink.bytes;
    }
    const ms = performance.now() - started.t;
    await fs.close();
    closeAllPools();
    return { ms, bytes, startRss: started.rss };
  }
  const c = await sftpClient();
  await c.mkdir(DIR, true);
  const remote = `${DIR}/${phase.split('-')[0]}.bin`;
  time();
  if (phase === 'client-upload') await c.put(source(), remote);
  else if (phase === 'client-download') {
    const sink = counter();
    await c.get(remote, sink);
    bytes = sink.bytes;
  } else if (phase === 'fast-upload') await c.fastPut(localFile, remote);
  else if (phase === 'fast-download') await c.fastGet(remote, localFile);
  const ms = performance.now() - started.t;
  await c.end();
  return { ms, bytes, startRss: started.rss };
}

if (process.argv[2]) {
  const r = await runPhase(process.argv[2]);
  if (r.bytes !== SIZE) throw new Error(`${process.argv[2]}: moved ${r.bytes} bytes, expected ${SIZE}`);
  const rssMb = process.resourceUsage().maxRSS / 1024;
  console.log(JSON.stringify({ ms: r.ms, bytes: r.bytes, rssMb, growthMb: rssMb - r.startRss / MB }));
  process.exit(0);
}

// Parent: starts the sshd when it is down, prepares the local file for fastPut, runs each phase in a child.
await ensureServers([SFTP]);
await pipeline(source(), createWriteStream(localFile));
const phases = ['client-upload', 'fs-upload', 'fast-upload', 'client-download', 'fs-download', 'fast-download'];
const best = {};
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const phase of phases) {
      const r = spawnSync(process.execPath, [...tsArgs, self, phase], {
        env: { ...process.env, ...tsEnv, FERRY_BENCH_TMP: localFile },
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
  rmSync(localFile, { force: true });
}

const fmt = (n, w = 7) => n.toFixed(1).padStart(w);
console.log(`SFTP ${SIZE_MB} MB, ${HOST}:${PORT}, best of ${ROUNDS} round(s), node ${process.version}`);
console.log('phase             MB/s   peak RSS MB   (of which during the transfer)');
for (const p of phases) console.log(`${p.padEnd(16)} ${fmt(best[p].mbps)} ${fmt(best[p].rssMb, 9)}   ${fmt(best[p].growthMb, 9)}`);
for (const dir of ['upload', 'download']) {
  const fs = best[`fs-${dir}`].mbps;
  console.log(
    `ratio ${dir.padEnd(8)}  fs/client ${(fs / best[`client-${dir}`].mbps).toFixed(2)}x   fs/fast ${(fs / best[`fast-${dir}`].mbps).toFixed(2)}x   (aim >= 0.8x)`,
  );
}

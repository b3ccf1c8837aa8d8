#!/usr/bin/env node
// Upload throughput of the web client against curl, measured in the same run, over loopback:
//
//   node bench/web-upload.bench.mjs
//
//   ui     Debian's chromium (headless, playwright-core) signed in to the web client, a file of
//          BENCH_MB MiB picked in the upload button: from the pick to "Finished" (over 8 MiB the UI
//          sends it through the resumable TUS endpoint /api/v2/user/chunked-uploads, in chunks of
//          the binding's upload_chunk_size, BENCH_CHUNK_MB)
//   curl   the same file with curl -T to POST /api/v2/user/files/upload (the single-request route
//          the UI uses for small files), as the same user, to the same server
// Rounds alternate between the two sides; the best of each is kept. Aim: ui >= 0.8x curl.
// Env: BENCH_MB (default 256), BENCH_CHUNK_MB (default 64), BENCH_ROUNDS (default 3),
// FERRY_CHROMIUM (default /usr/bin/chromium), FERRY_BENCH_DIR (scratch directory).
// Needs the compiled core and the built web client (npm run build). Writes bench/results/web-upload.json.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { statSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { MB, makeFile, runBench, scratchWorkspace, writeResults } from './lib/common.mjs';

const SIZE_MB = Number(process.env.BENCH_MB ?? 256);
const CHUNK_MB = Number(process.env.BENCH_CHUNK_MB ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHROMIUM = process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium';
const USER = { username: 'bench', password: 'bench-user-password-1' };
const AIM = 0.8;

const { dir: scratch, cleanup } = scratchWorkspace(3 * SIZE_MB + 64, 'ferry-bench-web-upload-');
const log = (...a) => console.log('[web-upload]', ...a);
const mbps = (bytes, secs) => bytes / MB / secs;

async function main() {
  const { createTestApp } = await import('@ferry/core/testing');
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/web-client' }],
    config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: CHUNK_MB }] } },
  });
  let browser;
  try {
    await ta.app.start();
    const origin = `http://127.0.0.1:${ta.server.info.port}`;
    const home = path.join(scratch, 'home');
    const admin = await ta.adminToken();
    const r = await ta.inject('POST', '/api/v2/users', { token: admin, payload: { ...USER, status: 1, home_dir: home, permissions: { '/': ['*'] } } });
    if (r.statusCode !== 201) throw new Error(`add user: ${r.payload}`);
    const token = await ta.userToken(USER.username, USER.password);
    const file = path.join(scratch, 'upload.bin');
    makeFile(file, SIZE_MB);
    const size = statSync(file).size;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${origin}/web/client/`);
    await page.getByLabel('Username').fill(USER.username);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Home' }).waitFor();

    const ui = async (round) => {
      if (round > 0) await page.getByRole('button', { name: 'Clear finished' }).click();
      const t0 = performance.now();
      await page.getByLabel('Upload files').setInputFiles(file);
      const dialog = page.getByRole('dialog');
      // from the second round the name exists: replace it
      await Promise.race([
        page.locator('.upload-total .upload-status', { hasText: 'Finished' }).waitFor({ timeout: 600_000 }),
        dialog.waitFor({ timeout: 600_000 }).then(async () => {
          await dialog.getByRole('button', { name: 'Continue' }).click();
          await page.locator('.upload-total .upload-status', { hasText: 'Finished' }).waitFor({ timeout: 600_000 });
        }),
      ]);
      const secs = (performance.now() - t0) / 1000;
      if (statSync(path.join(home, 'upload.bin')).size !== size) throw new Error('the UI upload is incomplete');
      return secs;
    };
    // not spawnSync: the server runs in this process
    const curl = async () => {
      const c = await promisify(execFile)(
        'curl',
        [
          '-s',
          '-S',
          '--fail',
          '-o',
          '/dev/null',
          '-w',
          '%{time_total}',
          '-H',
          `Authorization: Bearer ${token}`,
          '-T',
          file,
          '-X',
          'POST',
          `${origin}/api/v2/user/files/upload?path=/curl.bin`,
        ],
        { encoding: 'utf8' },
      );
      return Number(c.stdout.trim());
    };

    let bestUi = Infinity;
    let bestCurl = Infinity;
    for (let round = 0; round < ROUNDS; round++) {
      const c = await curl();
      const u = await ui(round);
      bestCurl = Math.min(bestCurl, c);
      bestUi = Math.min(bestUi, u);
      log(`round ${round + 1}: ui ${mbps(size, u).toFixed(0)} MB/s, curl ${mbps(size, c).toFixed(0)} MB/s`);
    }
    const ratio = bestCurl / bestUi;
    log(`${SIZE_MB} MiB: web client ${mbps(size, bestUi).toFixed(0)} MB/s, curl ${mbps(size, bestCurl).toFixed(0)} MB/s`);
    console.log(`web-upload: ratio ${ratio.toFixed(2)}x curl (aim >= ${AIM}x)${ratio >= AIM ? '' : '  BELOW AIM'}`);
    writeResults('web-upload', {
      size_mb: SIZE_MB,
      chunk_mb: CHUNK_MB,
      rounds: ROUNDS,
      ui_mb_s: Number(mbps(size, bestUi).toFixed(1)),
      curl_mb_s: Number(mbps(size, bestCurl).toFixed(1)),
      ratio: Number(ratio.toFixed(3)),
      aim: AIM,
    });
  } finally {
    await browser?.close();
    await ta.close();
  }
}

runBench('web-upload', main, cleanup);

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
// The browser's own ceiling, measured in the same rounds: one XMLHttpRequest of the same file from
// the same chromium to a server that only counts the bytes (no Ferry), against curl to that server.
// Env: BENCH_MB (default 256), BENCH_CHUNK_MB (default 4096, as shipped), BENCH_ROUNDS (default 5),
// FERRY_CHROMIUM (default /usr/bin/chromium), FERRY_BENCH_DIR (scratch directory).
// Needs the compiled core and the built web client (npm run build). Writes bench/results/web-upload.json.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { MB, makeFile, runBench, scratchWorkspace, writeResults } from './lib/common.mjs';

const SIZE_MB = Number(process.env.BENCH_MB ?? 256);
// the shipped configuration's upload_chunk_size (config/default.yaml)
const CHUNK_MB = Number(process.env.BENCH_CHUNK_MB ?? 4096);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
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
  let sink;
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
      if (round > 0) {
        await page.getByRole('button', { name: 'Clear finished' }).click();
        // a new name each round, as for curl: no conflict question is timed
        rmSync(path.join(home, 'upload.bin'));
        await page.reload();
        await page.getByRole('heading', { name: 'Home' }).waitFor();
      }
      const t0 = performance.now();
      await page.getByLabel('Upload files').setInputFiles(file);
      await page.locator('.upload-total .upload-status', { hasText: 'Finished' }).waitFor({ timeout: 600_000 });
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

    // the ceiling: a server that counts the bytes and answers, nothing else
    sink = http.createServer((req, res) => {
      if (req.method === 'GET') return res.setHeader('content-type', 'text/html').end('<!doctype html><input type="file" id="f">');
      let n = 0;
      req.on('data', (c) => (n += c.length));
      req.on('end', () => res.end(String(n)));
    });
    await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const sinkUrl = `http://127.0.0.1:${sink.address().port}/`;
    const sinkPage = await (await browser.newContext()).newPage();
    await sinkPage.goto(sinkUrl);
    await sinkPage.setInputFiles('#f', file);
    const browserToSink = () =>
      sinkPage.evaluate(async () => {
        const f = document.getElementById('f').files[0];
        const t0 = performance.now();
        await new Promise((resolve, reject) => {
          const x = new XMLHttpRequest();
          x.open('POST', '/');
          x.onload = resolve;
          x.onerror = reject;
          x.send(f);
        });
        return (performance.now() - t0) / 1000;
      });
    const curlToSink = async () => {
      const c = await promisify(execFile)('curl', ['-s', '-S', '--fail', '-o', '/dev/null', '-w', '%{time_total}', '-T', file, '-X', 'POST', sinkUrl], {
        encoding: 'utf8',
      });
      return Number(c.stdout.trim());
    };

    const best = { ui: Infinity, curl: Infinity, browserSink: Infinity, curlSink: Infinity };
    for (let round = 0; round < ROUNDS; round++) {
      const c = await curl();
      const u = await ui(round);
      const cs = await curlToSink();
      const bs = await browserToSink();
      best.curl = Math.min(best.curl, c);
      best.ui = Math.min(best.ui, u);
      best.curlSink = Math.min(best.curlSink, cs);
      best.browserSink = Math.min(best.browserSink, bs);
      const f = (secs) => mbps(size, secs).toFixed(0);
      log(`round ${round + 1}: ui ${f(u)} MB/s, curl ${f(c)} MB/s; to the counting server: chromium ${f(bs)} MB/s, curl ${f(cs)} MB/s`);
    }
    const ratio = best.curl / best.ui;
    const ceiling = best.curlSink / best.browserSink;
    log(`${SIZE_MB} MiB: web client ${mbps(size, best.ui).toFixed(0)} MB/s, curl ${mbps(size, best.curl).toFixed(0)} MB/s`);
    console.log(`web-upload: ratio ${ratio.toFixed(2)}x curl (aim >= ${AIM}x)${ratio >= AIM ? '' : '  BELOW AIM'}`);
    console.log(
      `web-upload: chromium's own ceiling ${ceiling.toFixed(2)}x of curl (one XHR of the file to a counting server, no Ferry) (aim: none, it bounds the ratio above)`,
    );
    writeResults('web-upload', {
      size_mb: SIZE_MB,
      chunk_mb: CHUNK_MB,
      rounds: ROUNDS,
      ui_mb_s: Number(mbps(size, best.ui).toFixed(1)),
      curl_mb_s: Number(mbps(size, best.curl).toFixed(1)),
      ratio: Number(ratio.toFixed(3)),
      aim: AIM,
      browser_to_counting_server_mb_s: Number(mbps(size, best.browserSink).toFixed(1)),
      curl_to_counting_server_mb_s: Number(mbps(size, best.curlSink).toFixed(1)),
      browser_ceiling_ratio: Number(ceiling.toFixed(3)),
    });
  } finally {
    await browser?.close();
    sink?.close();
    await ta.close();
  }
}

runBench('web-upload', main, cleanup);

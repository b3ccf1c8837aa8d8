#!/usr/bin/env node
// Cost of authenticating repeated requests: the chunks of a TUS upload to a
// password-protected share, and repeated basic-auth token requests, with the
// password cache off (auth_cache.ttl 0: argon2 on every request, the behaviour
// before the cache) and on (auth_cache.ttl 60), in the same run. Run from the
// repository root:
//
//   node bench/share-auth.bench.mjs          # --chunks N (default 40), --chunk-kib N (default 64), --tokens N (default 20)
//
// Both servers are real apps (SQLite in memory, fs-local) reached through hapi inject, so the
// figures are the server's cost per request: wall-clock ms and process CPU ms per PATCH chunk
// and per GET /api/v2/user/token, and the ratio cache-on / cache-off (below 1: cheaper).
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!process.execArgv.includes('--conditions=ferry-src')) {
  const loader = path.join(root, 'node_modules/@tapjs/typescript/dist/esm/import.mjs');
  const r = spawnSync(
    process.execPath,
    [`--import=${loader}`, '--conditions=ferry-src', '--no-warnings', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
    },
  );
  process.exit(r.status ?? 1);
}

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return Number(i >= 0 ? process.argv[i + 1] : dflt);
};
const CHUNKS = arg('chunks', 40);
const CHUNK = arg('chunk-kib', 64) * 1024;
const TOKENS = arg('tokens', 20);
const PASSWORD = 'user-password-1';

const { createTestApp } = await import(path.join(root, 'core/src/testing.ts'));

async function setup(ttl) {
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }],
    config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, upload_chunk_size: 1 }] }, auth_cache: { ttl } },
  });
  const home = path.join(ta.dataDir, 'homes', 'owner');
  mkdirSync(path.join(home, 'drop'), { recursive: true });
  const admin = await ta.adminToken();
  const u = await ta.inject('POST', '/api/v2/users', {
    token: admin,
    payload: { username: 'owner', password: PASSWORD, status: 1, permissions: { '/': ['*'] }, home_dir: home },
  });
  if (u.statusCode !== 201) throw new Error(`user: ${u.statusCode} ${u.payload}`);
  const token = await ta.userToken('owner', PASSWORD);
  const s = await ta.inject('POST', '/api/v2/user/shares', { token, payload: { name: 'drop', scope: 2, paths: ['/drop'], password: 'share-password' } });
  if (s.statusCode !== 201) throw new Error(`share: ${s.statusCode} ${s.payload}`);
  return { ta, shareId: String(s.headers['x-object-id']) };
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function measure(fn, n) {
  const c0 = cpuMs();
  const t0 = process.hrtime.bigint();
  await fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  return { wall: wall / n, cpu: (cpuMs() - c0) / n };
}

async function tusUpload({ ta, shareId }, name) {
  const auth = 'Basic ' + Buffer.from('x:share-password').toString('base64');
  const total = CHUNKS * CHUNK;
  const meta = `share_id ${Buffer.from(shareId).toString('base64')},path ${Buffer.from(name).toString('base64')}`;
  const c = await ta.server.inject({
    method: 'POST',
    url: '/api/v2/shares-chunked-uploads',
    headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-length': String(total), 'upload-metadata': meta },
  });
  if (c.statusCode !== 201) throw new Error(`create: ${c.statusCode} ${c.payload}`);
  const loc = String(c.headers.location);
  const body = Buffer.alloc(CHUNK, 1);
  return measure(async () => {
    for (let off = 0; off < total; off += CHUNK) {
      const r = await ta.server.inject({
        method: 'PATCH',
        url: loc,
        headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-offset': String(off), 'content-type': 'application/offset+octet-stream' },
        payload: body,
      });
      if (r.statusCode !== 204) throw new Error(`patch: ${r.statusCode} ${r.payload}`);
    }
  }, CHUNKS);
}

async function tokens({ ta }) {
  const authorization = 'Basic ' + Buffer.from(`owner:${PASSWORD}`).toString('base64');
  return measure(async () => {
    for (let i = 0; i < TOKENS; i++) {
      const r = await ta.server.inject({ method: 'GET', url: '/api/v2/user/token', headers: { authorization } });
      if (r.statusCode !== 200) throw new Error(`token: ${r.statusCode} ${r.payload}`);
    }
  }, TOKENS);
}

const before = await setup(0);
const after = await setup(60);
// warm-up: one upload and a few tokens each (JIT, first argon2)
await tusUpload(before, 'warm.bin');
await tusUpload(after, 'warm.bin');
const rows = [];
for (const [what, fn] of [
  [`TUS PATCH (${CHUNK / 1024} KiB chunk)`, (app, i) => tusUpload(app, `f${i}.bin`)],
  ['GET /user/token (basic auth)', (app) => tokens(app)],
]) {
  // alternate the two servers, best of 3 each
  const b = [];
  const a = [];
  for (let i = 0; i < 3; i++) {
    b.push(await fn(before, i));
    a.push(await fn(after, i));
  }
  const best = (xs) => ({ wall: Math.min(...xs.map((x) => x.wall)), cpu: Math.min(...xs.map((x) => x.cpu)) });
  rows.push({ what, off: best(b), on: best(a) });
}
await before.ta.close();
await after.ta.close();

const f = (n) => n.toFixed(2).padStart(8);
console.log(`${CHUNKS} chunks of ${CHUNK / 1024} KiB per upload, ${TOKENS} token requests; per request, best of 3`);
console.log('request                            cache off (wall / cpu ms)   cache on (wall / cpu ms)   ratio wall  ratio cpu');
for (const r of rows) {
  console.log(
    `${r.what.padEnd(34)} ${f(r.off.wall)} / ${f(r.off.cpu)}        ${f(r.on.wall)} / ${f(r.on.cpu)}       ${(r.on.wall / r.off.wall).toFixed(3).padStart(7)}    ${(r.on.cpu / r.off.cpu).toFixed(3).padStart(7)}`,
  );
}

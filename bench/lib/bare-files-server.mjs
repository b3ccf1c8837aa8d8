#!/usr/bin/env node
// The references of bench/small-files.bench.mjs: the file work of Ferry's
// user routes for small files, with nothing else around it.
//
//   node bench/lib/bare-files-server.mjs     (reads { kind: "node" | "hapi", root, key } on stdin)
//
// kind "node": a bare node:http server. kind "hapi": a bare Hapi route
// that first checks the same JWT as Ferry's user strategy (hapi-auth-jwt2,
// HS256 with a secret KeyObject, audience "user"). Both answer:
//   GET  /api/v2/user/files?path=/x          the file streamed (fs.createReadStream)
//   POST /api/v2/user/files/upload?path=/x   the body written to a temporary file, renamed to x; 201 JSON
//   GET  /api/v2/user/dirs?path=/d           readdir + stat of each entry, answered as JSON
// Paths are taken under `root` (no confinement check beyond refusing "..").
// Prints { port } once listening; stops on SIGTERM.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

let input = '';
for await (const d of process.stdin) input += d;
const { kind, root, key } = JSON.parse(input);

function local(p) {
  const rel = String(p ?? '/');
  if (rel.split('/').includes('..')) throw new Error('bad path');
  return path.join(root, rel);
}

async function listing(p) {
  const dir = local(p);
  const names = await readdir(dir);
  return Promise.all(
    names.map(async (name) => {
      const st = await stat(path.join(dir, name));
      return { name, size: st.size, mode: st.mode, last_modified: st.mtime.toISOString(), type: st.isDirectory() ? 'dir' : 'file' };
    }),
  );
}

async function upload(p, body) {
  const dest = local(p);
  const tmp = path.join(path.dirname(dest), `.tmp-${randomUUID()}`);
  await pipeline(body, createWriteStream(tmp));
  await rename(tmp, dest);
}

let port;
if (kind === 'node') {
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://x');
      const p = url.searchParams.get('path');
      if (req.method === 'GET' && url.pathname === '/api/v2/user/files') {
        const file = local(p);
        const st = await stat(file);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
        await pipeline(createReadStream(file), res);
      } else if (req.method === 'POST' && url.pathname === '/api/v2/user/files/upload') {
        await upload(p, req);
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"message":"upload completed"}');
      } else if (req.method === 'GET' && url.pathname === '/api/v2/user/dirs') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await listing(p)));
      } else res.writeHead(404).end();
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else {
  const { bareHapiWithJwt } = await import('./bare-hapi-jwt.mjs');
  const server = await bareHapiWithJwt(key, 'user');
  server.route([
    {
      method: 'GET',
      path: '/api/v2/user/files',
      options: { auth: 'jwt' },
      handler: async (request, h) => {
        const file = local(request.query.path);
        const st = await stat(file);
        return h.response(createReadStream(file)).type('application/octet-stream').header('content-length', String(st.size));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/user/files/upload',
      options: { auth: 'jwt', payload: { output: 'stream', parse: false, maxBytes: 1 << 30 } },
      handler: async (request, h) => {
        await upload(request.query.path, request.payload);
        return h.response({ message: 'upload completed' }).code(201);
      },
    },
    {
      method: 'GET',
      path: '/api/v2/user/dirs',
      options: { auth: 'jwt' },
      handler: (request) => listing(request.query.path),
    },
  ]);
  await server.start();
  port = server.info.port;
  process.on('SIGTERM', () => server.stop({ timeout: 1000 }).then(() => process.exit(0)));
}
process.stdout.write(JSON.stringify({ port }) + '\n');

/**
 * HttpFs against the reference server and against stubs: authentication,
 * confinement, abort propagation, timeouts, status mapping, connection reuse
 * and the protocol extras. The shared behaviour is in conformance.test.ts.
 */
import { readdir, writeFile as writeDisk } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { FsErrorCode } from '@ferry/core';
import { readFile, rejectionOf, writeFile, writeSome } from '@ferry/testkit';
import { createHttpFsHandler } from '../../../examples/httpfs-server/src/server.js';
import { codeForStatus, TEMP_NAME } from '../src/index.js';
import { basicOptions, keyOptions, PASSWORD, startServer, testFs, USER } from './fixtures/server.js';
import { fixed, startStub } from './fixtures/stub.js';

/** Records how each request to the server ended. */
function watch(server: http.Server) {
  const seen: { url: string; reqComplete: boolean; resFinished: boolean; contentType?: string }[] = [];
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const entry = { url: req.url ?? '', reqComplete: false, resFinished: false, contentType: req.headers['content-type'] };
    seen.push(entry);
    res.on('close', () => {
      entry.reqComplete = req.complete;
      entry.resFinished = res.writableFinished;
    });
  });
  return seen;
}

const settle = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  return cond();
};

t.test('authentication', async (t) => {
  const srv = await startServer(t);
  await t.test('Basic and API key both work', async (t) => {
    t.equal((await (await testFs(t, basicOptions(srv.url))).stat('/')).isDir, true);
    t.equal((await (await testFs(t, keyOptions(srv.url))).stat('/')).isDir, true);
  });
  await t.test('wrong credentials give PERMISSION', async (t) => {
    const cases = {
      'wrong password': { endpoint: srv.url, username: USER, password: 'nope' },
      'wrong user': { endpoint: srv.url, username: 'mallory', password: PASSWORD },
      'wrong API key': { endpoint: srv.url, api_key: 'nope' },
      'no credentials': { endpoint: srv.url },
    };
    for (const [name, opts] of Object.entries(cases)) {
      const fs = await testFs(t, opts);
      await t.rejects(fs.stat('/'), { code: FsErrorCode.Permission }, `${name}: stat`);
      await t.rejects(fs.mkdir('/x'), { code: FsErrorCode.Permission }, `${name}: mkdir`);
      await t.rejects(fs.openRead('/x'), { code: FsErrorCode.Permission }, `${name}: openRead`);
    }
    t.same(await readdir(srv.root), [], 'nothing was created');
  });
});

t.test('confinement on the client side', async (t) => {
  const srv = await startServer(t);
  const fs = await testFs(t, basicOptions(srv.url));
  await t.rejects(fs.stat('/../etc/passwd'), { code: FsErrorCode.Escape }, "'..' never leaves the client");
  await t.rejects(fs.stat('/a/%2e%2e/b'), { code: FsErrorCode.Escape }, 'encoded dots');
  await t.rejects(fs.openWrite('/a\u0000b'), { code: FsErrorCode.Invalid }, 'control characters');

  const stub = await startStub(t, (req, res) => {
    if (req.url?.startsWith('/api/v1/readdir/')) {
      const names = ['../evil', 'ok', 'a/b', '.', '..', '', 'x\\y', '%2e%2e', '...', 'a\u0000b'];
      fixed(
        200,
        names.map((name) => ({ name, size: 1, mode: 420, last_modified: new Date().toISOString() })),
      )(req, res);
    } else fixed(404, { message: 'no' })(req, res);
  });
  const evil = await testFs(t, { endpoint: stub.url });
  const entries = (await readAll(evil.list('/dir'))).map((e) => e.path);
  t.same(entries, ['/dir/ok'], 'names that cannot be addressed are skipped, never followed');
});

t.test('abort propagation', async (t) => {
  const srv = await startServer(t);
  const seen = watch(srv.server);
  const fs = await testFs(t, basicOptions(srv.url));
  await writeDisk(path.join(srv.root, 'big.bin'), Buffer.alloc(32 * 1024 * 1024, 1));

  await t.test('a read aborted mid-stream cancels the upstream response', async (t) => {
    const ac = new AbortController();
    const stream = await fs.openRead('/big.bin', { signal: ac.signal });
    const err = await rejectionOf(
      (async () => {
        for await (const _ of stream) ac.abort();
      })(),
    );
    t.match(err, { code: FsErrorCode.Aborted }, 'the stream fails with ABORTED');
    const req = seen.find((s) => s.url.startsWith('/api/v1/open/'));
    t.ok(await settle(() => req !== undefined && seen.includes(req) && !req.resFinished), 'the server stopped sending');
  });
  await t.test('an aborted upload cancels the request and removes the temporary file', async (t) => {
    const ac = new AbortController();
    const handle = await fs.openWrite('/up.bin', { signal: ac.signal });
    await writeSome(handle.stream, 1024 * 1024);
    const before = seen.length;
    ac.abort();
    t.match(await rejectionOf(handle.done), { code: FsErrorCode.Aborted });
    const create = seen.find((s) => s.url.startsWith('/api/v1/create/'));
    t.ok(create, 'the upload reached the server');
    t.ok(await settle(() => create?.reqComplete === false), 'the server saw the body cut short');
    t.ok(
      seen.slice(before).some((s) => s.url.startsWith('/api/v1/remove/')),
      'the client removed the temporary file',
    );
    // The client removes the temporary file; the server also drops a body cut
    // short, possibly a moment later when it was still opening the file.
    const left = async () => (await readdir(srv.root)).filter((n) => n !== 'big.bin');
    t.same(
      (await readAll(fs.list('/'))).map((e) => e.name),
      ['big.bin'],
      'the listing shows no temporary file',
    );
    for (let i = 0; i < 100 && (await left()).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    t.same(await left(), [], 'nothing left on disk');
  });
  await t.test('close() cancels what is in flight', async (t) => {
    const other = await testFs(t, basicOptions(srv.url));
    const stream = await other.openRead('/big.bin');
    const consumed = rejectionOf(
      (async () => {
        for await (const _ of stream) await other.close();
      })(),
    );
    t.match(await consumed, { code: FsErrorCode.Aborted });
  });
  await t.test('a metadata call aborted while the server stalls', async (t) => {
    let closed = false;
    const stub = await startStub(t, (req) => req.on('close', () => (closed = true)));
    const stalled = await testFs(t, { endpoint: stub.url });
    const started = Date.now();
    await t.rejects(stalled.stat('/x', { signal: AbortSignal.timeout(100) }), { code: FsErrorCode.Aborted });
    t.ok(Date.now() - started < 5000, 'promptly');
    t.ok(await settle(() => closed), 'the server saw the client go away');
  });
});

t.test('timeouts and unreachable servers', async (t) => {
  const stub = await startStub(t, () => undefined);
  const fs = await testFs(t, { endpoint: stub.url }, { request_timeout_ms: 200 });
  const err = await rejectionOf(fs.stat('/x'));
  t.match(err, { code: FsErrorCode.Unavailable, message: /did not answer within 200 ms/ });
  const gone = await startStub(t, () => undefined);
  await new Promise<void>((r) => gone.server.close(() => r()));
  const down = await testFs(t, { endpoint: gone.url });
  t.match(await rejectionOf(down.stat('/')), { code: FsErrorCode.Unavailable, message: /unreachable: ECONNREFUSED/ });
});

t.test('status mapping', async (t) => {
  t.equal(codeForStatus(404), 'NOT_FOUND');
  t.equal(codeForStatus(401), 'PERMISSION');
  t.equal(codeForStatus(403), 'PERMISSION');
  t.equal(codeForStatus(413), 'QUOTA');
  t.equal(codeForStatus(507), 'QUOTA');
  t.equal(codeForStatus(501), 'NOT_SUPPORTED');
  t.equal(codeForStatus(409, 'ENOTDIR'), 'NOT_DIR');
  for (const s of [500, 502, 503, 504, 408, 429, 302]) t.equal(codeForStatus(s), 'UNAVAILABLE', `${s}`);
  const cases: [number, unknown, string][] = [
    [500, { message: 'boom' }, 'UNAVAILABLE'],
    [503, 'not json', 'UNAVAILABLE'],
    [413, {}, 'QUOTA'],
    [507, { message: 'disk full', error: 'ENOSPC' }, 'QUOTA'],
    [501, {}, 'NOT_SUPPORTED'],
    [400, { message: 'bad' }, 'INVALID'],
    [409, { error: 'ENOTEMPTY' }, 'NOT_EMPTY'],
    [409, {}, 'EXISTS'],
    [302, {}, 'UNAVAILABLE'],
    [200, 'garbage', 'UNAVAILABLE'],
    [200, { name: 'x', size: -1, mode: 0, last_modified: 'now' }, 'UNAVAILABLE'],
  ];
  for (const [status, body, code] of cases) {
    const stub = await startStub(t, fixed(status, body));
    const fs = await testFs(t, { endpoint: stub.url });
    t.match(await rejectionOf(fs.stat('/f')), { code }, `${status} ${JSON.stringify(body)} → ${code}`);
  }
  await t.test('QUOTA end to end: the server refuses an upload that is too large', async (t) => {
    const srv = await startServer(t, { maxFileSize: 1000 });
    const fs = await testFs(t, basicOptions(srv.url));
    t.match(await rejectionOf(writeFile(fs, '/big', Buffer.alloc(5000))), { code: FsErrorCode.Quota });
    t.same(await readdir(srv.root), [], 'nothing left');
  });
});

t.test('usedSpace() walks when dirsize is not implemented', async (t) => {
  const srv = await startServer(t);
  const real = await createHttpFsHandler({ root: srv.root, allowAnonymous: true });
  let dirsizeCalls = 0;
  const stub = await startStub(t, (req, res) => {
    if (req.url?.startsWith('/api/v1/dirsize/')) {
      dirsizeCalls++;
      return fixed(501, { message: 'not implemented' })(req, res);
    }
    real(req, res);
  });
  const fs = await testFs(t, { endpoint: stub.url });
  await fs.mkdir('/a/b', { recursive: true });
  await writeFile(fs, '/a/one', 'x');
  await writeFile(fs, '/a/b/two', 'yz');
  t.same(await fs.usedSpace('/'), { files: 2, size: 3 });
  t.same(await fs.usedSpace('/a/b'), { files: 1, size: 2 });
  t.equal(dirsizeCalls, 2, 'dirsize was tried first');
  await t.rejects(fs.usedSpace('/none'), { code: FsErrorCode.NotFound });
});

t.test('connections are kept alive and reused', async (t) => {
  const srv = await startServer(t);
  let connections = 0;
  srv.server.on('connection', () => connections++);
  const fs = await testFs(t, basicOptions(srv.url));
  await fs.mkdir('/k');
  for (let i = 0; i < 20; i++) {
    await writeFile(fs, `/k/f${i}`, `file ${i}`);
    await fs.stat(`/k/f${i}`);
    t.equal((await readFile(fs, `/k/f${i}`)).toString(), `file ${i}`);
  }
  t.ok(connections <= 2, `100 requests over ${connections} connection(s)`);
});

t.test('uploads go through a hidden temporary file', async (t) => {
  const srv = await startServer(t);
  const seen = watch(srv.server);
  const fs = await testFs(t, basicOptions(srv.url));
  const when = new Date('2020-02-02T02:02:02Z');
  const handle = await fs.openWrite('/doc.pdf', { contentType: 'application/pdf', mtime: when });
  await writeSome(handle.stream, 100_000);
  let onDisk: string[] = [];
  for (let i = 0; i < 200 && onDisk.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 10));
    onDisk = await readdir(srv.root);
  }
  t.equal(onDisk.length, 1, 'one file on disk while uploading');
  t.match(onDisk[0], TEMP_NAME, 'with a temporary name');
  t.same(await readAll(fs.list('/')), [], 'hidden from listings');
  await t.rejects(fs.stat('/doc.pdf'), { code: FsErrorCode.NotFound }, 'the destination does not exist yet');
  handle.stream.end();
  t.same(await handle.done, { size: 100_000 });
  t.same(await readdir(srv.root), ['doc.pdf'], 'renamed into place');
  t.equal(seen.find((s) => s.url.startsWith('/api/v1/create/'))?.contentType, 'application/pdf', 'contentType sent');
  t.equal((await fs.stat('/doc.pdf')).mtime.toISOString(), when.toISOString(), 'mtime applied before publishing');
  t.match(seen.find((s) => s.url.startsWith('/api/v1/create/'))?.url, /flags=193&checks=1/, 'O_WRONLY|O_CREAT|O_EXCL');
});

t.test('protocol extras', async (t) => {
  const srv = await startServer(t);
  const fs = await testFs(t, keyOptions(srv.url));
  await writeFile(fs, '/notes.txt', 'hello world');
  t.equal(await fs.mimeType('/notes.txt'), 'text/plain');
  t.type((await fs.statVfs('/')).bsize, 'number');
  await fs.chmod('/notes.txt', 0o640);
  t.equal((await fs.stat('/notes.txt')).mode & 0o777, 0o640);
  await fs.truncate('/notes.txt', 5);
  t.equal((await readFile(fs, '/notes.txt')).toString(), 'hello');
  await t.rejects(fs.truncate('/notes.txt', -1), { code: FsErrorCode.Invalid });
  await t.rejects(fs.mimeType('/none'), { code: FsErrorCode.NotFound });
});

async function readAll<T>(it: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of it) out.push(...page);
  return out;
}

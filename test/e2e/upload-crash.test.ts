import t, { type Test } from 'tap';
import http from 'node:http';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { ADMIN, call, serve, token, writeConfig } from './helpers/server.js';

const PASSWORD = 'crash-user-password-1';

/** A server on a fresh directory (and PostgreSQL database when asked) with one user; killed at teardown. */
async function serverWithUser(t: Test, username: string, user: Record<string, unknown>, plugins?: string[]) {
  const dir = t.testdir({});
  const pg = usePostgres() ? await createPgDatabase() : undefined;
  t.teardown(async () => pg?.drop());
  const config = writeConfig(dir, { databaseUrl: pg?.url, plugins });
  const home = path.join(dir, 'homes', username);
  const ctx = {
    home,
    tmpArea: path.join(dir, 'data', 'uploads-tmp'),
    srv: await serve(config),
    /** The user's token on the running server. */
    token: '',
    /** Starts the server again (after a kill) and logs the user in again. */
    async restart() {
      ctx.srv = await serve(config);
      ctx.token = await token(ctx.srv.url, 'user', username, PASSWORD);
    },
  };
  t.teardown(() => ctx.srv.kill('SIGKILL'));
  const admin = await token(ctx.srv.url, 'admin', ADMIN.username, ADMIN.password);
  const created = await call(`${ctx.srv.url}/api/v2/users`, 'POST', {
    token: admin,
    body: { username, password: PASSWORD, home_dir: home, permissions: { '/': ['*'] }, ...user },
  });
  t.equal(created.status, 201, `user created ${created.text}`);
  ctx.token = await token(ctx.srv.url, 'user', username, PASSWORD);
  return ctx;
}

/** A raw upload of `body` as the user; resolves with the status. */
async function upload(base: string, userToken: string, vpath: string, body: Buffer): Promise<number> {
  const r = await fetch(`${base}/api/v2/user/files/upload?path=${vpath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/octet-stream' },
    body,
  });
  await r.arrayBuffer();
  return r.status;
}

/** [name, size] of the entries of the user's root directory, as the API lists them. */
async function listRoot(t: Test, base: string, userToken: string): Promise<[string, number][]> {
  const list = await call(`${base}/api/v2/user/dirs?path=/`, 'GET', { token: userToken });
  t.equal(list.status, 200);
  return (list.json() as { name: string; size: number }[]).map((e) => [e.name, e.size]);
}

/** Polls `read` until `ok` holds (30 s at most: the machine may be busy); returns the last value. */
async function until<T>(read: () => T, ok: (v: T) => boolean): Promise<T> {
  const end = Date.now() + 30_000;
  let v = read();
  while (!ok(v) && Date.now() < end) {
    await sleep(25);
    v = read();
  }
  return v;
}

/** Files in the temp area: each process writes in its own folder there (`<pid>-<start time>`). */
function tmpFiles(tmpArea: string): string[] {
  if (!existsSync(tmpArea)) return [];
  return readdirSync(tmpArea).flatMap((d) => readdirSync(path.join(tmpArea, d)).map((f) => path.join(tmpArea, d, f)));
}

/** Bytes in the temp area (0 when missing). */
function pendingBytes(tmpArea: string): number {
  return tmpFiles(tmpArea).reduce((sum, f) => sum + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
}

/** Starts a request that announces `total` bytes, sends `sendBytes` of them (after `head`), and leaves it open. */
async function partialRequest(url: string, headers: Record<string, string | number>, head: Buffer, sendBytes: number) {
  const req = http.request(url, { method: 'POST', headers });
  req.on('error', () => undefined);
  let status: number | undefined;
  req.on('response', (res) => {
    status = res.statusCode;
    res.resume();
  });
  req.write(head);
  const chunk = Buffer.alloc(256 * 1024, 0x5a);
  // stops early (without hanging) if the server answers or stops reading
  for (let sent = 0; sent < sendBytes && status === undefined && !req.destroyed; sent += chunk.length) {
    if (!req.write(chunk)) await Promise.race([new Promise((r) => req.once('drain', r)), sleep(10_000)]);
  }
  return { req, status: () => status };
}

t.test('a server killed with SIGKILL mid-upload leaves no visible partial file', async (t) => {
  const x = await serverWithUser(t, 'crash', {});
  t.equal(await upload(x.srv.url, x.token, '/kept.bin', Buffer.alloc(100_000, 1)), 201, 'a complete upload before the crash stays');

  // an upload of 64 MiB of which only a part arrives before the kill
  const raw = await partialRequest(
    `${x.srv.url}/api/v2/user/files/upload?path=/partial.bin`,
    { authorization: `Bearer ${x.token}`, 'content-type': 'application/octet-stream', 'content-length': 64 * 1024 * 1024 },
    Buffer.alloc(0),
    8 * 1024 * 1024,
  );
  t.ok(
    (await until(
      () => pendingBytes(x.tmpArea),
      (n) => n > 1024 * 1024,
    )) >
      1024 * 1024,
    'the server wrote part of it to its temporary area',
  );
  t.equal(tmpFiles(x.tmpArea).length, 1, 'the upload in progress sits in the temporary area');
  await x.srv.kill('SIGKILL');
  raw.req.destroy();

  t.notOk(existsSync(path.join(x.home, 'partial.bin')), 'nothing visible right after the crash');
  t.ok(existsSync(path.join(x.home, 'kept.bin')));
  t.same(readdirSync(x.home).sort(), ['kept.bin'], 'no hidden leftovers in the home either');

  await x.restart();
  t.same(readdirSync(x.tmpArea), [], 'the temporary area is emptied at start');
  t.same(await listRoot(t, x.srv.url, x.token), [['kept.bin', 100_000]]);
  t.equal(await upload(x.srv.url, x.token, '/partial.bin', Buffer.alloc(1000, 2)), 201, 'the path can be uploaded again');
  t.equal(statSync(path.join(x.home, 'partial.bin')).size, 1000);
  await x.srv.kill('SIGTERM');
});

t.test('an fs-crypt user: a client cut mid-multipart and a SIGKILL mid-upload leave no visible partial file', async (t) => {
  const x = await serverWithUser(t, 'vault', { filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'vault-passphrase-1' } } } }, [
    '@ferry/fs-local',
    '@ferry/fs-crypt',
  ]);
  const plain = Buffer.from('KEPT-PLAINTEXT-'.repeat(10_000));
  t.equal(await upload(x.srv.url, x.token, '/kept.txt', plain), 201);
  t.notOk(readFileSync(path.join(x.home, 'kept.txt')).includes('KEPT-PLAINTEXT-'), 'stored encrypted');

  // 1. multipart: the client goes away after 4 MiB of a 64 MiB file part
  const boundary = '----ferrycut';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="filenames"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const mp = await partialRequest(
    `${x.srv.url}/api/v2/user/files?path=/`,
    { authorization: `Bearer ${x.token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + 64 * 1024 * 1024 + 64 },
    head,
    4 * 1024 * 1024,
  );
  t.ok(
    (await until(
      () => pendingBytes(x.tmpArea),
      (n) => n > 0,
    )) > 0,
    'the multipart file was being written to the temporary area',
  );
  mp.req.destroy();
  t.equal(
    await until(
      () => tmpFiles(x.tmpArea).length,
      (n) => n === 0,
    ),
    0,
    'the server removes the temporary data of the cut upload',
  );
  t.same(readdirSync(x.home).sort(), ['kept.txt'], 'nothing visible, nothing hidden beside the files');
  t.equal(mp.status(), undefined, 'the client got no success answer');

  // 2. raw upload: the server is killed after part of 64 MiB arrived
  const raw = await partialRequest(
    `${x.srv.url}/api/v2/user/files/upload?path=/partial.bin`,
    { authorization: `Bearer ${x.token}`, 'content-type': 'application/octet-stream', 'content-length': 64 * 1024 * 1024 },
    Buffer.alloc(0),
    8 * 1024 * 1024,
  );
  t.ok(
    (await until(
      () => pendingBytes(x.tmpArea),
      (n) => n > 1024 * 1024,
    )) >
      1024 * 1024,
    'ciphertext accumulates in the temporary area',
  );
  await x.srv.kill('SIGKILL');
  raw.req.destroy();
  t.same(readdirSync(x.home).sort(), ['kept.txt'], 'nothing visible right after the crash');

  await x.restart();
  t.same(readdirSync(x.tmpArea), [], 'the temporary area is emptied at start');
  t.same(await listRoot(t, x.srv.url, x.token), [['kept.txt', plain.length]], 'plaintext size of the kept file only');
  const back = await fetch(`${x.srv.url}/api/v2/user/files?path=/kept.txt`, { headers: { authorization: `Bearer ${x.token}` } });
  t.equal(back.status, 200);
  t.ok(Buffer.from(await back.arrayBuffer()).equals(plain), 'the kept file still decrypts');
  t.equal(await upload(x.srv.url, x.token, '/partial.bin', Buffer.alloc(1000, 2)), 201, 'the path can be uploaded again');
  t.same((await listRoot(t, x.srv.url, x.token)).sort(), [
    ['kept.txt', plain.length],
    ['partial.bin', 1000],
  ]);
  await x.srv.kill('SIGTERM');
});

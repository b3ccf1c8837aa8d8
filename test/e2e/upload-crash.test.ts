import t from 'tap';
import http from 'node:http';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { ADMIN, call, serve, token, writeConfig } from './helpers/server.js';

const PASSWORD = 'crash-user-password-1';

t.test('a server killed with SIGKILL mid-upload leaves no visible partial file', async (t) => {
  const dir = t.testdir({});
  const pg = usePostgres() ? await createPgDatabase() : undefined;
  t.teardown(async () => pg?.drop());
  const config = writeConfig(dir, { databaseUrl: pg?.url });
  const home = path.join(dir, 'homes', 'crash');
  const tmpArea = path.join(dir, 'data', 'uploads-tmp');

  let srv = await serve(config);
  t.teardown(() => srv.kill('SIGKILL'));
  const admin = await token(srv.url, 'admin', ADMIN.username, ADMIN.password);
  const created = await call(`${srv.url}/api/v2/users`, 'POST', {
    token: admin,
    body: { username: 'crash', password: PASSWORD, home_dir: home, permissions: { '/': ['*'] } },
  });
  t.equal(created.status, 201, 'user created');
  const user = await token(srv.url, 'user', 'crash', PASSWORD);

  // a complete upload before the crash stays
  const done = await fetch(`${srv.url}/api/v2/user/files/upload?path=/kept.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user}`, 'content-type': 'application/octet-stream' },
    body: Buffer.alloc(100_000, 1),
  });
  t.equal(done.status, 201);

  // an upload of 64 MiB of which only a part arrives before the kill
  const total = 64 * 1024 * 1024;
  const req = http.request(`${srv.url}/api/v2/user/files/upload?path=/partial.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user}`, 'content-type': 'application/octet-stream', 'content-length': total },
  });
  req.on('error', () => undefined);
  let sent = 0;
  const chunk = Buffer.alloc(256 * 1024, 7);
  while (sent < 8 * 1024 * 1024) {
    if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
    sent += chunk.length;
  }
  // wait until the server has written some of it to its temporary area
  for (let i = 0; i < 200; i++) {
    const files = existsSync(tmpArea) ? readdirSync(tmpArea) : [];
    if (files.length && statSync(path.join(tmpArea, files[0]!)).size > 1024 * 1024) break;
    await sleep(25);
  }
  const pending = readdirSync(tmpArea);
  t.equal(pending.length, 1, 'the upload in progress sits in the temporary area');
  await srv.kill('SIGKILL');
  req.destroy();

  t.notOk(existsSync(path.join(home, 'partial.bin')), 'nothing visible right after the crash');
  t.ok(existsSync(path.join(home, 'kept.bin')));
  t.same(readdirSync(home).sort(), ['kept.bin'], 'no hidden leftovers in the home either');

  srv = await serve(config);
  t.same(readdirSync(tmpArea), [], 'the temporary area is emptied at start');
  const user2 = await token(srv.url, 'user', 'crash', PASSWORD);
  const list = await call(`${srv.url}/api/v2/user/dirs?path=/`, 'GET', { token: user2 });
  t.equal(list.status, 200);
  t.same((list.json() as { name: string; size: number }[]).map((e) => [e.name, e.size]), [['kept.bin', 100_000]]);
  const again = await fetch(`${srv.url}/api/v2/user/files/upload?path=/partial.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user2}`, 'content-type': 'application/octet-stream' },
    body: Buffer.alloc(1000, 2),
  });
  t.equal(again.status, 201, 'the path can be uploaded again');
  t.equal(statSync(path.join(home, 'partial.bin')).size, 1000);
  await srv.kill('SIGTERM');
});

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

/** Bytes in the temp area (0 when missing). */
function pendingBytes(tmpArea: string): number {
  if (!existsSync(tmpArea)) return 0;
  return readdirSync(tmpArea).reduce((sum, f) => sum + (statSync(path.join(tmpArea, f), { throwIfNoEntry: false })?.size ?? 0), 0);
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

t.test('an fs-crypt user: a client cut mid-multipart and a SIGKILL mid-upload leave no visible partial file', async (t) => {
  const dir = t.testdir({});
  const pg = usePostgres() ? await createPgDatabase() : undefined;
  t.teardown(async () => pg?.drop());
  const config = writeConfig(dir, { databaseUrl: pg?.url, plugins: ['@ferry/fs-local', '@ferry/fs-crypt'] });
  const home = path.join(dir, 'homes', 'vault');
  const tmpArea = path.join(dir, 'data', 'uploads-tmp');

  let srv = await serve(config);
  t.teardown(() => srv.kill('SIGKILL'));
  const admin = await token(srv.url, 'admin', ADMIN.username, ADMIN.password);
  const created = await call(`${srv.url}/api/v2/users`, 'POST', {
    token: admin,
    body: {
      username: 'vault',
      password: PASSWORD,
      home_dir: home,
      permissions: { '/': ['*'] },
      filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'vault-passphrase-1' } } },
    },
  });
  t.equal(created.status, 201, created.text);
  const user = await token(srv.url, 'user', 'vault', PASSWORD);
  const plain = Buffer.from('KEPT-PLAINTEXT-'.repeat(10_000));
  const kept = await fetch(`${srv.url}/api/v2/user/files/upload?path=/kept.txt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user}`, 'content-type': 'application/octet-stream' },
    body: plain,
  });
  t.equal(kept.status, 201);
  t.notOk(readFileSync(path.join(home, 'kept.txt')).includes('KEPT-PLAINTEXT-'), 'stored encrypted');

  // 1. multipart: the client goes away after 4 MiB of a 64 MiB file part
  const boundary = '----ferrycut';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="filenames"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const mp = await partialRequest(
    `${srv.url}/api/v2/user/files?path=/`,
    { authorization: `Bearer ${user}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + 64 * 1024 * 1024 + 64 },
    head,
    4 * 1024 * 1024,
  );
  t.ok((await until(() => pendingBytes(tmpArea), (n) => n > 0)) > 0, 'the multipart file was being written to the temporary area');
  mp.req.destroy();
  t.equal(await until(() => readdirSync(tmpArea).length, (n) => n === 0), 0, 'the server removes the temporary data of the cut upload');
  t.same(readdirSync(home).sort(), ['kept.txt'], 'nothing visible, nothing hidden beside the files');
  t.equal(mp.status(), undefined, 'the client got no success answer');

  // 2. raw upload: the server is killed after part of 64 MiB arrived
  const raw = await partialRequest(
    `${srv.url}/api/v2/user/files/upload?path=/partial.bin`,
    { authorization: `Bearer ${user}`, 'content-type': 'application/octet-stream', 'content-length': 64 * 1024 * 1024 },
    Buffer.alloc(0),
    8 * 1024 * 1024,
  );
  t.ok((await until(() => pendingBytes(tmpArea), (n) => n > 1024 * 1024)) > 1024 * 1024, 'ciphertext accumulates in the temporary area');
  await srv.kill('SIGKILL');
  raw.req.destroy();
  t.same(readdirSync(home).sort(), ['kept.txt'], 'nothing visible right after the crash');

  srv = await serve(config);
  t.same(readdirSync(tmpArea), [], 'the temporary area is emptied at start');
  const user2 = await token(srv.url, 'user', 'vault', PASSWORD);
  const list = await call(`${srv.url}/api/v2/user/dirs?path=/`, 'GET', { token: user2 });
  t.equal(list.status, 200);
  t.same((list.json() as { name: string; size: number }[]).map((e) => [e.name, e.size]), [['kept.txt', plain.length]], 'plaintext size of the kept file only');
  const back = await fetch(`${srv.url}/api/v2/user/files?path=/kept.txt`, { headers: { authorization: `Bearer ${user2}` } });
  t.equal(back.status, 200);
  t.ok(Buffer.from(await back.arrayBuffer()).equals(plain), 'the kept file still decrypts');
  const again = await fetch(`${srv.url}/api/v2/user/files/upload?path=/partial.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user2}`, 'content-type': 'application/octet-stream' },
    body: Buffer.alloc(1000, 2),
  });
  t.equal(again.status, 201, 'the path can be uploaded again');
  const sized = await call(`${srv.url}/api/v2/user/dirs?path=/`, 'GET', { token: user2 });
  t.same((sized.json() as { name: string; size: number }[]).map((e) => [e.name, e.size]).sort(), [
    ['kept.txt', plain.length],
    ['partial.bin', 1000],
  ]);
  await srv.kill('SIGTERM');
});

import t from 'tap';
import http from 'node:http';
import { existsSync, readdirSync, statSync } from 'node:fs';
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

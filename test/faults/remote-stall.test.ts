/**
 * A remote backend that stops answering mid-transfer: a user on S3 (the
 * shared s3rver) reached through a TCP relay that the test makes go silent
 * (data no longer forwarded either way, connections left open) while an
 * upload and a download are under way. The fs-s3 idle timeout is set to 2
 * seconds: each request ends (no hung request; the upload with a JSON error,
 * never a 2xx, the download cut short of its length), and every connection
 * Ferry had opened through the relay is closed afterwards (no leak).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createPgDatabase, usePostgres } from '@ferry/core/testing';
import { ADMIN, createUser, serve, streamUpload, token, writeConfig } from './helpers/ferry.js';

const S3_PORT = Number(process.env.FERRY_S3_PORT ?? 19000);
const MiB = 1024 * 1024;
const PASSWORD = 'remote-stall-password-1';

/** A TCP relay to 127.0.0.1:`upstream` that can go silent: bytes stop flowing both ways, sockets stay open. */
class SilentRelay {
  private readonly server: net.Server;
  readonly open = new Set<net.Socket>();
  silent = false;
  port = 0;

  constructor(upstream: number) {
    this.server = net.createServer((client) => {
      const up = net.connect(upstream, '127.0.0.1');
      this.open.add(client);
      client.on('close', () => {
        this.open.delete(client);
        up.destroy();
      });
      up.on('close', () => client.destroy());
      for (const s of [client, up]) s.on('error', () => undefined);
      client.on('data', (c: Buffer) => void (this.silent || up.write(c)));
      up.on('data', (c: Buffer) => void (this.silent || client.write(c)));
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** Waits (bounded) until `ok()` holds. */
async function until(ok: () => boolean, ms = 60_000): Promise<boolean> {
  for (const end = Date.now() + ms; !ok() && Date.now() < end;) await sleep(50);
  return ok();
}

t.test('a remote backend that stops answering mid-transfer: requests end, no connection leaks', async (t) => {
  const reachable = await new Promise<boolean>((resolve) => {
    const s = net.connect(S3_PORT, '127.0.0.1', () => {
      resolve(true);
      s.destroy();
    });
    s.on('error', () => resolve(false));
  });
  if (!reachable) {
    t.plan(0, `no s3rver on 127.0.0.1:${S3_PORT} (scripts/servers/up.sh)`);
    return;
  }
  const relay = new SilentRelay(S3_PORT);
  await relay.start();
  t.teardown(() => relay.stop());
  const base = await mkdtemp(path.join(os.tmpdir(), 'ferry-faults-stall-'));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  let databaseUrl: string | undefined;
  if (usePostgres()) {
    const db = await createPgDatabase();
    t.teardown(() => db.drop());
    databaseUrl = db.url;
  }
  const config = writeConfig(base, {
    databaseUrl,
    plugins: ['@ferry/fs-local', '@ferry/fs-s3'],
  });
  // the S3 plugin's timeouts: a request or body that moves no byte for 2 s fails
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace(
      '  - name: "@ferry/fs-s3"\n',
      '  - name: "@ferry/fs-s3"\n    config:\n      idle_timeout: 2\n      connect_timeout: 2\n',
    ),
  );
  const server = await serve(config);
  t.teardown(() => server.kill('SIGKILL'));
  const admin = await token(server.url, 'admin', ADMIN.username, ADMIN.password);
  const userToken = await createUser(t, server.url, admin, {
    username: 'u1',
    password: PASSWORD,
    home: path.join(base, 'homes', 'u1'),
    more: {
      filesystem: {
        provider: 1,
        s3config: {
          bucket: 'ferry-test',
          region: 'us-east-1',
          endpoint: `http://127.0.0.1:${relay.port}`,
          access_key: 'S3RVER',
          access_secret: { status: 'Plain', payload: 'S3RVER' },
          force_path_style: true,
          key_prefix: `faults-${randomUUID()}/`,
        },
      },
    },
  });

  // a file to download later, stored while the relay forwards
  const stored = streamUpload(server.url, userToken, '/stored.bin', 24 * MiB);
  stored.end(Buffer.alloc(24 * MiB, 3));
  t.match(await stored.outcome, { status: 201 }, 'a file is stored through the relay');

  // 1. upload: the backend goes silent after a part of the body
  const up = streamUpload(server.url, userToken, '/stalled.bin', 32 * MiB);
  await up.send(Buffer.alloc(4 * MiB, 4));
  relay.silent = true;
  let started = Date.now();
  void (async () => {
    for (let i = 0; i < 28; i++) await up.send(Buffer.alloc(MiB, 4));
    up.end();
  })();
  const upAnswer = await up.outcome;
  const upTook = Date.now() - started;
  if ('status' in upAnswer) {
    t.equal(upAnswer.status, 503, `the upload fails with 503 (after ${upTook} ms): ${upAnswer.body}`);
    const body = JSON.parse(upAnswer.body) as { message?: unknown };
    t.type(body.message, 'string', 'with a JSON message');
    t.match(body.message, /storage backend unavailable/, 'saying the backend is unavailable, not "internal server error"');
  } else {
    t.fail(`the upload got no answer: ${upAnswer.error}`);
  }
  t.ok(await until(() => relay.open.size === 0), `every connection through the relay is closed after the upload (${relay.open.size} open)`);

  // 2. download: the backend goes silent mid-body
  relay.silent = false;
  started = Date.now();
  const got = await new Promise<{ status: number; bytes: number; complete: boolean }>((resolve) => {
    const u = new URL(`${server.url}/api/v2/user/files`);
    u.searchParams.set('path', '/stored.bin');
    http
      .get(u, { headers: { authorization: `Bearer ${userToken}` } }, (res) => {
        let bytes = 0;
        // silent as soon as the answer starts: the rest of the object is still to be read from S3
        relay.silent = true;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, complete: true }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, bytes, complete: false }));
        res.on('close', () => resolve({ status: res.statusCode ?? 0, bytes, complete: res.complete }));
      })
      .on('error', () => resolve({ status: 0, bytes: 0, complete: false }));
  });
  t.ok(got.bytes < 24 * MiB, `the download ends short of its length (${got.bytes} bytes, status ${got.status}, after ${Date.now() - started} ms)`);
  t.notOk(got.complete && got.bytes === 24 * MiB, 'it is not passed off as complete');
  t.ok(await until(() => relay.open.size === 0), `every connection through the relay is closed after the download (${relay.open.size} open)`);

  // the node is fine: with the backend answering again, transfers work
  relay.silent = false;
  const after = streamUpload(server.url, userToken, '/after.bin', 1024);
  after.end(Buffer.alloc(1024, 5));
  t.match(await after.outcome, { status: 201 }, 'uploads work once the backend answers again');
  await server.kill('SIGTERM');
});

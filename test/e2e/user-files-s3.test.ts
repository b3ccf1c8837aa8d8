import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createTestApp } from '@ferry/core/testing';
import type { EventBus, FsEvent } from '@ferry/core';

// A user whose home is local and whose virtual folder /cloud lives in S3
// (s3rver from scripts/servers/start-s3.sh): transfers, moves and copies
// across backends, events with bucket/endpoint, folder quota counters.
const S3_ENDPOINT = `http://127.0.0.1:${process.env.FERRY_S3_PORT ?? 19000}`;
const up = await new Promise<boolean>((resolve) => {
  const s = net.connect({ host: '127.0.0.1', port: Number(new URL(S3_ENDPOINT).port), timeout: 1000 });
  s.once('connect', () => (s.destroy(), resolve(true)));
  s.once('error', () => resolve(false));
  s.once('timeout', () => (s.destroy(), resolve(false)));
});
if (!up && process.env.CI === 'true') throw new Error('s3rver is not running: CI must start it (scripts/servers/up.sh)');

t.test('a local home with an S3 virtual folder', { skip: up ? false : 's3rver is not running (bash scripts/servers/start-s3.sh)' }, async (t) => {
  const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-s3' }] });
  t.teardown(() => ta.close());
  const events: FsEvent[] = [];
  ta.app.container.resolve<EventBus>(Symbol.for('ferry.EventBus')).on('fs', (e) => {
    events.push(e);
  });
  const admin = await ta.adminToken();
  const home = path.join(ta.dataDir, 'home');
  mkdirSync(home);
  const prefix = `e2e-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}/`;
  const folder = await ta.inject('POST', '/api/v2/folders', {
    token: admin,
    payload: {
      name: 'cloud',
      filesystem: {
        provider: 1,
        s3config: {
          bucket: 'ferry-test',
          region: 'us-east-1',
          endpoint: S3_ENDPOINT,
          access_key: 'S3RVER',
          access_secret: { status: 'Plain', payload: 'S3RVER' },
          force_path_style: true,
          key_prefix: prefix,
        },
      },
    },
  });
  t.equal(folder.statusCode, 201, folder.payload);
  const user = await ta.inject('POST', '/api/v2/users', {
    token: admin,
    payload: {
      username: 'mixed',
      password: 'mixed-password-1',
      home_dir: home,
      permissions: { '/': ['*'] },
      virtual_folders: [{ name: 'cloud', virtual_path: '/cloud', quota_size: 10 * 1024 * 1024, quota_files: 0 }],
    },
  });
  t.equal(user.statusCode, 201, user.payload);
  const token = await ta.userToken('mixed', 'mixed-password-1');
  const q = encodeURIComponent;
  const call = (method: string, url: string, payload?: unknown, headers?: Record<string, string>) =>
    ta.inject(method, url, { token, payload: payload as never, headers });
  const names = async (p: string) =>
    (JSON.parse((await call('GET', `/api/v2/user/dirs?path=${q(p)}`)).payload) as { name: string }[]).map((e) => e.name).sort();

  const data = randomBytes(300_000);
  const r = await call('POST', `/api/v2/user/files/upload?path=${q('/cloud/docs/a.bin')}&mkdir_parents=true`, data, {
    'content-type': 'application/octet-stream',
  });
  t.equal(r.statusCode, 201, r.payload);
  t.same(await names('/'), ['cloud']);
  t.same(await names('/cloud'), ['docs']);
  const d = await call('GET', `/api/v2/user/files?path=${q('/cloud/docs/a.bin')}`, undefined, { range: 'bytes=1000-1999' });
  t.equal(d.statusCode, 206);
  t.ok(d.rawPayload.equals(data.subarray(1000, 2000)), 'ranged read from S3');
  const ev = events.find((e) => e.action === 'upload' && e.virtual_path === '/cloud/docs/a.bin');
  t.match(ev, { fs_provider: 1, bucket: 'ferry-test', endpoint: S3_ENDPOINT, fs_path: '/docs/a.bin', file_size: 300_000, status: 1 });

  // local -> S3 and back, streamed across backends
  writeFileSync(path.join(home, 'local.txt'), 'from the local disk');
  t.equal((await call('POST', `/api/v2/user/file-actions/move?path=${q('/local.txt')}&target=${q('/cloud/moved.txt')}`)).statusCode, 200);
  t.notOk(existsSync(path.join(home, 'local.txt')));
  t.equal((await call('GET', `/api/v2/user/files?path=${q('/cloud/moved.txt')}`)).payload, 'from the local disk');
  t.equal((await call('POST', `/api/v2/user/file-actions/copy?path=${q('/cloud/docs')}&target=${q('/docs-copy')}`)).statusCode, 200);
  t.ok(readFileSync(path.join(home, 'docs-copy/a.bin')).equals(data), 'S3 tree copied to the local disk');
  t.equal(
    (await call('POST', `/api/v2/user/file-actions/copy?path=${q('/cloud/docs/a.bin')}&target=${q('/cloud/docs/b.bin')}`)).statusCode,
    200,
    'server-side copy',
  );
  t.same(await names('/cloud/docs'), ['a.bin', 'b.bin']);
  const f = await ta.inject('GET', '/api/v2/folders/cloud', { token: admin });
  t.match(JSON.parse(f.payload), { used_quota_size: 600_000 + 'from the local disk'.length, used_quota_files: 3 });
  const tooBig = await call('POST', `/api/v2/user/files/upload?path=${q('/cloud/big.bin')}`, Buffer.alloc(11 * 1024 * 1024), {
    'content-type': 'application/octet-stream',
  });
  t.equal(tooBig.statusCode, 413, 'the folder quota holds on S3 too');
  t.same(await names('/cloud'), ['docs', 'moved.txt']);
  t.equal((await call('DELETE', `/api/v2/user/dirs?path=${q('/cloud/docs')}`)).statusCode, 200);
  t.same(await names('/cloud'), ['moved.txt']);
  const zip = await call('POST', '/api/v2/user/streamzip', ['/cloud', '/docs-copy']);
  t.equal(zip.statusCode, 200);
  for (const n of ['cloud/moved.txt', 'docs-copy/a.bin']) t.ok(zip.rawPayload.includes(Buffer.from(n)), `zip entry ${n}`);
  t.ok(zip.rawPayload.length > 300_000, 'zip holds the (incompressible) local copy');
  await call('DELETE', `/api/v2/user/files?path=${q('/cloud/moved.txt')}`);
});

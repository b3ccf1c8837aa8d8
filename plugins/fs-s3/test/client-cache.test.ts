import type net from 'node:net';
import type { S3Client } from '@aws-sdk/client-s3';
import t, { type Test } from 'tap';
import { FsErrorCode } from '@ferry/core';
import { RecordingRelay, expectFsError, readFile, writeFile } from '@ferry/testkit';
import plugin, { createS3Provider, resolveSettings, type S3Fs, type S3Options } from '../src/index.js';
import { s3ClientIdentity } from '../src/lib.js';
import { S3_PORT, s3Unavailable, scope, testOptions, removePrefix } from './fixtures/server.js';

// The provider shares one S3 client (its agents, its keep-alive connections,
// its resolved configuration) per identity between the Fs it creates, one per
// session. A relay in front of s3rver counts the TCP connections the clients
// open and sees them closed when a client is destroyed.

const skip = await s3Unavailable();
const bob = { username: 'bob', dataDir: '/nonexistent' };
const ROLE = 'arn:aws:iam::123456789012:role/ferry-test';

/** A recording relay that also counts the TCP connections it accepts and those still open. */
class CountingRelay extends RecordingRelay {
  accepted = 0;
  private readonly open = new Set<net.Socket>();

  constructor() {
    super(S3_PORT);
    this.server.on('connection', (socket: net.Socket) => {
      this.accepted++;
      this.open.add(socket);
      socket.on('close', () => this.open.delete(socket));
    });
  }

  get openConnections(): number {
    return this.open.size;
  }
}

async function counting(t: Test): Promise<CountingRelay> {
  const relay = await new CountingRelay().start();
  t.teardown(() => relay.stop());
  return relay;
}

/** Counts the calls of a client's destroy(). */
function destroyCalls(client: S3Client): { count: number } {
  const calls = { count: 0 };
  const destroy = client.destroy.bind(client);
  client.destroy = () => {
    calls.count++;
    destroy();
  };
  return calls;
}

/** One request (a ListObjectsV2 of the root). */
async function ping(fs: S3Fs): Promise<void> {
  await fs.list('/')[Symbol.asyncIterator]().next();
}

async function until(cond: () => boolean, ms = 2000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return cond();
}

t.test('s3ClientIdentity(): every input of the client, no per-request parameter', async (t) => {
  const base = testOptions({ key_prefix: 'a/' });
  const id = (o: Partial<S3Options>, sessionName = 'ferry-alice', timeouts?: { connectTimeoutMs: number; idleTimeoutMs: number }) =>
    JSON.stringify(s3ClientIdentity(resolveSettings({ ...base, ...o }), sessionName, timeouts));
  const same = id({});
  for (const [what, o] of Object.entries({
    'another endpoint': { endpoint: 'http://127.0.0.1:1' },
    'another region': { region: 'eu-west-1' },
    'virtual-hosted addressing': { force_path_style: false },
    'another access key': { access_key: 'OTHER' },
    'another secret': { access_secret: 'other-secret' },
    'a session token': { session_token: 'tok' },
    'a role': { role_arn: ROLE },
  })) {
    t.not(id(o), same, what);
  }
  t.not(id({}, 'ferry-alice', { connectTimeoutMs: 1000, idleTimeoutMs: 120_000 }), same, 'another connect timeout');
  t.not(id({}, 'ferry-alice', { connectTimeoutMs: 10_000, idleTimeoutMs: 1000 }), same, 'another idle timeout');
  t.equal(id({}, 'ferry-alice', { connectTimeoutMs: 10_000, idleTimeoutMs: 120_000 }), same, 'the default time limits');
  t.not(id({ role_arn: ROLE }, 'ferry-bob'), id({ role_arn: ROLE }), 'with a role, the session name (per user) counts');
  t.equal(id({}, 'ferry-bob'), same, 'without a role, no request carries the session name');
  t.equal(
    id({
      bucket: 'other',
      key_prefix: 'b/',
      sse_customer_key: 'k'.repeat(32),
      storage_class: 'STANDARD_IA',
      acl: 'private',
      upload_part_size: 16,
      upload_concurrency: 4,
      download_part_size: 2,
      download_concurrency: 3,
      upload_part_max_time: 9,
      download_part_max_time: 9,
    }),
    same,
    'bucket, prefix, SSE-C, storage class, ACL and part settings are per request',
  );
});

t.test('the provider shares clients by identity', async (t) => {
  const provider = createS3Provider({}, { clientIdleMs: 60_000 });
  const open = async (o: Partial<S3Options>, s = scope) => (await provider.create(testOptions({ endpoint: 'http://127.0.0.1:1', ...o }), s)) as S3Fs;
  const a = await open({});
  const b = await open({ key_prefix: 'other/', bucket: 'other-bucket', sse_customer_key: 'k'.repeat(32), storage_class: 'STANDARD_IA' });
  const c = await open({}, bob);
  t.equal(a.client, b.client, 'another bucket, prefix, SSE-C key and storage class: the same client');
  t.equal(a.client, c.client, 'another user without a role: the same client');
  const others = [
    await open({ access_secret: 'other-secret' }),
    await open({ endpoint: 'http://127.0.0.1:2' }),
    await open({ region: 'eu-west-1' }),
    await open({ role_arn: ROLE }),
    await open({ role_arn: ROLE }, bob),
    (await createS3Provider({ idle_timeout: 5 }).create(testOptions({ endpoint: 'http://127.0.0.1:1' }), scope)) as S3Fs,
  ];
  const clients = new Set([a.client, ...others.map((f) => f.client)]);
  t.equal(clients.size, 7, 'another secret, endpoint, region, role, role session name or time limit: another client each');
  for (const f of [a, b, c, ...others]) await f.close();
});

t.test('a failed create() gives its lease back', async (t) => {
  const provider = createS3Provider({}, { clientIdleMs: 20 });
  const options = testOptions({ endpoint: 'http://127.0.0.1:1' });
  const fs = (await provider.create(options, scope)) as S3Fs;
  const calls = destroyCalls(fs.client);
  await t.rejects(
    Promise.resolve().then(() => provider.create({ ...options, key_prefix: 'a/../b' }, scope)),
    { code: 'ESCAPE' },
    'the S3Fs refuses the prefix',
  );
  await fs.close();
  t.ok(await until(() => calls.count === 1), 'the client is destroyed once the only Fs holding it is closed');
});

t.test('against s3rver', { skip: skip ?? false }, async (t) => {
  t.test('two Fs of one identity: one client, one connection', async (t) => {
    const relay = await counting(t);
    const provider = createS3Provider({}, { clientIdleMs: 60_000 });
    const options = testOptions({ endpoint: relay.endpoint });
    t.teardown(() => removePrefix(options.key_prefix!));
    const a = (await provider.create(options, scope)) as S3Fs;
    const b = (await provider.create({ ...options }, bob)) as S3Fs;
    t.equal(a.client, b.client, 'the same client');
    await writeFile(a, '/x.txt', 'shared');
    for (let i = 0; i < 5; i++) {
      t.equal((await readFile(b, '/x.txt')).toString(), 'shared');
      t.equal((await readFile(a, '/x.txt')).toString(), 'shared');
    }
    t.equal(relay.accepted, 1, 'every request of both Fs went over one TCP connection');

    // one Fs per request, as the core opens them: still the first connection
    for (let i = 0; i < 5; i++) {
      const fs = (await provider.create({ ...options }, scope)) as S3Fs;
      await fs.stat('/x.txt');
      await fs.close();
    }
    t.equal(relay.accepted, 1, 'sessions opened and closed one after another reuse it too');

    await a.close();
    t.equal((await readFile(b, '/x.txt')).toString(), 'shared', 'closing one Fs leaves the other working');
    await expectFsError(t, a.stat('/x.txt'), FsErrorCode.Unavailable, 'a closed Fs refuses requests');
    await t.rejects(a.openRead('/x.txt'), { code: 'UNAVAILABLE', message: /closed/ });
    await t.rejects(a.openWrite('/y.txt'), { code: 'UNAVAILABLE', message: /closed/ });
    await t.rejects(a.usedSpace('/'), { code: 'UNAVAILABLE', message: /closed/ }, 'listings of the whole tree too');
    await b.close();
  });

  t.test('another secret or time limit: another client, another connection', async (t) => {
    const relay = await counting(t);
    const provider = createS3Provider({}, { clientIdleMs: 60_000 });
    const options = testOptions({ endpoint: relay.endpoint });
    const a = (await provider.create(options, scope)) as S3Fs;
    // s3rver checks the access key only: any secret works
    const b = (await provider.create({ ...options, access_secret: 'another-secret' }, scope)) as S3Fs;
    const c = (await createS3Provider({ idle_timeout: 60 }, { clientIdleMs: 60_000 }).create({ ...options }, scope)) as S3Fs;
    t.equal(new Set([a.client, b.client, c.client]).size, 3, 'three clients');
    for (const fs of [a, b, c]) await ping(fs);
    t.equal(relay.accepted, 3, 'one connection each');
    for (const fs of [a, b, c]) await fs.close();
  });

  t.test('the client is destroyed once unused for clientIdleMs; closing twice is harmless', async (t) => {
    const relay = await counting(t);
    const provider = createS3Provider({}, { clientIdleMs: 200 });
    const options = testOptions({ endpoint: relay.endpoint });
    const a = (await provider.create(options, scope)) as S3Fs;
    const b = (await provider.create({ ...options }, scope)) as S3Fs;
    const client = a.client;
    const calls = destroyCalls(client);
    await ping(a);
    await ping(b);
    t.equal(relay.openConnections, 1, 'one connection, kept alive');

    await a.close();
    await a.close();
    await new Promise((r) => setTimeout(r, 400));
    t.equal(calls.count, 0, 'b still holds the client: closing a twice did not give it back twice');
    t.equal(relay.openConnections, 1, 'and its connection is open');
    await ping(b);

    await b.close();
    await new Promise((r) => setTimeout(r, 50));
    t.equal(calls.count, 0, 'kept a while after the last close');
    const c = (await provider.create({ ...options }, scope)) as S3Fs;
    t.equal(c.client, client, 'a session within clientIdleMs gets it back');
    await ping(c);
    t.equal(relay.accepted, 1, 'with its open connection');
    await c.close();

    t.ok(await until(() => calls.count === 1), 'destroyed after clientIdleMs unused');
    t.ok(await until(() => relay.openConnections === 0, 1000), 'its connection closed (before the server would close it)');
    const d = (await provider.create({ ...options }, scope)) as S3Fs;
    t.not(d.client, client, 'the next session gets a new client, never the destroyed one');
    await ping(d);
    t.equal(relay.accepted, 2, 'and opens a new connection');
    await d.close();
    await d.close();
    t.ok(await until(() => relay.openConnections === 0, 1000), 'which closes too after clientIdleMs');
  });

  t.test("the plugin's teardown destroys the cached clients", async (t) => {
    const relay = await counting(t);
    const provider = createS3Provider({}, { clientIdleMs: 60_000 });
    const fs = (await provider.create(testOptions({ endpoint: relay.endpoint }), scope)) as S3Fs;
    const client = fs.client;
    const calls = destroyCalls(client);
    await ping(fs);
    await fs.close();
    await plugin.teardown?.();
    t.equal(calls.count, 1, 'destroyed');
    t.ok(await until(() => relay.openConnections === 0, 1000), 'its connection closed');
    const next = (await provider.create(testOptions({ endpoint: relay.endpoint }), scope)) as S3Fs;
    t.not(next.client, client, 'the provider still works, with a new client');
    await ping(next);
    await next.close();
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { RecordingRelay, randomBytesSeeded } from '@ferry/testkit';
import plugin, { azBlobProvider, createAzBlobProvider, type AzBlobFs, type AzBlobOptions } from '../src/index.js';
import { CLIENT_IDLE_MS, containerClientCount, clearContainerClients, setContainerClientIdleMs } from '../src/lib.js';
import { AZ_PORT, CONTAINER, azUnavailable, randomPrefix, rawContainer, scope, testOptions } from './fixtures/server.js';

// One ContainerClient per identity, shared by the Fs of every session: the
// core creates an Fs per request of the file API.

/** Idle time of the clients in these tests (the default is CLIENT_IDLE_MS). */
const IDLE_MS = 150;
setContainerClientIdleMs(IDLE_MS);
t.teardown(() => setContainerClientIdleMs(CLIENT_IDLE_MS));

async function open(o: AzBlobOptions, provider = azBlobProvider): Promise<AzBlobFs> {
  return (await provider.create(o, scope)) as AzBlobFs;
}

/** Starts each test with no client kept. */
function fresh(t: Test): void {
  clearContainerClients();
  t.teardown(clearContainerClients);
}

t.test('the default idle time is 60 s', async (t) => {
  t.equal(CLIENT_IDLE_MS, 60_000);
});

t.test('same identity, same client: the key prefix and per-request options do not count', async (t) => {
  fresh(t);
  const a = await open(testOptions({ key_prefix: 'a/' }));
  const b = await open(
    testOptions({ key_prefix: 'b/', upload_part_size: 8, upload_concurrency: 4, download_part_size: 2, download_concurrency: 3, access_tier: 'Cool' }),
  );
  t.equal(a.container, b.container, 'one ContainerClient');
  t.not(a.prefix, b.prefix, 'each Fs keeps its own prefix');
  t.equal(containerClientCount(), 1);
  const viaConfig = await open(testOptions({ key_prefix: 'c/' }), createAzBlobProvider({ try_timeout: 600, idle_timeout: 120 }));
  t.equal(viaConfig.container, a.container, 'a provider with the default time limits spelled out shares it too');
  for (const fs of [a, b, viaConfig]) await fs.close();
});

t.test('anything that makes clients differ gives another client', async (t) => {
  fresh(t);
  const base = testOptions();
  const a = await open(base);
  const others: [string, AzBlobFs][] = [
    ['another account key', await open({ ...base, account_key: Buffer.from('another key').toString('base64') })],
    ['another account', await open({ ...base, account_name: 'otheraccount' })],
    ['another endpoint', await open({ ...base, endpoint: 'http://127.0.0.1:1' })],
    ['another container', await open({ ...base, container: 'other-container' })],
    ['a SAS URL', await open({ container: CONTAINER, sas_url: `http://127.0.0.1:${AZ_PORT}/devstoreaccount1/${CONTAINER}?sv=2020&sig=a` })],
    ['another SAS token', await open({ container: CONTAINER, sas_url: `http://127.0.0.1:${AZ_PORT}/devstoreaccount1/${CONTAINER}?sv=2020&sig=b` })],
    ['another try_timeout', await open(base, createAzBlobProvider({ try_timeout: 5 }))],
    ['another idle_timeout', await open(base, createAzBlobProvider({ idle_timeout: 5 }))],
  ];
  for (const [what, fs] of others) t.not(fs.container, a.container, what);
  t.equal(new Set(others.map(([, fs]) => fs.container)).size, others.length, 'all different from each other');
  t.equal(containerClientCount(), others.length + 1);
  for (const fs of [a, ...others.map(([, f]) => f)]) await fs.close();
});

t.test('a create() that fails keeps no client', async (t) => {
  fresh(t);
  await t.rejects(open({ container: CONTAINER, sas_url: 'not a url ?sig=x' }), { code: 'INVALID' });
  t.equal(containerClientCount(), 0);
});

t.test('plugin teardown drops the clients', async (t) => {
  fresh(t);
  const fs = await open(testOptions());
  t.equal(containerClientCount(), 1);
  await plugin.teardown?.();
  t.equal(containerClientCount(), 0);
  await fs.close();
  t.equal(containerClientCount(), 0, 'a close after the teardown is harmless');
});

t.test('release and idle time', async (t) => {
  fresh(t);
  const a = await open(testOptions());
  const b = await open(testOptions());
  const client = a.container;
  await a.close();
  await a.close();
  await sleep(IDLE_MS * 3);
  t.equal(containerClientCount(), 1, 'b still holds the client: closing a twice released it once');
  t.equal(b.container, client);
  await b.close();
  t.equal(containerClientCount(), 1, 'kept for the next session right after the last close');
  const c = await open(testOptions());
  t.equal(c.container, client, 'a session within the idle time reuses it');
  await c.close();
  await sleep(IDLE_MS * 3);
  t.equal(containerClientCount(), 0, 'dropped once nobody held it for the idle time');
  const d = await open(testOptions());
  t.not(d.container, client, 'a later session builds a new client');
  await d.close();
  await d.close();
});

const skip = await azUnavailable();

t.test('against Azurite', { skip: skip ?? false }, async (t) => {
  /** A RecordingRelay that also counts the TCP connections clients open to it. */
  class CountingRelay extends RecordingRelay {
    connections = 0;
    constructor(port: number) {
      super(port);
      this.server.on('connection', () => this.connections++);
    }
  }
  const relay = await new CountingRelay(AZ_PORT).start();
  t.teardown(() => relay.stop());

  async function download(fs: AzBlobFs, path: string): Promise<Buffer> {
    const { stream } = await fs.openReadWithInfo(path);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  t.test('two sessions of one identity share the client and its connection', async (t) => {
    fresh(t);
    const prefix = randomPrefix('cache');
    const data = randomBytesSeeded(16 * 1024, 'client-cache');
    await rawContainer().getBlockBlobClient(`${prefix}f.bin`).uploadData(data);
    t.teardown(() =>
      rawContainer()
        .deleteBlob(`${prefix}f.bin`)
        .catch(() => undefined),
    );

    const options = testOptions({ endpoint: relay.endpoint, key_prefix: prefix });
    const a = await open(options);
    const b = await open(options);
    t.equal(a.container, b.container, 'one client');
    const before = { connections: relay.connections, requests: relay.requests.length };
    for (let i = 0; i < 5; i++) {
      t.ok((await download(a, '/f.bin')).equals(data), `download ${i} through a`);
      t.ok((await download(b, '/f.bin')).equals(data), `download ${i} through b`);
    }
    t.equal(relay.requests.length - before.requests, 10, 'one Get Blob per download');
    t.equal(relay.connections - before.connections, 1, '10 downloads of two sessions over one kept-alive connection');

    await a.close();
    t.ok((await download(b, '/f.bin')).equals(data), 'closing a leaves b working');
    const c = await open(options);
    t.equal(c.container, b.container, 'a new session gets the same client');
    t.ok((await download(c, '/f.bin')).equals(data));
    t.equal(relay.connections - before.connections, 1, 'still the one connection');
    await b.close();
    await c.close();
    await c.close();
  });
});

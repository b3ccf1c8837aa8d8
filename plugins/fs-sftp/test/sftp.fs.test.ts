import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import SftpClient from 'ssh2-sftp-client';
import { FsError, type Fs, type FsScope } from '@ferry/core';
import { closeAllPools, sftpProvider, type SftpOptions } from '../src/index.js';
import type { SftpFs } from '../src/sftp.fs.js';
import { ENDPOINT, PASSWORD, Relay, SFTP_DIR, USER, clientKey, hostFingerprint, randomPrefix, requireSftpServer, sftpOptions } from './fixtures/sftp-server.js';

const scope: FsScope = { username: 'tester', dataDir: os.tmpdir() };
const provider = sftpProvider({ idle_timeout: 5, connect_timeout: 5 });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function make(t: Test, extra: Partial<SftpOptions> = {}, p = provider): Promise<SftpFs> {
  const fs = (await p.create(sftpOptions(extra), scope)) as SftpFs;
  t.teardown(() => fs.close());
  return fs;
}

async function put(fs: Fs, file: string, data: Buffer | string, o = {}): Promise<void> {
  const h = await fs.openWrite(file, o);
  Readable.from([Buffer.from(data)]).pipe(h.stream);
  await h.done;
}

async function get(fs: Fs, file: string, o = {}): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of await fs.openRead(file, o)) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function code(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return err instanceof FsError ? err.code : `not an FsError: ${String(err)}`;
}

/** A direct ssh2-sftp-client session, to look at the server behind the Fs's back. */
async function rawClient(t: Test): Promise<SftpClient> {
  const c = new SftpClient('test', {});
  await c.connect({ host: '127.0.0.1', port: 19022, username: USER, password: PASSWORD });
  t.teardown(() => c.end());
  return c;
}

if (await requireSftpServer(t)) {
  t.teardown(closeAllPools);

  t.test('authentication', async (t) => {
    t.test('password', async (t) => {
      const fs = await make(t);
      await put(fs, '/hello.txt', 'hi');
      t.equal((await get(fs, '/hello.txt')).toString(), 'hi');
    });
    t.test('private key (password unset)', async (t) => {
      const fs = await make(t, { password: undefined, private_key: clientKey() });
      await put(fs, '/k.txt', 'key');
      t.equal((await fs.stat('/k.txt')).size, 3);
    });
    t.test('wrong password: PERMISSION with a clear message', async (t) => {
      const fs = await make(t, { password: 'nope' });
      const err = await fs.stat('/').catch((e: unknown) => e);
      t.match(err, { code: 'PERMISSION', message: /authentication failed for user "ferrysftp" at 127\.0\.0\.1:19022/ });
    });
    t.test('nothing listening: UNAVAILABLE', async (t) => {
      const fs = await make(t, { endpoint: '127.0.0.1:1' });
      const err = await fs.stat('/').catch((e: unknown) => e);
      t.match(err, { code: 'UNAVAILABLE', message: /cannot connect to 127\.0\.0\.1:1/ });
    });
    t.test('options that fail validation are refused by create()', async (t) => {
      await t.rejects(async () => provider.create({ endpoint: 'nohost', username: USER, password: PASSWORD }, scope), { code: 'INVALID' });
    });
  });

  t.test('host key fingerprints', async (t) => {
    t.test('a matching fingerprint connects', async (t) => {
      const fs = await make(t, { fingerprints: ['SHA256:' + 'A'.repeat(43), hostFingerprint()] });
      t.equal((await fs.stat('/')).isDir, true);
    });
    t.test('a mismatch refuses the connection', async (t) => {
      const fs = await make(t, { fingerprints: ['SHA256:' + 'A'.repeat(43)] });
      const err = await fs.stat('/').catch((e: unknown) => e);
      t.match(err, { code: 'PERMISSION' });
      t.match((err as Error).message, `host key of ${ENDPOINT} (${hostFingerprint()}) matches none of the configured fingerprints`);
    });
  });

  t.test('prefix confinement', async (t) => {
    const prefix = randomPrefix('confine');
    const fs = await make(t, { prefix });
    await put(fs, '/inside.txt', 'x');
    await fs.mkdir('/sub');
    const raw = await rawClient(t);
    t.same((await raw.list(prefix)).map((e) => e.name).sort(), ['inside.txt', 'sub'], 'stored under the prefix');
    t.equal(fs.remotePath('/sub/a'), `${prefix}/sub/a`);
    t.equal(await code(fs.stat('/../../etc/passwd')), 'ESCAPE');
    t.equal(await code(fs.openRead('/sub/../../x')), 'ESCAPE');
    const names: string[] = [];
    for await (const page of fs.list('/')) names.push(...page.map((e) => e.name));
    t.same(names.sort(), ['inside.txt', 'sub'], 'the root lists the prefix only');
    t.equal(await code(fs.remove('/')), 'PERMISSION', 'the root itself cannot be removed');

    const home = path.join(SFTP_DIR, 'home', USER);
    const abs = await make(t, { prefix: `${home}/${prefix}` });
    t.equal((await get(abs, '/inside.txt')).toString(), 'x', 'an absolute prefix reaches the same directory');
    const placeholder = await make(t, { prefix: '' });
    t.equal((await placeholder.stat(`/${prefix}/inside.txt`)).size, 1, 'an empty prefix is the login directory');
  });

  t.test('error mapping', async (t) => {
    const fs = await make(t);
    t.equal(await code(fs.stat('/missing')), 'NOT_FOUND');
    t.equal(await code(fs.openRead('/missing')), 'NOT_FOUND');
    t.equal(await code(fs.openWrite('/no/such/dir/f')), 'NOT_FOUND');
    await fs.mkdir('/d');
    t.equal(await code(fs.openRead('/d')), 'IS_DIR');
    t.equal(await code(fs.openReadWithInfo('/missing')), 'NOT_FOUND', 'openReadWithInfo as openRead');
    t.equal(await code(fs.openReadWithInfo('/d')), 'IS_DIR');
    t.equal(await code(fs.openReadWithInfo('/sub/../../x')), 'ESCAPE');
    t.equal(await code(fs.mkdir('/d')), 'EXISTS');
    const ro = await make(t, { prefix: 'readonly' });
    t.equal(await code(ro.mkdir('/x')), 'PERMISSION', 'root-owned directory: permission denied');
    t.equal(await code(ro.openWrite('/x.txt')), 'PERMISSION');
    const below = await make(t, { prefix: 'readonly/cannot-create' });
    t.equal(await code(below.stat('/')), 'PERMISSION', 'a prefix directory the user may not create');
    t.equal(await code(below.openWrite('/x.txt')), 'PERMISSION');
  });

  t.test('reconnection', async (t) => {
    const relay = await new Relay().start();
    t.teardown(() => relay.stop());
    const fs = await make(t, { endpoint: relay.endpoint });
    await put(fs, '/r.txt', 'still here');
    t.equal(relay.connections, 1);

    relay.dropAll(); // the remote goes away while the connection is idle
    await new Promise((r) => setTimeout(r, 100));
    t.equal((await fs.stat('/r.txt')).size, 10, 'the next operation reconnects');

    relay.dropAll(); // and again, without giving the client time to notice
    t.equal((await get(fs, '/r.txt')).toString(), 'still here', 'a request on the dead connection is retried');
    await put(fs, '/r2.txt', 'after');
    t.equal((await fs.stat('/r2.txt')).size, 5);
  });

  t.test('connection pool', async (t) => {
    const relay = await new Relay().start();
    t.teardown(() => relay.stop());
    const small = sftpProvider({ max_connections: 2, idle_timeout: 5 });
    const opts = sftpOptions({ endpoint: relay.endpoint });
    const a = (await small.create(opts, scope)) as SftpFs;
    const b = (await small.create({ ...opts, prefix: randomPrefix() }, scope)) as SftpFs;
    t.teardown(() => Promise.all([a.close(), b.close()]));
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).stat('/')));
    t.ok(relay.connections >= 1 && relay.connections <= 2, `bounded: ${relay.connections} connection(s) for 40 requests`);
    const other = (await small.create({ ...opts, password: undefined, private_key: clientKey() }, scope)) as SftpFs;
    t.teardown(() => other.close());
    await other.stat('/');
    t.equal(relay.connections, 3, 'other credentials get their own pool');
  });

  t.test('uploads', async (t) => {
    const fs = await make(t);
    const raw = await rawClient(t);
    const dir = fs.remotePath('/');

    t.test('the target appears only at done; the temporary file is hidden', async (t) => {
      const h = await fs.openWrite('/big.bin');
      h.stream.write(randomBytes(100_000));
      await new Promise((r) => setTimeout(r, 50));
      t.equal(await code(fs.stat('/big.bin')), 'NOT_FOUND', 'not visible while uploading');
      const listed: string[] = [];
      for await (const page of fs.list('/')) listed.push(...page.map((e) => e.name));
      t.notOk(
        listed.some((n) => n.startsWith('.ferry-upload-')),
        'temporary file not listed',
      );
      h.stream.end(randomBytes(5));
      t.same(await h.done, { size: 100_005 });
      t.equal((await fs.stat('/big.bin')).size, 100_005);
    });

    t.test('beforePublish sees the pending bytes and can refuse', async (t) => {
      let seen = '';
      await put(fs, '/ok.txt', 'checked', {
        beforePublish: async (p: { size: number; openRead(): Promise<Readable> }) => {
          for await (const c of await p.openRead()) seen += String(c);
          t.equal(p.size, 7);
        },
      });
      t.equal(seen, 'checked');
      const refusal = new Error('virus found');
      const h = await fs.openWrite('/bad.txt', { beforePublish: async () => Promise.reject(refusal) });
      h.stream.end('eicar');
      await t.rejects(h.done, refusal, 'done rejects with the hook error itself');
      t.equal(await code(fs.stat('/bad.txt')), 'NOT_FOUND');
      t.notOk(
        (await raw.list(dir)).some((e) => e.name.startsWith('.ferry-upload-')),
        'no temporary file left',
      );
    });

    t.test('overwrite: false refuses an existing file; mtime is applied', async (t) => {
      await put(fs, '/once.txt', 'one');
      t.equal(await code(put(fs, '/once.txt', 'two', { overwrite: false })), 'EXISTS');
      t.equal((await get(fs, '/once.txt')).toString(), 'one');
      const mtime = new Date('2020-02-03T04:05:06Z');
      await put(fs, '/dated.txt', 'd', { mtime });
      t.equal((await fs.stat('/dated.txt')).mtime.getTime(), mtime.getTime());
      await fs.chtimes('/once.txt', mtime);
      t.equal((await fs.stat('/once.txt')).mtime.getTime(), mtime.getTime());
    });

    t.test('abort removes everything', async (t) => {
      const h = await fs.openWrite('/aborted.bin');
      h.stream.write(randomBytes(300_000));
      await h.abort();
      await t.rejects(h.done, { code: 'ABORTED' });
      t.equal(await code(fs.stat('/aborted.bin')), 'NOT_FOUND');
      t.notOk(
        (await raw.list(dir)).some((e) => e.name.startsWith('.ferry-upload-')),
        'no temporary file left',
      );
    });
  });

  t.test('transfer settings keep data intact', async (t) => {
    const data = randomBytes(3 * 1024 * 1024 + 123);
    for (const extra of [{}, { disable_concurrent_reads: true }, { buffer_size: 1 }, { buffer_size: 16 }]) {
      const fs = await make(t, extra);
      await put(fs, '/f.bin', data);
      t.equal(sha(await get(fs, '/f.bin')), sha(data), `whole file ${JSON.stringify(extra)}`);
      const part = await get(fs, '/f.bin', { start: 100_000, end: 2_000_000 });
      t.equal(sha(part), sha(data.subarray(100_000, 2_000_001)), `range ${JSON.stringify(extra)}`);
    }
  });

  t.test('usedSpace walks the tree', async (t) => {
    const fs = await make(t);
    await fs.mkdir('/a/b', { recursive: true });
    await put(fs, '/a/1', '12345');
    await put(fs, '/a/b/2', '123');
    await put(fs, '/3', '1');
    t.same(await fs.usedSpace(), { size: 9, files: 3 });
    t.same(await fs.usedSpace('/a/b'), { size: 3, files: 1 });
  });
}

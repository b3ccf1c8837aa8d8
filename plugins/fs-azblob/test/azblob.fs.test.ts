import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t, { type Test } from 'tap';
import { FsError, type Fs } from '@ferry/core';
import { azBlobProvider, type AzBlobFs } from '../src/index.js';
import { azUnavailable, createTestFs, rawContainer, scope, testOptions } from './fixtures/server.js';

const why = await azUnavailable();
if (why) {
  t.comment(`skipping Azure Blob tests: ${why}`);
  t.plan(0, why);
  process.exit(0);
}

const raw = rawContainer();

async function allNames(prefix = ''): Promise<string[]> {
  const names: string[] = [];
  for await (const b of raw.listBlobsFlat({ prefix })) names.push(b.name);
  return names;
}

async function write(fs: Fs, path: string, data: Buffer | string, opts = {}) {
  const h = await fs.openWrite(path, opts);
  await pipeline(Readable.from([Buffer.from(data)]), h.stream);
  return h.done;
}

async function read(fs: Fs, path: string, opts = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await fs.openRead(path, opts)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function fresh(t: Test, extra = {}): Promise<AzBlobFs> {
  const fs = await createTestFs(extra);
  t.teardown(() => fs.close());
  return fs;
}

t.test('prefix confinement', async (t) => {
  const fs = await fresh(t);
  const prefix = fs.prefix;
  await fs.mkdir('/d');
  await fs.mkdir('/d/e/f', { recursive: true });
  await write(fs, '/d/e/f/file.txt', 'x');
  await write(fs, '/top', 'y');
  await fs.copy('/top', '/d/top-copy');
  await fs.rename('/d', '/moved');
  await fs.rename('/top', '/moved/top');
  for (const p of ['/../../escape', '/a/%2e%2e/b']) {
    await t.rejects(fs.openWrite(p), { code: 'ESCAPE' }, `${p} is refused`);
  }
  const everywhere = await allNames();
  const mine = everywhere.filter((k) => k.startsWith(prefix));
  t.same(mine.sort(), [`${prefix}moved/`, `${prefix}moved/e/f/`, `${prefix}moved/e/f/file.txt`, `${prefix}moved/top`, `${prefix}moved/top-copy`]);
  t.same(
    everywhere.filter((k) => !k.startsWith(prefix) && k.includes(prefix.slice(0, -1))),
    [],
    'no blob outside the prefix',
  );
  const other = await fresh(t, { key_prefix: `${prefix}moved/e` });
  t.equal((await other.stat('/f/file.txt')).size, 1, 'a nested prefix is a sub-tree');
  await t.rejects(other.stat('/top'), { code: 'NOT_FOUND' });
});

t.test('openWrite()', async (t) => {
  t.test('block upload of 12 MB streamed in small chunks', async (t) => {
    const fs = await fresh(t);
    const data = randomBytes(12 * 1024 * 1024 + 17);
    const h = await fs.openWrite('/big.bin', { contentType: 'application/x-test' });
    const chunks = function* () {
      for (let i = 0; i < data.length; i += 64 * 1024) yield data.subarray(i, i + 64 * 1024);
    };
    await pipeline(Readable.from(chunks()), h.stream);
    const res = await h.done;
    t.equal(res.size, data.length);
    t.ok(res.etag);
    t.equal((await fs.stat('/big.bin')).size, data.length);
    t.equal(sha(await read(fs, '/big.bin')), sha(data));
    const props = await raw.getBlobClient(fs.key('/big.bin')).getProperties();
    t.equal(props.contentType, 'application/x-test');
  });
  t.test('mtime kept in metadata, in stat and list', async (t) => {
    const fs = await fresh(t);
    const mtime = new Date('2020-05-06T07:08:09.000Z');
    await write(fs, '/m.txt', 'm', { mtime });
    t.same((await fs.stat('/m.txt')).mtime, mtime);
    await fs.rename('/m.txt', '/n.txt');
    t.same((await fs.stat('/n.txt')).mtime, mtime, 'kept across rename');
    for await (const page of fs.list('/')) t.same(page[0]?.mtime, mtime, 'list reads the metadata');
  });
  t.test('overwrite: false', async (t) => {
    const fs = await fresh(t);
    await write(fs, '/a', 'one');
    await t.rejects(fs.openWrite('/a', { overwrite: false }), { code: 'EXISTS' });
    const h = await fs.openWrite('/b', { overwrite: false });
    await write(fs, '/b', 'sneaked in');
    h.stream.end('late');
    await t.rejects(h.done, { code: 'EXISTS' }, 'the commit is conditional');
    t.equal((await read(fs, '/b')).toString(), 'sneaked in');
  });
  t.test('abort() mid-stream leaves nothing', async (t) => {
    const fs = await fresh(t);
    const h = await fs.openWrite('/aborted.bin');
    h.stream.write(randomBytes(7 * 1024 * 1024));
    await new Promise((r) => setTimeout(r, 200));
    await h.abort();
    await t.rejects(h.done, { code: 'ABORTED' });
    await t.rejects(fs.stat('/aborted.bin'), { code: 'NOT_FOUND' });
    t.same(await allNames(fs.prefix), []);
  });
  t.test('the writer destroying the stream fails done', async (t) => {
    const fs = await fresh(t);
    const h = await fs.openWrite('/broken.bin');
    h.stream.write(randomBytes(1024));
    h.stream.destroy(new Error('client went away'));
    await t.rejects(h.done, FsError);
    await t.rejects(fs.stat('/broken.bin'), { code: 'NOT_FOUND' });
  });
  t.test('zero bytes', async (t) => {
    const fs = await fresh(t);
    const h = await fs.openWrite('/empty');
    h.stream.end();
    t.equal((await h.done).size, 0);
    t.equal((await fs.stat('/empty')).size, 0);
    t.equal((await read(fs, '/empty')).length, 0);
    t.equal((await read(fs, '/empty', { start: 0, end: 10 })).length, 0);
  });
});

t.test('openRead()', async (t) => {
  const fs = await fresh(t, { download_part_size: 1, download_concurrency: 3 });
  const data = randomBytes(5 * 1024 * 1024 + 333);
  await write(fs, '/r.bin', data);
  t.equal(sha(await read(fs, '/r.bin')), sha(data), 'parallel ranged parts in order');
  const s = 1024 * 1024 - 5;
  const e = 3 * 1024 * 1024 + 7;
  t.ok((await read(fs, '/r.bin', { start: s, end: e })).equals(data.subarray(s, e + 1)));
  t.ok((await read(fs, '/r.bin', { start: data.length - 3 })).equals(data.subarray(-3)));
  t.equal((await read(fs, '/r.bin', { start: data.length })).length, 0, 'start at EOF: empty');
  await t.rejects(fs.openRead('/missing'), { code: 'NOT_FOUND' });
  await fs.mkdir('/dir');
  await t.rejects(fs.openRead('/dir'), { code: 'IS_DIR' });
});

t.test('rename() of a directory reports progress', async (t) => {
  const fs = await fresh(t);
  await fs.mkdir('/src');
  for (let i = 0; i < 12; i++) await write(fs, `/src/f${i}`, `${i}`);
  await fs.mkdir('/src/sub');
  const seen: number[] = [];
  await fs.rename('/src', '/dst', { onProgress: (n) => seen.push(n) });
  t.equal(seen.length, 14, 'one call per blob: 12 files and the two directory markers');
  await t.rejects(fs.stat('/src'), { code: 'NOT_FOUND' });
  t.same(await fs.usedSpace('/dst'), { files: 12, size: 12 + 2 });
});

t.test('errors', async (t) => {
  t.test('missing container', async (t) => {
    const fs = await createTestFs({ container: 'no-such-container' });
    await t.rejects(fs.stat('/x'), { code: 'UNAVAILABLE', message: /container "no-such-container" does not exist/ });
  });
  t.test('server down', async (t) => {
    const fs = await createTestFs({ endpoint: 'http://127.0.0.1:1' });
    await t.rejects(fs.stat('/x'), { code: 'UNAVAILABLE' });
  });
  t.test('wrong account key', async (t) => {
    const fs = (await azBlobProvider.create(testOptions({ account_key: Buffer.from('nope').toString('base64') }), scope)) as AzBlobFs;
    await t.rejects(fs.stat('/x'), { code: 'PERMISSION' });
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ListObjectsV2Command, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import t, { type Test } from 'tap';
import { FsError, type Fs } from '@ferry/core';
import { s3Provider, type S3Fs } from '../src/index.js';
import { BUCKET, createTestFs, rawClient, s3Unavailable, scope, testOptions } from './fixtures/server.js';

const why = await s3Unavailable();
if (why) {
  t.comment(`skipping S3 tests: ${why}`);
  t.plan(0, why);
  process.exit(0);
}

const raw: S3Client = rawClient();
t.teardown(() => raw.destroy());

async function allKeys(prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const out = await raw.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
    for (const o of out.Contents ?? []) keys.push(o.Key!);
    token = out.IsTruncated ? out.NextContinuationToken : undefined;
  } while (token);
  return keys;
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

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

async function fresh(t: Test, extra = {}): Promise<S3Fs> {
  const fs = await createTestFs(extra);
  t.teardown(() => fs.close());
  return fs;
}

t.test('prefix confinement', async (t) => {
  const fs = await fresh(t);
  const prefix = fs.prefix;
  t.match(prefix, /^t-.*\/$/);
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
  const everywhere = await allKeys();
  const mine = everywhere.filter((k) => k.startsWith(prefix));
  t.ok(mine.length >= 4, 'keys were written');
  t.same(
    everywhere.filter((k) => !k.startsWith(prefix) && k.includes('file.txt') && k.includes(prefix.slice(0, -1))),
    [],
    'no key outside the prefix',
  );
  t.ok(
    mine.every((k) => k.startsWith(prefix)),
    'every key under the prefix',
  );
  t.same(mine.sort(), [`${prefix}moved/`, `${prefix}moved/e/f/`, `${prefix}moved/e/f/file.txt`, `${prefix}moved/top`, `${prefix}moved/top-copy`]);
  // Another user's Fs with placeholders already interpolated sees nothing of this one.
  const other = await fresh(t, { key_prefix: `${prefix}moved/e` });
  t.same((await other.stat('/f/file.txt')).size, 1, 'a nested prefix is a sub-tree');
  await t.rejects(other.stat('/top'), { code: 'NOT_FOUND' });
});

t.test('openWrite()', async (t) => {
  t.test('multipart upload of 12 MB streamed in small chunks', async (t) => {
    const fs = await fresh(t);
    const data = randomBytes(12 * 1024 * 1024 + 17);
    const h = await fs.openWrite('/big.bin', { contentType: 'application/x-test' });
    const chunks = function* () {
      for (let i = 0; i < data.length; i += 64 * 1024) yield data.subarray(i, i + 64 * 1024);
    };
    await pipeline(Readable.from(chunks()), h.stream);
    const res = await h.done;
    t.equal(res.size, data.length);
    t.ok(res.etag, 'etag reported');
    const st = await fs.stat('/big.bin');
    t.equal(st.size, data.length);
    t.equal(sha(await read(fs, '/big.bin')), sha(data), 'content round-trips');
    const head = await raw.send(new HeadObjectCommand({ Bucket: BUCKET, Key: fs.key('/big.bin') }));
    t.equal(head.ContentType, 'application/x-test');
  });
  t.test('mtime kept in object metadata', async (t) => {
    const fs = await fresh(t);
    const mtime = new Date('2020-05-06T07:08:09.000Z');
    await write(fs, '/m.txt', 'm', { mtime });
    t.same((await fs.stat('/m.txt')).mtime, mtime);
    await fs.rename('/m.txt', '/n.txt');
    t.same((await fs.stat('/n.txt')).mtime, mtime, 'kept across rename');
  });
  t.test('overwrite: false', async (t) => {
    const fs = await fresh(t);
    await write(fs, '/a', 'one');
    await t.rejects(fs.openWrite('/a', { overwrite: false }), { code: 'EXISTS' });
    await write(fs, '/a', 'two');
    t.equal((await read(fs, '/a')).toString(), 'two');
  });
  t.test('abort() mid-stream leaves nothing', async (t) => {
    const fs = await fresh(t);
    const h = await fs.openWrite('/aborted.bin');
    h.stream.write(randomBytes(7 * 1024 * 1024));
    await new Promise((r) => setTimeout(r, 200));
    await h.abort();
    await t.rejects(h.done, { code: 'ABORTED' });
    await t.rejects(fs.stat('/aborted.bin'), { code: 'NOT_FOUND' });
    t.same(await allKeys(fs.prefix), []);
  });
  t.test('the writer destroying the stream fails done', async (t) => {
    const fs = await fresh(t);
    const h = await fs.openWrite('/broken.bin');
    h.stream.write(randomBytes(1024));
    h.stream.destroy(new Error('client went away'));
    await t.rejects(h.done, FsError);
    await t.rejects(fs.stat('/broken.bin'), { code: 'NOT_FOUND' });
  });
  t.test('an aborted signal cancels the upload', async (t) => {
    const fs = await fresh(t);
    const ac = new AbortController();
    const h = await fs.openWrite('/sig.bin', { signal: ac.signal });
    h.stream.write(randomBytes(6 * 1024 * 1024));
    ac.abort();
    await t.rejects(h.done, { code: 'ABORTED' });
    await t.rejects(fs.stat('/sig.bin'), { code: 'NOT_FOUND' });
  });
  t.test('zero bytes', async (t) => {
    const fs = await fresh(t);
    const h = await fs.openWrite('/empty');
    h.stream.end();
    t.equal((await h.done).size, 0);
    t.equal((await fs.stat('/empty')).size, 0);
    t.equal((await read(fs, '/empty')).length, 0);
  });
});

t.test('openRead()', async (t) => {
  const fs = await fresh(t, { download_part_size: 1, download_concurrency: 3 });
  const data = randomBytes(5 * 1024 * 1024 + 333);
  await write(fs, '/r.bin', data);
  t.equal(sha(await read(fs, '/r.bin')), sha(data), 'parallel ranged parts in order');
  const s = 1024 * 1024 - 5;
  const e = 3 * 1024 * 1024 + 7;
  t.ok((await read(fs, '/r.bin', { start: s, end: e })).equals(data.subarray(s, e + 1)), 'range across parts');
  t.ok((await read(fs, '/r.bin', { start: data.length - 3 })).equals(data.subarray(-3)), 'tail');
  t.equal((await read(fs, '/r.bin', { start: data.length })).length, 0, 'start at EOF: empty');
  await t.rejects(fs.openRead('/missing'), { code: 'NOT_FOUND' });
  await fs.mkdir('/dir');
  await t.rejects(fs.openRead('/dir'), { code: 'IS_DIR' });
  const ac = new AbortController();
  const stream = await fs.openRead('/r.bin', { signal: ac.signal });
  ac.abort();
  await t.rejects(
    (async () => {
      for await (const _ of stream) void _;
    })(),
    { code: 'ABORTED' },
  );
});

t.test('rename() of a directory reports progress', async (t) => {
  const fs = await fresh(t);
  await fs.mkdir('/src');
  for (let i = 0; i < 12; i++) await write(fs, `/src/f${i}`, `${i}`);
  await fs.mkdir('/src/sub');
  const seen: number[] = [];
  await fs.rename('/src', '/dst', { onProgress: (n) => seen.push(n) });
  t.equal(seen.length, 14, 'one call per object: 12 files and the two directory markers');
  t.equal(Math.max(...seen), seen.length);
  await t.rejects(fs.stat('/src'), { code: 'NOT_FOUND' });
  t.equal((await fs.usedSpace('/dst')).files, 12);
});

t.test('errors', async (t) => {
  t.test('missing bucket', async (t) => {
    const fs = await createTestFs({ bucket: 'no-such-bucket-ferry' });
    t.teardown(() => fs.close());
    await t.rejects(fs.stat('/x'), { code: 'UNAVAILABLE', message: /bucket "no-such-bucket-ferry" does not exist/ });
  });
  t.test('server down', async (t) => {
    const fs = await createTestFs({ endpoint: 'http://127.0.0.1:1' });
    t.teardown(() => fs.close());
    await t.rejects(fs.stat('/x'), { code: 'UNAVAILABLE' });
  });
  t.test('unknown access key', async (t) => {
    const fs = (await s3Provider.create(testOptions({ access_key: 'NOPE' }), scope)) as S3Fs;
    t.teardown(() => fs.close());
    await t.rejects(fs.stat('/x'), { code: 'PERMISSION' });
  });
});

t.test('single-byte ranges (s3rver reads bytes=0-0 as the whole object)', async (t) => {
  for (const extra of [{}, { download_part_size: 1, download_concurrency: 2 }]) {
    const fs = await fresh(t, extra);
    await write(fs, '/h', 'hello');
    t.equal((await read(fs, '/h', { start: 0, end: 0 })).toString(), 'h');
    t.equal((await read(fs, '/h', { start: 4, end: 4 })).toString(), 'o');
    t.equal((await read(fs, '/h', { start: 1, end: 3 })).toString(), 'ell');
  }
});

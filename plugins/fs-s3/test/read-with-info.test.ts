import { Readable } from 'node:stream';
import t, { type Test } from 'tap';
import { FsError, FsErrorCode } from '@ferry/core';
import { RecordingRelay, comparableInfo, expectFsError, randomBytesSeeded, streamBytes, writeFile } from '@ferry/testkit';
import { s3Provider, type S3Fs, type S3Options } from '../src/index.js';
import { openS3ReadWithMeta, type S3ReadParams } from '../src/s3-read.js';
import { BUCKET, S3_PORT, s3Unavailable, scope, testOptions, removePrefix } from './fixtures/server.js';

// openReadWithInfo(): the info comes from the first GetObject's answer, so a
// download is one request (stat() then openRead() send a HeadObject first).
// A relay in front of s3rver counts what the server receives.

const skip = await s3Unavailable();
const MB = 1024 * 1024;

/** An S3Fs that talks to s3rver through a recording relay. */
async function relayed(t: Test, extra: Partial<S3Options> = {}): Promise<{ fs: S3Fs; relay: RecordingRelay }> {
  const relay = await new RecordingRelay(S3_PORT).start();
  const fs = (await s3Provider.create(testOptions({ endpoint: relay.endpoint, ...extra }), scope)) as S3Fs;
  t.teardown(async () => {
    await fs.close();
    await relay.stop();
    await removePrefix(fs.prefix);
  });
  return { fs, relay };
}

/** The requests received since the last call. */
function taken(relay: RecordingRelay): string[] {
  return relay.requests.splice(0).map((r) => `${r.method} ${r.url.split('?')[0]}`);
}

t.test('against s3rver', { skip: skip ?? false }, async (t) => {
  t.test('one GetObject, no HeadObject', async (t) => {
    const { fs, relay } = await relayed(t);
    const data = randomBytesSeeded(200_000, 'one-request');
    const mtime = new Date('2020-01-02T03:04:05.000Z');
    await writeFile(fs, '/d/w.bin', data, { mtime });
    taken(relay);

    const { info, stream } = await fs.openReadWithInfo('/d/w.bin');
    t.same(taken(relay), [`GET /${BUCKET}/${fs.prefix}d/w.bin`], 'the stream is returned after one GetObject');
    t.ok((await streamBytes(stream)).equals(data), 'every byte');
    t.same(taken(relay), [], 'and nothing more while it is read');
    t.equal(info.mtime.getTime(), mtime.getTime(), 'mtime from the ferry-mtime metadata of the GetObject answer');
    t.match(info, { name: 'w.bin', path: '/d/w.bin', isDir: false, size: data.length, etag: /^[0-9a-f]{32}$/ });

    const st = await fs.stat('/d/w.bin');
    t.same(taken(relay), [`HEAD /${BUCKET}/${fs.prefix}d/w.bin`], 'stat() is a HeadObject');
    t.same(comparableInfo(info), comparableInfo(st), 'info equals stat()');
  });

  t.test('multi-part read: every byte, the right info', async (t) => {
    const { fs, relay } = await relayed(t, { download_part_size: 1, download_concurrency: 3 });
    const data = randomBytesSeeded(3.5 * MB, 'multi-part');
    await writeFile(fs, '/big.bin', data);
    taken(relay);

    const { info, stream } = await fs.openReadWithInfo('/big.bin');
    const first = relay.requests[0];
    t.same(taken(relay), [`GET /${BUCKET}/${fs.prefix}big.bin`], 'one ranged GetObject before the stream');
    t.equal(first?.headers.range, `bytes=0-${MB - 1}`, 'the first part only');
    t.equal(info.size, data.length, 'size: the total of Content-Range, not the part length');
    const got = await streamBytes(stream);
    t.ok(got.equals(data), `every byte (${got.length} of ${data.length})`);
    const rest = relay.requests.map((r) => `${r.method} ${r.headers.range ?? ''}`).sort();
    t.same(rest, [`GET bytes=${MB}-${2 * MB - 1}`, `GET bytes=${2 * MB}-${3 * MB - 1}`, `GET bytes=${3 * MB}-${3.5 * MB - 1}`], 'the other parts');
    taken(relay);
    t.same(comparableInfo(info), comparableInfo(await fs.stat('/big.bin')), 'info equals stat()');
  });

  t.test('multi-part read of an empty object', async (t) => {
    // Not through the relay: s3rver answers a ranged GET of an empty object with
    // Content-Length 1 and never sends the byte, and the relay forwards no headers before a body.
    const fs = (await s3Provider.create(testOptions({ download_part_size: 1, download_concurrency: 3 }), scope)) as S3Fs;
    t.teardown(async () => {
      await fs.close();
      await removePrefix(fs.prefix);
    });
    await writeFile(fs, '/empty', '');
    const { info, stream } = await fs.openReadWithInfo('/empty');
    t.equal((await streamBytes(stream)).length, 0, 'no bytes');
    t.equal(info.size, 0, 'size 0');
    t.same(comparableInfo(info), comparableInfo(await fs.stat('/empty')), 'info equals stat()');
  });

  t.test('failures', async (t) => {
    const { fs, relay } = await relayed(t);
    await fs.mkdir('/dir');
    await writeFile(fs, '/dir/f', 'x');
    await writeFile(fs, '/implicit/f', 'x'); // a directory without a marker
    taken(relay);
    await expectFsError(t, fs.openReadWithInfo('/nothing'), 'NOT_FOUND', 'a missing key');
    await expectFsError(t, fs.openReadWithInfo('/dir'), 'IS_DIR', 'a directory (marker)');
    await expectFsError(t, fs.openReadWithInfo('/implicit'), 'IS_DIR', 'a directory (a key under it)');
    await expectFsError(t, fs.openReadWithInfo('/dir/f/x'), 'NOT_FOUND', 'under a file');
    taken(relay);
    await expectFsError(t, fs.openReadWithInfo('/'), 'IS_DIR', 'the root');
    await expectFsError(t, fs.openReadWithInfo('/dir/f', { signal: AbortSignal.abort() }), 'ABORTED', 'an aborted signal');
    t.same(taken(relay), [], 'neither sends a request');

    const ac = new AbortController();
    await writeFile(fs, '/big', randomBytesSeeded(2 * MB, 'abort'));
    const { stream } = await fs.openReadWithInfo('/big', { signal: ac.signal });
    ac.abort();
    const err = await streamBytes(stream).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.equal(err instanceof FsError && err.code, 'ABORTED', 'aborting the signal destroys the stream');
  });
});

// The metadata openS3ReadWithMeta() reports, on fake answers: no server.
t.test('openS3ReadWithMeta() metadata', async (t) => {
  const data = Buffer.from('0123456789abcdefghijklmno'); // 25 bytes
  const lastModified = new Date('2022-02-02T00:00:00Z');
  const base = (over: Partial<S3ReadParams>): S3ReadParams => ({
    path: '/f',
    start: 0,
    partSize: 10,
    concurrency: 2,
    partTimeoutMs: 0,
    get: async (range) => {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range ?? '');
      const s = m ? Number(m[1]) : 0;
      const e = m?.[2] ? Math.min(Number(m[2]), data.length - 1) : data.length - 1;
      return {
        Body: Readable.from([data.subarray(s, e + 1)]),
        ContentLength: e - s + 1,
        ...(m ? { ContentRange: `bytes ${s}-${e}/${data.length}` } : {}),
        LastModified: lastModified,
        ETag: '"abc"',
        Metadata: { 'ferry-mtime': '1000' },
      };
    },
    head: async () => (t.fail('no HeadObject'), undefined),
    isDir: async () => false,
    mapError: (e) => (e instanceof FsError ? e : new FsError(FsErrorCode.Unavailable, String(e))),
    ...over,
  });

  const ranged = await openS3ReadWithMeta(base({}));
  t.same(
    ranged.meta,
    { ContentLength: 25, LastModified: lastModified, ETag: '"abc"', Metadata: { 'ferry-mtime': '1000' } },
    'parts: the size from Content-Range',
  );
  t.ok((await streamBytes(ranged.stream)).equals(data), 'every byte of the parts');

  const whole = await openS3ReadWithMeta(base({ concurrency: 1 }));
  t.equal(whole.meta.ContentLength, 25, 'one GET: the size from Content-Length');
  t.ok((await streamBytes(whole.stream)).equals(data), 'every byte of one GET');

  // AWS refuses any range of an empty object with 416: the HeadObject that tells the size gives the metadata.
  const head = { ContentLength: 0, LastModified: lastModified, ETag: '"e"' };
  const empty = await openS3ReadWithMeta(
    base({
      get: async () => Promise.reject(Object.assign(new Error('range'), { name: 'InvalidRange', $metadata: { httpStatusCode: 416 } })),
      head: async () => head,
    }),
  );
  t.equal(empty.meta, head, 'a 416: the HeadObject answer');
  t.equal((await streamBytes(empty.stream)).length, 0, 'no bytes');
});

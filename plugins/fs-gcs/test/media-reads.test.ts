import t, { type Test } from 'tap';
import { FsErrorCode, type FsScope } from '@ferry/core';
import { expectFsError, randomBytesSeeded, streamBytes, writeFile } from '@ferry/testkit';
import { gcsProvider } from '../src/index.js';
import type { GcsFs } from '../src/gcs.fs.js';
import { ENDPOINT, gcsOptions, requireGcsServer } from './fixtures/gcs-server.js';
import { MediaProxy } from './fixtures/media-proxy.js';

// Object bodies are read on the plugin's own connections (src/gcs-media.ts).
// The client's read streams destroyed the HTTP agent every Storage client of
// the process shares whenever one of them ended early: other reads in flight
// hung, the next request failed.

const scope: FsScope = { username: 'tester', dataDir: '.' };

async function direct(t: Test): Promise<GcsFs> {
  const fs = (await gcsProvider({ endpoint: ENDPOINT }).create(gcsOptions(), scope)) as GcsFs;
  t.teardown(() => fs.close());
  return fs;
}

async function proxied(t: Test, extra: { max_retries?: number } = {}): Promise<{ fs: GcsFs; proxy: MediaProxy }> {
  const proxy = new MediaProxy();
  const endpoint = await proxy.start();
  const fs = (await gcsProvider({ endpoint, ...extra }).create(gcsOptions(), scope)) as GcsFs;
  t.teardown(async () => {
    await fs.close();
    await proxy.stop();
  });
  return { fs, proxy };
}

if (await requireGcsServer(t)) {
  t.test('reads in flight, and the next requests, are untouched by reads given up', async (t) => {
    const fs = await direct(t);
    const big = randomBytesSeeded(24 * 1024 * 1024, 'media-big');
    await writeFile(fs, '/big', big);
    await writeFile(fs, '/small', randomBytesSeeded(300_000, 'media-small'));
    const inFlight = await fs.openRead('/big');
    const whole = streamBytes(inFlight);
    for (let i = 0; i < 3; i++) {
      (await fs.openRead('/small')).destroy();
      (await fs.openReadWithInfo('/big')).stream.destroy();
      (await fs.openRead('/big', { start: 1000, end: 5_000_000 })).destroy();
    }
    t.ok((await whole).equals(big), 'the read in flight got every byte');
    t.equal((await fs.stat('/small')).size, 300_000, 'stat() right after');
    await expectFsError(t, fs.openRead('/missing'), FsErrorCode.NotFound, 'a read of a missing object right after');
    t.equal((await streamBytes(await fs.openRead('/small'))).length, 300_000, 'a whole read right after');
  });

  t.test('a whole body is checked against the CRC-32C of x-goog-hash; a range is not', async (t) => {
    const { fs, proxy } = await proxied(t);
    const data = randomBytesSeeded(200_000, 'media-crc');
    await writeFile(fs, '/f', data);
    t.ok((await streamBytes(await fs.openRead('/f'))).equals(data), 'the true hash: every byte');
    proxy.rewriteMedia = (h) => void (h['x-goog-hash'] = 'crc32c=AAAAAA==,md5=' + String(h['x-goog-hash']).split('md5=')[1]);
    const err = await streamBytes(await fs.openRead('/f')).then(
      () => null,
      (e: unknown) => e,
    );
    t.match(err, { message: /CRC-32C/ }, 'another hash: the stream fails at its end');
    const part = await streamBytes(await fs.openRead('/f', { start: 10, end: 99 }));
    t.ok(part.equals(data.subarray(10, 100)), 'a range is not checked (its hash is the whole object`s)');
    proxy.rewriteMedia = (h) => void delete h['x-goog-hash'];
    t.ok((await streamBytes(await fs.openRead('/f'))).equals(data), 'no hash: nothing to check');
  });

  t.test('transient answers (429, 503) are asked again up to max_retries; others are the error they map to', async (t) => {
    const { fs, proxy } = await proxied(t, { max_retries: 2 });
    const data = randomBytesSeeded(50_000, 'media-retry');
    await writeFile(fs, '/f', data);
    const failures = [503, 429];
    proxy.failMedia = () => failures.shift();
    proxy.seen.splice(0);
    t.ok((await streamBytes(await fs.openRead('/f'))).equals(data), 'read after a 503 and a 429');
    t.equal(proxy.seen.filter((s) => s.kind === 'media').length, 3, 'three requests');
    proxy.failMedia = () => 503;
    await expectFsError(t, fs.openRead('/f'), FsErrorCode.Unavailable, 'still 503 after max_retries');
    proxy.failMedia = () => 403;
    proxy.seen.splice(0);
    await expectFsError(t, fs.openRead('/f'), FsErrorCode.Permission, '403');
    t.equal(proxy.seen.filter((s) => s.kind === 'media').length, 1, 'not asked again');
    proxy.failMedia = undefined;
  });
}

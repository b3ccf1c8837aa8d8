import type http from 'node:http';
import t, { type Test } from 'tap';
import { FsErrorCode, type FsScope } from '@ferry/core';
import { comparableInfo, expectFsError, randomBytesSeeded, streamBytes, writeFile } from '@ferry/testkit';
import { gcsProvider } from '../src/index.js';
import type { GcsFs } from '../src/gcs.fs.js';
import { gcsOptions, requireGcsServer } from './fixtures/gcs-server.js';
import { MediaProxy } from './fixtures/media-proxy.js';

// openReadWithInfo(): the metadata request goes out with the body's, not
// before it, and the body is kept only when its generation headers are the
// metadata's. A proxy in front of the emulator sees the requests, can hold
// the metadata's answer until the body was asked, and can change the body's
// headers.

const scope: FsScope = { username: 'tester', dataDir: '.' };

async function proxied(t: Test): Promise<{ fs: GcsFs; proxy: MediaProxy }> {
  const proxy = new MediaProxy();
  const endpoint = await proxy.start();
  const fs = (await gcsProvider({ endpoint }).create(gcsOptions(), scope)) as GcsFs;
  t.teardown(async () => {
    await fs.close?.();
    await proxy.stop();
  });
  return { fs, proxy };
}

const taken = (proxy: MediaProxy) => proxy.seen.splice(0).map((s) => `${s.kind} ${s.method}`);

if (await requireGcsServer(t)) {
  t.test('the metadata and the body are asked at once; the info is what stat() reports', async (t) => {
    const { fs, proxy } = await proxied(t);
    const data = randomBytesSeeded(300_000, 'gcs-with-info');
    const mtime = new Date('2021-02-03T04:05:06.000Z');
    await writeFile(fs, '/d/w.bin', data, { mtime });
    taken(proxy);

    proxy.holdMetaForMedia = true;
    const { info, stream } = await fs.openReadWithInfo('/d/w.bin');
    t.same(proxy.overlapped, [true], 'the body was asked while the metadata answer was still held');
    t.same(taken(proxy).sort(), ['media GET', 'meta GET'], 'two requests, nothing else');
    t.ok((await streamBytes(stream)).equals(data), 'every byte');
    t.same(taken(proxy), [], 'and nothing more while it is read');
    t.equal(info.mtime.getTime(), mtime.getTime(), 'mtime from the ferry-mtime metadata');
    proxy.holdMetaForMedia = false;
    t.same(comparableInfo(info), comparableInfo(await fs.stat('/d/w.bin')), 'info equals stat()');

    // without the hold, a sequential implementation would show the metadata first and alone: counted in the conformance suite
    const empty = await (async () => {
      await writeFile(fs, '/empty', Buffer.alloc(0));
      taken(proxy);
      return fs.openReadWithInfo('/empty');
    })();
    t.equal(empty.info.size, 0, 'an empty object');
    t.equal((await streamBytes(empty.stream)).length, 0);
    t.same(taken(proxy).sort(), ['media GET', 'meta GET']);
  });

  t.test('another generation or metageneration in the body: the body is dropped and the object read after stat()', async (t) => {
    const { fs, proxy } = await proxied(t);
    const data = randomBytesSeeded(100_000, 'gcs-changed');
    await writeFile(fs, '/f.bin', data);
    for (const [what, rewrite] of [
      ['generation', (h: http.IncomingHttpHeaders) => void (h['x-goog-generation'] = '1')],
      ['metageneration', (h: http.IncomingHttpHeaders) => void (h['x-goog-metadatageneration'] = h['x-goog-metageneration'] = '999')],
      ['no generation headers', (h: http.IncomingHttpHeaders) => void delete h['x-goog-generation']],
    ] as const) {
      let rewritten = 0;
      proxy.rewriteMedia = (h) => {
        // only the first body (the one asked with the metadata); the one after stat() is left alone
        if (rewritten++ === 0) rewrite(h);
      };
      taken(proxy);
      const { info, stream } = await fs.openReadWithInfo('/f.bin');
      t.ok((await streamBytes(stream)).equals(data), `${what}: every byte`);
      const seen = taken(proxy);
      t.equal(seen.filter((s) => s === 'media GET').length, 2, `${what}: the body asked again`);
      t.ok(seen.filter((s) => s === 'meta GET').length >= 2, `${what}: the metadata asked again (stat)`);
      t.same(comparableInfo(info), comparableInfo(await fs.stat('/f.bin')), `${what}: info equals stat()`);
    }
    proxy.rewriteMedia = undefined;
    taken(proxy);
    proxy.holdMetaForMedia = true;
    const { stream } = await fs.openReadWithInfo('/f.bin');
    t.ok((await streamBytes(stream)).equals(data));
    t.same(taken(proxy), ['meta GET', 'media GET'], 'a server without generation headers: the metadata first from then on');
    t.same(proxy.overlapped, [false], 'the body was not asked while the metadata answer was held');
  });

  t.test('errors: as openRead() and stat() give them', async (t) => {
    const { fs } = await proxied(t);
    await writeFile(fs, '/dir/inside', Buffer.from('x'));
    await fs.mkdir('/marked');
    await expectFsError(t, fs.openReadWithInfo('/missing'), FsErrorCode.NotFound, 'a missing object');
    await expectFsError(t, fs.openReadWithInfo('/dir'), FsErrorCode.IsDirectory, 'a directory (objects under dir/)');
    await expectFsError(t, fs.openReadWithInfo('/marked'), FsErrorCode.IsDirectory, 'a directory (its marker)');
    await expectFsError(t, fs.openReadWithInfo('/'), FsErrorCode.IsDirectory, 'the root');
    await expectFsError(t, fs.openReadWithInfo('/dir/inside', { signal: AbortSignal.abort() }), FsErrorCode.Aborted, 'an aborted signal');
    await expectFsError(t, fs.openReadWithInfo('/../../x'), FsErrorCode.Escape, 'a path out of the prefix');
  });

  t.test('a signal aborted while the body is read ends the stream with ABORTED', async (t) => {
    const { fs } = await proxied(t);
    await writeFile(fs, '/big.bin', randomBytesSeeded(4 * 1024 * 1024, 'gcs-abort'));
    const ac = new AbortController();
    const { stream } = await fs.openReadWithInfo('/big.bin', { signal: ac.signal });
    let got = 0;
    const err = await new Promise<unknown>((resolve) => {
      stream.on('data', (c: Buffer) => {
        got += c.length;
        if (got > 100_000) ac.abort();
      });
      stream.on('error', resolve);
      stream.on('end', () => resolve(null));
    });
    t.match(err, { code: FsErrorCode.Aborted }, `aborted after ${got} bytes`);
  });
}

import t, { type Test } from 'tap';
import { FsErrorCode, type FileInfo } from '@ferry/core';
import { RecordingRelay, expectFsError, randomBytesSeeded, readUntilError, writeFile, type RecordedRequest } from '@ferry/testkit';
import type { AzBlobFs, AzBlobOptions } from '../src/index.js';
import { AZ_PORT, azUnavailable, createTestFs } from './fixtures/server.js';

// openReadWithInfo() counted at the wire: Azurite behind a RecordingRelay. The
// FileInfo must come from the Get Blob answer itself, so a read sends no Get
// Blob Properties (HEAD) and no listing.

const why = await azUnavailable();
if (why) {
  t.comment(`skipping Azure Blob tests: ${why}`);
  t.plan(0, why);
  process.exit(0);
}

const relay = await new RecordingRelay(AZ_PORT).start();
t.teardown(() => relay.stop());

/** An Fs whose requests go through the relay. */
async function relayed(t: Test, extra: Partial<AzBlobOptions> = {}): Promise<AzBlobFs> {
  const fs = await createTestFs({ endpoint: relay.endpoint, ...extra });
  t.teardown(() => fs.close());
  return fs;
}

/** The requests `what` sent, as 'METHOD kind' (blob, list, ...). */
async function sent<T>(what: () => Promise<T>): Promise<{ value: T; requests: RecordedRequest[]; seen: string[] }> {
  const before = relay.requests.length;
  const value = await what();
  const requests = relay.requests.slice(before);
  return { value, requests, seen: requests.map((r) => `${r.method} ${r.url.includes('comp=list') ? 'list' : 'blob'}`) };
}

async function bytes(s: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const comparable = (i: FileInfo) => ({ ...i, mtime: i.mtime.getTime() });

t.test('a whole file: one unranged Get Blob, info equal to stat()', async (t) => {
  const fs = await relayed(t);
  const data = randomBytesSeeded(700_000, 'one-get');
  const mtime = new Date('2022-02-03T04:05:06.000Z');
  await writeFile(fs, '/d/f.bin', data, { mtime });
  const { value, requests, seen } = await sent(() => fs.openReadWithInfo('/d/f.bin'));
  t.same(seen, ['GET blob'], 'one Get Blob before the stream is returned, no properties request (HEAD)');
  t.equal(requests[0]?.headers['x-ms-range'], undefined, 'no range: the whole blob');
  const read = await sent(() => bytes(value.stream));
  t.ok(read.value.equals(data), 'every byte');
  t.same(read.seen, [], 'reading the body sends nothing more');
  const stat = await fs.stat('/d/f.bin');
  t.same(comparable(value.info), comparable(stat), 'info equals stat()');
  t.equal(value.info.mtime.getTime(), mtime.getTime(), 'the mtime from the ferry_mtime metadata');
  t.equal(value.info.size, data.length);
  t.ok(value.info.etag, 'an etag');

  const twoTrips = await sent(async () => (await fs.stat('/d/f.bin'), await bytes(await fs.openRead('/d/f.bin'))));
  t.same(twoTrips.seen, ['HEAD blob', 'GET blob'], 'what stat() then openRead() send, for comparison');
});

t.test('parallel parts: the first ranged Get Blob gives the whole size', async (t) => {
  const fs = await relayed(t, { download_part_size: 1, download_concurrency: 3 });
  const data = randomBytesSeeded(2 * 1024 * 1024 + 77, 'parts');
  await writeFile(fs, '/p.bin', data);
  const { value, requests, seen } = await sent(() => fs.openReadWithInfo('/p.bin'));
  t.same(seen, ['GET blob'], 'one Get Blob before the stream is returned');
  t.match(requests[0]?.headers['x-ms-range'], /^bytes=0-1048575$/, 'the first part only');
  t.equal(value.info.size, data.length, 'the size from Content-Range');
  const read = await sent(() => bytes(value.stream));
  t.ok(read.value.equals(data), 'every byte, parts in order');
  t.same(read.seen, ['GET blob', 'GET blob'], 'the other two parts, no properties request');
  t.same(comparable(value.info), comparable(await fs.stat('/p.bin')), 'info equals stat()');
});

t.test('an empty blob', async (t) => {
  const fs = await relayed(t);
  await writeFile(fs, '/empty', '');
  const { value, seen } = await sent(() => fs.openReadWithInfo('/empty'));
  t.same(seen, ['GET blob'], 'one Get Blob');
  t.equal((await bytes(value.stream)).length, 0, 'no bytes');
  t.same(comparable(value.info), comparable(await fs.stat('/empty')), 'info equals stat()');

  // A ranged first part of an empty blob is refused (416): its properties then describe it.
  const parts = await relayed(t, { download_part_size: 1, download_concurrency: 2, key_prefix: fs.prefix });
  const ranged = await sent(() => parts.openReadWithInfo('/empty'));
  t.same(ranged.seen, ['GET blob', 'HEAD blob'], 'with parallel parts: the refused range, then the properties');
  t.equal((await bytes(ranged.value.stream)).length, 0, 'no bytes');
  t.same(comparable(ranged.value.info), comparable(await fs.stat('/empty')), 'info equals stat()');
});

t.test('errors', async (t) => {
  const fs = await relayed(t);
  await writeFile(fs, '/dir/inside', 'x');
  await expectFsError(t, fs.openReadWithInfo('/missing'), FsErrorCode.NotFound, 'a missing blob');
  await expectFsError(t, fs.openReadWithInfo('/dir'), FsErrorCode.IsDirectory, 'a directory (blobs under dir/)');
  await fs.mkdir('/marked');
  await expectFsError(t, fs.openReadWithInfo('/marked'), FsErrorCode.IsDirectory, 'a directory (its marker blob)');
  const root = await sent(() => expectFsError(t, fs.openReadWithInfo('/'), FsErrorCode.IsDirectory, 'the root'));
  t.same(root.seen, [], 'the root is a directory without asking');
  const aborted = await sent(() =>
    expectFsError(t, fs.openReadWithInfo('/dir/inside', { signal: AbortSignal.abort() }), FsErrorCode.Aborted, 'an aborted signal'),
  );
  t.same(aborted.seen, [], 'nothing sent');
  await expectFsError(t, fs.openReadWithInfo('/../../x'), FsErrorCode.Escape, 'a path out of the prefix');
});

t.test('a signal aborted during the read fails the stream with ABORTED', async (t) => {
  const fs = await relayed(t);
  await writeFile(fs, '/big.bin', randomBytesSeeded(4 * 1024 * 1024, 'abort'));
  const ac = new AbortController();
  const { stream } = await fs.openReadWithInfo('/big.bin', { signal: ac.signal });
  stream.once('data', () => ac.abort());
  const { error, received } = await readUntilError(stream);
  t.match(error, { code: FsErrorCode.Aborted });
  t.ok(received < 4 * 1024 * 1024, `stopped early (${received} bytes)`);
});

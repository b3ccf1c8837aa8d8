import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Storage } from '@google-cloud/storage';
import { FsError, type Fs, type FsScope } from '@ferry/core';
import { MTIME_META, gcsProvider, type GcsOptions } from '../src/index.js';
import type { GcsFs } from '../src/gcs.fs.js';
import { Crc32cValidator } from '../src/lib.js';
import { BUCKET, ENDPOINT, RecordingRelay, gcsOptions, randomPrefix, requireGcsServer } from './fixtures/gcs-server.js';

const scope: FsScope = { username: 'tester', dataDir: '.' };
const provider = gcsProvider({ endpoint: ENDPOINT });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** Direct client, to look at the bucket behind the Fs's back. */
const raw = new Storage({ apiEndpoint: ENDPOINT, projectId: 'demo-ferry' }).bucket(BUCKET);

async function make(extra: Partial<GcsOptions> = {}, p = provider): Promise<GcsFs> {
  return (await p.create(gcsOptions(extra), scope)) as GcsFs;
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

async function keysUnder(prefix: string): Promise<string[]> {
  const [files] = await raw.getFiles({ prefix });
  return files.map((f) => f.name).sort();
}

if (await requireGcsServer(t)) {
  t.test('key_prefix confinement and directory markers', async (t) => {
    const prefix = randomPrefix('confine');
    const fs = await make({ key_prefix: prefix });
    await put(fs, '/a.txt', 'A');
    await fs.mkdir('/dir');
    await put(fs, '/dir/b.txt', 'B');
    t.same(await keysUnder(prefix), [`${prefix}/a.txt`, `${prefix}/dir/`, `${prefix}/dir/b.txt`], 'keys under the prefix, "dir/" marker');
    t.equal(await code(fs.stat('/../x')), 'ESCAPE');
    t.equal(await code(fs.openWrite('/a/../../x')), 'ESCAPE');
    t.equal((await fs.stat('/dir')).isDir, true, 'a marker makes a directory');
    await fs.mkdir('/deep/er/est', { recursive: true });
    t.same(await keysUnder(`${prefix}/deep`), [`${prefix}/deep/er/est/`], 'recursive mkdir writes the leaf marker only');
    t.equal((await fs.stat('/deep/er')).isDir, true, 'parents are implied by the prefix');
    await fs.remove('/dir/b.txt');
    t.equal((await fs.stat('/dir')).isDir, true, 'the marker keeps an emptied directory');
    t.equal(await code(fs.remove('/')), 'PERMISSION');
  });

  t.test('listing: delimiter, pagination, prefixes once', async (t) => {
    const fs = await make();
    for (const n of ['a', 'b', 'c', 'd', 'e']) await put(fs, `/l/${n}.txt`, n);
    for (const d of ['x', 'y', 'z']) await put(fs, `/l/${d}/inner.txt`, d);
    const pages: number[] = [];
    const names: string[] = [];
    for await (const page of fs.list('/l', { pageSize: 2 })) {
      pages.push(page.length);
      names.push(...page.map((e) => (e.isDir ? e.name + '/' : e.name)));
    }
    t.ok(
      pages.every((n) => n <= 2),
      `pages of at most 2 (${pages.join(',')})`,
    );
    t.same(names.sort(), ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt', 'x/', 'y/', 'z/']);
    t.equal(
      await code(
        (async () => {
          for await (const _ of fs.list('/l/a.txt')) void _;
        })(),
      ),
      'NOT_DIR',
    );
    t.equal(
      await code(
        (async () => {
          for await (const _ of fs.list('/nope')) void _;
        })(),
      ),
      'NOT_FOUND',
    );
  });

  t.test('resumable uploads in several requests, ranged reads', async (t) => {
    const relay = await new RecordingRelay().start();
    t.teardown(() => relay.stop());
    const fs = await make({ upload_part_size: 1 }, gcsProvider({ endpoint: relay.endpoint }));
    const data = randomBytes(5 * 1024 * 1024 + 333);
    const h = await fs.openWrite('/big.bin'); // size unknown: resumable, 1 MB requests
    Readable.from([data.subarray(0, 1e6), data.subarray(1e6)]).pipe(h.stream);
    t.equal((await h.done).size, data.length);
    const puts = relay.requests.filter((r) => r.method === 'PUT' && r.url.includes('upload_id='));
    t.equal(puts.length, 6, '5 MB + 333 bytes in 1 MB requests: 6 PUTs');
    t.equal(sha(await get(fs, '/big.bin')), sha(data), 'whole object');
    t.equal(sha(await get(fs, '/big.bin', { start: 1_048_570, end: 3_000_000 })), sha(data.subarray(1_048_570, 3_000_001)), 'range');
    t.equal((await get(fs, '/big.bin', { start: data.length - 3 })).length, 3, 'tail');
    t.equal((await get(fs, '/big.bin', { start: data.length })).length, 0, 'past the end: empty');
    await put(fs, '/small.bin', 'xyz', { size: 3 }); // announced size within a part: single request
    t.equal((await get(fs, '/small.bin')).toString(), 'xyz');
  });

  t.test('a read is one request: no metadata request before the body', async (t) => {
    const relay = await new RecordingRelay().start();
    t.teardown(() => relay.stop());
    const fs = await make({}, gcsProvider({ endpoint: relay.endpoint }));
    const data = randomBytes(300_000);
    await put(fs, '/one.bin', data, { size: data.length });
    await fs.mkdir('/adir');
    const reads = async (what: () => Promise<unknown>) => {
      const before = relay.requests.length;
      await what();
      return relay.requests.slice(before).map((r) => `${r.method} ${r.url.includes('alt=media') ? 'media' : 'metadata'}`);
    };
    t.same(await reads(async () => t.equal(sha(await get(fs, '/one.bin')), sha(data), 'whole object')), ['GET media'], 'whole read: one GET of the body');
    t.same(
      await reads(async () => t.equal(sha(await get(fs, '/one.bin', { start: 1000, end: 1999 })), sha(data.subarray(1000, 2000)), 'range')),
      ['GET media'],
      'ranged read: one GET of the body',
    );
    t.equal(await code(fs.openRead('/missing.bin')), 'NOT_FOUND', 'a missing object rejects openRead');
    t.equal(await code(fs.openRead('/adir')), 'IS_DIR', 'a directory rejects openRead');
    const ctrl = new AbortController();
    ctrl.abort();
    t.equal(await code(fs.openRead('/one.bin', { signal: ctrl.signal })), 'ABORTED', 'an aborted signal rejects openRead');
  });

  t.test('copy, rename, overwrite and mtime', async (t) => {
    const fs = await make();
    await put(fs, '/src.txt', 'content');
    await fs.copy!('/src.txt', '/copy.txt');
    t.equal((await get(fs, '/copy.txt')).toString(), 'content', 'server-side copy');
    await fs.rename('/copy.txt', '/moved.txt');
    t.equal(await code(fs.stat('/copy.txt')), 'NOT_FOUND', 'rename deletes the source');
    t.equal((await get(fs, '/moved.txt')).toString(), 'content');
    await fs.mkdir('/tree/sub', { recursive: true });
    await put(fs, '/tree/sub/f', 'f');
    let progress = 0;
    await fs.rename('/tree', '/tree2', { onProgress: (n) => (progress = n) });
    t.equal(progress, 2, 'a directory moves object by object (marker + file)');
    t.equal((await get(fs, '/tree2/sub/f')).toString(), 'f');
    t.equal(await code(fs.stat('/tree')), 'NOT_FOUND');
    t.equal(await code(put(fs, '/src.txt', 'new', { overwrite: false })), 'EXISTS');
    t.equal((await get(fs, '/src.txt')).toString(), 'content');
    const mtime = new Date('2021-03-04T05:06:07.089Z');
    await put(fs, '/dated.txt', 'd', { mtime });
    t.equal((await fs.stat('/dated.txt')).mtime.toISOString(), mtime.toISOString(), 'mtime from custom metadata');
    const [md] = await raw.file(fs.key('/dated.txt')).getMetadata();
    t.equal(md.metadata?.[MTIME_META], String(mtime.getTime()), `stored as metadata "${MTIME_META}"`);
    const later = new Date('2022-01-01T00:00:00Z');
    await fs.chtimes!('/src.txt', later);
    t.equal((await fs.stat('/src.txt')).mtime.getTime(), later.getTime(), 'chtimes patches the metadata');
  });

  t.test('storage class, content type and ACL are sent with the upload', async (t) => {
    // The emulator stores every object as STANDARD and ignores ACLs: look at the requests instead.
    const relay = await new RecordingRelay().start();
    t.teardown(() => relay.stop());
    const fs = await make({ storage_class: 'NEARLINE', acl: 'publicRead' }, gcsProvider({ endpoint: relay.endpoint }));
    await put(fs, '/c.json', '{}', { contentType: 'application/json', size: 2 }); // fits one part: simple upload
    await put(fs, '/r.bin', randomBytes(1000)); // size unknown: resumable
    const uploads = relay.requests.filter((r) => r.method === 'POST' && r.url.startsWith('/upload/'));
    t.equal(uploads.length, 2, 'a simple and a resumable upload');
    for (const u of uploads) {
      t.match(u.url, /predefinedAcl=publicRead/, 'predefinedAcl in the query');
      t.match(u.body, /"storageClass":"NEARLINE"/, 'storageClass in the object resource');
    }
    t.match(uploads[0]!.body, /"contentType":"application\/json"/, 'content type in the simple upload');
    const [md] = await raw.file(fs.key('/c.json')).getMetadata();
    t.equal(md.contentType, 'application/json');
  });

  t.test('error mapping', async (t) => {
    const fs = await make();
    t.equal(await code(fs.stat('/missing')), 'NOT_FOUND');
    t.equal(await code(fs.openRead('/missing')), 'NOT_FOUND');
    t.equal(await code(fs.copy!('/missing', '/x')), 'NOT_FOUND');
    await fs.mkdir('/d');
    t.equal(await code(fs.openRead('/d')), 'IS_DIR');
    t.equal(await code(fs.openWrite('/d')), 'IS_DIR');
    t.equal(await code(fs.mkdir('/d')), 'EXISTS');
    await put(fs, '/d/f', 'f');
    t.equal(await code(fs.remove('/d')), 'NOT_EMPTY');
    await fs.remove('/d', { recursive: true });
    t.equal(await code(fs.stat('/d')), 'NOT_FOUND');
    const down = await make({}, gcsProvider({ endpoint: 'http://127.0.0.1:1', max_retries: 0 }));
    t.equal(await code(down.stat('/x')), 'UNAVAILABLE', 'nothing listening');
  });

  t.test('resumable uploads: Content-Range of each request, CRC-32C on the last, sizes at part boundaries', async (t) => {
    const relay = await new RecordingRelay().start();
    t.teardown(() => relay.stop());
    const fs = await make({ upload_part_size: 1 }, gcsProvider({ endpoint: relay.endpoint }));
    const MiB = 1024 * 1024;
    const data = randomBytes(2 * MiB); // an exact multiple of the part: the last full part is the last request
    const before = relay.requests.length;
    const h = await fs.openWrite('/two.bin');
    Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]).pipe(h.stream);
    const r = await h.done;
    t.equal(r.size, data.length);
    t.ok(r.etag, 'the etag of the stored object');
    const puts = relay.requests.slice(before).filter((x) => x.method === 'PUT' && x.url.includes('upload_id='));
    t.same(
      puts.map((x) => x.headers['content-range']),
      [`bytes 0-${MiB - 1}/*`, `bytes ${MiB}-${2 * MiB - 1}/${2 * MiB}`],
      'a full part, then the last one with the total',
    );
    const crc = new Crc32cValidator();
    crc.update(data);
    t.equal(puts.at(-1)!.headers['x-goog-hash'], `crc32c=${crc.toString()}`, 'the last request carries the CRC-32C of every byte');
    t.equal(sha(await get(fs, '/two.bin')), sha(data), 'stored as sent');
    const [md] = await raw.file(fs.key('/two.bin')).getMetadata();
    t.equal(md.crc32c, crc.toString(), "the object's CRC-32C");

    const sessions = () => relay.requests.filter((x) => x.method === 'POST' && x.url.includes('uploadType=resumable')).length;
    const sessionsBefore = sessions();
    const small = randomBytes(1000);
    const one = await fs.openWrite('/small-unknown.bin'); // size unknown, within one part
    one.stream.end(small);
    await one.done;
    t.equal(sessions(), sessionsBefore, 'what fits in one part is sent without a session');
    t.equal(sha(await get(fs, '/small-unknown.bin')), sha(small));
    const empty = await fs.openWrite('/empty.bin'); // size unknown, no bytes
    empty.stream.end();
    t.equal((await empty.done).size, 0);
    t.equal((await fs.stat('/empty.bin')).size, 0, 'an empty object');
    t.equal(
      await code(fs.openWrite('/two.bin', { overwrite: false }).then(async (w) => (w.stream.end(randomBytes(10)), w.done))),
      'EXISTS',
      'overwrite: false',
    );
    t.equal(sha(await get(fs, '/two.bin')), sha(data), 'the existing object is kept');
  });

  t.test('resumable uploads: a failed request is retried from what the server holds', async (t) => {
    const relay = await new RecordingRelay().start();
    t.teardown(() => relay.stop());
    const fs = await make({ upload_part_size: 1 }, gcsProvider({ endpoint: relay.endpoint, max_retries: 2 }));
    const data = randomBytes(3 * 1024 * 1024 + 5);
    const injected: string[] = [];
    relay.fail = (method, url, headers) => {
      if (method !== 'PUT' || !url.includes('upload_id=')) return undefined;
      const range = String(headers['content-range']);
      // the second part: first a 503, then the connection closed; every request after is forwarded
      if (range.startsWith('bytes 1048576-') && injected.length < 2) {
        injected.push(range);
        return injected.length === 1 ? 503 : 'reset';
      }
      return undefined;
    };
    const h = await fs.openWrite('/retried.bin');
    Readable.from([data]).pipe(h.stream);
    t.equal((await h.done).size, data.length);
    t.equal(injected.length, 2, 'two failures injected');
    const queries = relay.requests.filter((x) => x.method === 'PUT' && x.headers['content-range'] === 'bytes */*');
    t.ok(queries.length >= 2, `the server was asked what it holds after each failure (${queries.length})`);
    t.equal(sha(await get(fs, '/retried.bin')), sha(data), 'stored as sent');

    relay.fail = (method, url) => (method === 'PUT' && url.includes('upload_id=') ? 503 : undefined);
    const h2 = await fs.openWrite('/failed.bin');
    Readable.from([randomBytes(1_500_000)]).pipe(h2.stream);
    t.equal(await code(h2.done), 'UNAVAILABLE', 'still failing after max_retries: UNAVAILABLE');
    t.equal(await code(fs.stat('/failed.bin')), 'NOT_FOUND', 'no object left');
    const failedSession = relay.requests.filter((x) => x.method === 'PUT' && x.url.includes('upload_id=') && x.url.includes('failed.bin')).at(-1);
    t.ok(
      relay.requests.some((x) => x.method === 'DELETE' && failedSession && x.url === failedSession.url),
      'the failed session is cancelled (DELETE on its URI; the emulator cannot, Cloud Storage does)',
    );
  });

  t.test('upload_part_max_time bounds each upload request', async (t) => {
    const relay = await new RecordingRelay().start();
    t.teardown(() => relay.stop());
    relay.stall = (_method, url) => url.includes('/upload/');
    const fs = await make({ upload_part_max_time: 1, upload_part_size: 1 }, gcsProvider({ endpoint: relay.endpoint, max_retries: 0 }));
    // within one part (a single request of the client), then over several (the resumable session's requests)
    for (const size of [1000, 1_500_000]) {
      const started = Date.now();
      const h = await fs.openWrite(`/stalled-${size}.bin`);
      h.stream.end(randomBytes(size));
      const err = await h.done.catch((e: unknown) => e);
      t.ok(Date.now() - started < 10_000, `${size} bytes: failed after ${Date.now() - started} ms`);
      t.match(err, { code: 'UNAVAILABLE' }, `${size} bytes: UNAVAILABLE`);
    }
  });

  t.test('aborted upload leaves nothing', async (t) => {
    const fs = await make({ upload_part_size: 1 });
    const h = await fs.openWrite('/gone.bin');
    h.stream.write(randomBytes(1_500_000));
    await new Promise((r) => setTimeout(r, 100));
    await h.abort();
    await t.rejects(h.done, { code: 'ABORTED' });
    t.equal(await code(fs.stat('/gone.bin')), 'NOT_FOUND');
  });

  t.test('usedSpace ignores directory markers', async (t) => {
    const fs = await make();
    await fs.mkdir('/m');
    await put(fs, '/m/1', '12345');
    await put(fs, '/2', '12');
    t.same(await fs.usedSpace(), { size: 7, files: 2 });
    t.same(await fs.usedSpace('/m'), { size: 5, files: 1 });
  });
}

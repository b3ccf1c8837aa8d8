import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { randomBytesSeeded } from '@ferry/testkit';
import type { WriteHandle } from '@ferry/core';
import { CryptFs, format } from '../src/index.js';

// The upload writer (fs-local's AtomicUpload) hands stored bytes to a pump
// that writes them to the temporary file. fs-crypt's encoder returns nothing
// for a chunk that does not complete a 64 KiB record: a chunk like that,
// written while the pump was idle, left the pump marked as running for good.
// Every later record stayed queued in memory, the writer was held back once
// the write buffer was full (the client's connection stopped being read, so
// a client going away was never noticed and the temporary file stayed), and
// ending or aborting the upload spun for ever. These tests write exactly that
// sequence and check the bytes reach the temporary file, the upload
// completes, and an abort removes the temporary file.

const { CHUNK_SIZE: C, HEADER_SIZE: H, RECORD_SIZE: R } = format;
const base = t.testdir({});
let n = 0;

async function fresh(): Promise<{ fs: CryptFs; root: string; tmp: string }> {
  const dir = path.join(base, `c${n++}`);
  const root = path.join(dir, 'root');
  const tmp = path.join(dir, 'tmp');
  await mkdir(root, { recursive: true });
  return { fs: new CryptFs({ root, tempDir: tmp, passphrase: 'idle pump passphrase' }), root, tmp };
}

/** Bytes in the one temporary file of `tmp` (0 while there is none). */
async function stored(tmp: string): Promise<number> {
  const names = await readdir(tmp).catch(() => [] as string[]);
  if (names.length !== 1) return 0;
  return (await stat(path.join(tmp, names[0]!)).catch(() => ({ size: 0 }))).size;
}

/** Polls the temporary file until it holds `size` bytes (10 s at most); resolves to what it holds then. */
async function storedReaches(tmp: string, size: number): Promise<number> {
  const end = Date.now() + 10_000;
  let v = await stored(tmp);
  while (v < size && Date.now() < end) {
    await sleep(10);
    v = await stored(tmp);
  }
  return v;
}

const write = (h: WriteHandle, b: Buffer) => new Promise<void>((resolve, reject) => h.stream.write(b, (err) => (err ? reject(err) : resolve())));

/**
 * Opens an upload and brings it to the state of the window: the header and
 * the first record (`first`, one whole chunk) are on disk and the pump idle,
 * then a chunk that completes no record is written. (The header goes out
 * with the first record: a file of less than a chunk is stored by one
 * write, at the end.)
 */
async function idleThenSmallChunk(t: Test, fs: CryptFs, tmp: string, name: string, first: Buffer, small: Buffer) {
  const h = await fs.openWrite(name, {});
  await write(h, first);
  t.equal(await storedReaches(tmp, H + R), H + R, 'the header and the first record are written, the pump is idle');
  await sleep(20);
  await write(h, small);
  return h;
}

t.test('a chunk that completes no record, written while the pump is idle, does not stop later writes', { timeout: 60_000 }, async (t) => {
  const { fs, root, tmp } = await fresh();
  const data = randomBytesSeeded(3 * C + 500, 7);
  const h = await idleThenSmallChunk(t, fs, tmp, '/f.bin', data.subarray(0, C), data.subarray(C, C + 10));
  // two full records' worth: both must reach the temporary file while the upload is still open
  await write(h, data.subarray(C + 10, 3 * C + 10));
  t.equal(await storedReaches(tmp, H + 3 * R), H + 3 * R, 'the records after the small chunk are written to the temporary file');
  await write(h, data.subarray(3 * C + 10));
  h.stream.end();
  t.same(await h.done, { size: data.length, replaced: { size: 0, existed: false } }, 'the upload completes');
  const onDisk = await readFile(path.join(root, 'f.bin'));
  t.equal(onDisk.length, format.cipherSize(data.length));
  const back: Buffer[] = [];
  for await (const c of await fs.openRead('/f.bin')) back.push(c as Buffer);
  t.ok(Buffer.concat(back).equals(data), 'the file decrypts to what was written');
  t.same(await readdir(tmp), [], 'nothing left in the temp area');
});

t.test('more than the write buffer after such a chunk: the writer is not held back for ever', { timeout: 60_000 }, async (t) => {
  const { fs, tmp } = await fresh();
  const h = await idleThenSmallChunk(t, fs, tmp, '/big.bin', Buffer.alloc(C, 1), Buffer.alloc(10, 2));
  // 3 MiB, three times fs-crypt's default 1 MiB write buffer: every write's callback must come
  const chunk = Buffer.alloc(C, 3);
  for (let i = 0; i < 48; i++) await write(h, chunk);
  t.ok((await stored(tmp)) > 2 * 1024 * 1024, 'the bytes were written to the temporary file as they came');
  await h.abort(new Error('client gone'));
  t.same(await readdir(tmp), [], 'an abort removes the temporary file');
  await t.rejects(h.done);
});

t.test('an abort right after such a chunk removes the temporary file', { timeout: 60_000 }, async (t) => {
  const { fs, root, tmp } = await fresh();
  const h = await idleThenSmallChunk(t, fs, tmp, '/cut.bin', Buffer.alloc(C, 1), Buffer.alloc(10, 2));
  await write(h, Buffer.alloc(C, 3));
  await h.abort(new Error('client gone'));
  t.same(await readdir(tmp), [], 'no temporary file');
  t.same(await readdir(root), [], 'nothing published');
});

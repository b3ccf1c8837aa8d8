import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { randomBytesSeeded, readFile as readFsFile, rejectionOf, writeFile as writeFsFile, listAll } from '@ferry/testkit';
import { CryptFs, format } from '../src/index.js';

const { CHUNK_SIZE: C, HEADER_SIZE: H, RECORD_SIZE: R, TAG_SIZE } = format;
const base = t.testdir({});
let n = 0;
const PASS = 'correct horse battery staple';

async function fresh(): Promise<{ fs: CryptFs; root: string }> {
  const dir = path.join(base, `c${n++}`);
  const root = path.join(dir, 'root');
  await mkdir(root, { recursive: true });
  return { fs: new CryptFs({ root, tempDir: path.join(dir, 'tmp'), passphrase: PASS }), root };
}

t.test('size arithmetic', async (t) => {
  for (const p of [0, 1, 100, C - 1, C, C + 1, 2 * C, 3 * C + 100, 1e9]) {
    const stored = format.cipherSize(p);
    t.equal(format.layoutOf(stored)?.plainSize, p, `plaintext ${p} ↔ stored ${stored}`);
  }
  for (const bad of [0, H, H + TAG_SIZE - 1, H + R, H + 2 * R, H + TAG_SIZE + C, format.cipherSize(2 * C) - TAG_SIZE]) {
    t.equal(format.layoutOf(bad), undefined, `stored size ${bad} is impossible`);
    t.ok(format.reportedPlainSize(bad) >= 0, `reported size for ${bad} is not negative`);
  }
});

t.test('on-disk format', async (t) => {
  const { fs, root } = await fresh();
  for (const size of [0, 1, C - 1, C, C + 1, 3 * C + 100]) {
    await writeFsFile(fs, `/f${size}`, randomBytesSeeded(size, size));
    const stored = await readFile(path.join(root, `f${size}`));
    t.equal(stored.length, format.cipherSize(size), `${size} bytes are stored in ${stored.length}`);
    t.equal(stored.subarray(0, 8).toString('ascii'), 'FERRYCRY', 'magic');
    t.equal(stored[8], 1, 'format version 1');
    t.equal(stored[9], 16, '64 KiB chunks');
    t.equal((await fs.stat(`/f${size}`)).size, size, 'stat reports the plaintext size');
  }
  const listed = Object.fromEntries((await listAll(fs, '/')).entries.map((e) => [e.name, e.size]));
  t.same(listed, { f0: 0, f1: 1, [`f${C - 1}`]: C - 1, [`f${C}`]: C, [`f${C + 1}`]: C + 1, [`f${3 * C + 100}`]: 3 * C + 100 }, 'list reports plaintext sizes');
  t.same(await fs.usedSpace(), { size: 0 + 1 + (C - 1) + C + (C + 1) + (3 * C + 100), files: 6 }, 'usedSpace totals plaintext sizes');
  const a = await readFile(path.join(root, `f${C}`));
  await writeFsFile(fs, '/again', randomBytesSeeded(C, C));
  const b = await readFile(path.join(root, 'again'));
  t.not(a.subarray(16, 56).toString('hex'), b.subarray(16, 56).toString('hex'), 'every file gets its own salt and nonce prefix');
  t.not(a.subarray(H).toString('hex'), b.subarray(H).toString('hex'), 'the same plaintext encrypts differently');
  await fs.mkdir('/tree');
  for (const size of [1, C + 1]) await writeFsFile(fs, `/tree/g${size}`, randomBytesSeeded(size, size));
  const removed = { size: 0, files: 0 };
  await fs.removeCounted('/tree', removed, { recursive: true });
  t.same(removed, { size: 1 + C + 1, files: 2 }, 'a removed tree is counted in plaintext sizes');
});

t.test('ciphertext on disk contains no plaintext', async (t) => {
  const { fs, root } = await fresh();
  const marker = Buffer.from('FERRY-PLAINTEXT-MARKER the quick brown fox ');
  const text = Buffer.concat(Array.from({ length: 8000 }, () => marker));
  const random = randomBytes(3 * C + 17);
  const zeros = Buffer.alloc(2 * C);
  await writeFsFile(fs, '/text.txt', text);
  await writeFsFile(fs, '/random.bin', random);
  await writeFsFile(fs, '/zeros.bin', zeros);
  const storedText = await readFile(path.join(root, 'text.txt'));
  t.equal(storedText.indexOf(marker.subarray(0, 12)), -1, 'no fragment of the text marker');
  t.equal(storedText.indexOf('quick brown'), -1, 'no fragment of the text');
  const storedRandom = await readFile(path.join(root, 'random.bin'));
  const probes = [0, 1000, C - 16, C, 2 * C + 5, 3 * C];
  t.ok(
    probes.every((o) => storedRandom.indexOf(random.subarray(o, o + 16)) === -1),
    'no 16-byte window of random plaintext',
  );
  const storedZeros = await readFile(path.join(root, 'zeros.bin'));
  t.equal(storedZeros.subarray(H).indexOf(Buffer.alloc(32)), -1, 'zeros do not show as zero runs');
  t.ok((await readFsFile(fs, '/text.txt')).equals(text), 'and everything decrypts back');
});

t.test('range reads across chunk boundaries', async (t) => {
  const { fs } = await fresh();
  const data = randomBytesSeeded(3 * C + 100, 'ranges');
  await writeFsFile(fs, '/r.bin', data);
  const ranges: [number, number][] = [
    [0, C - 1],
    [C - 10, C + 10],
    [C - 1, C],
    [C, 2 * C - 1],
    [C - 1, 2 * C],
    [10, 3 * C + 50],
    [2 * C + 3, 2 * C + 3],
    [3 * C - 1, 3 * C + 99],
    [3 * C, 3 * C + 99],
    [0, 3 * C + 99],
  ];
  for (const [start, end] of ranges) {
    const got = await readFsFile(fs, '/r.bin', { start, end });
    t.ok(got.equals(data.subarray(start, end + 1)), `bytes ${start}-${end}`);
  }
  const exact = randomBytesSeeded(2 * C, 'exact');
  await writeFsFile(fs, '/exact.bin', exact);
  t.ok((await readFsFile(fs, '/exact.bin', { start: 2 * C - 1 })).equals(exact.subarray(2 * C - 1)), 'last byte of a file that ends on a chunk boundary');
  t.equal((await readFsFile(fs, '/exact.bin', { start: 2 * C })).length, 0, 'start at the end of such a file is empty');
});

t.test('a range read decrypts only the chunks it covers', async (t) => {
  const { fs, root } = await fresh();
  const data = randomBytesSeeded(3 * C, 'partial');
  await writeFsFile(fs, '/p.bin', data);
  const file = path.join(root, 'p.bin');
  const stored = await readFile(file);
  stored[H + 100] ^= 0x01;
  await writeFile(file, stored);
  t.ok((await readFsFile(fs, '/p.bin', { start: 2 * C + 7, end: 2 * C + 1000 })).equals(data.subarray(2 * C + 7, 2 * C + 1001)), 'chunk 2 reads fine');
  const err = await rejectionOf(readFsFile(fs, '/p.bin', { start: 5, end: 10 }));
  t.match(err, { name: 'FsCryptError', reason: 'integrity', message: /chunk 0 does not authenticate/ }, 'chunk 0 fails');
});

t.test('no readSmallFiles: the stored bytes are not the files (a zip reads each through openRead)', async (t) => {
  const { fs } = await fresh();
  t.equal(fs.readSmallFiles, undefined, 'not inherited from LocalFs');
  t.equal(fs.openReadWithInfo, undefined, 'no openReadWithInfo either: its sizes and bytes are not the stored ones');
});

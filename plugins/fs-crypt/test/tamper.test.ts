import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { randomBytesSeeded, rejectionOf, writeFile as writeFsFile, readFile as readFsFile } from '@ferry/testkit';
import { CryptFs, FsCryptError, format } from '../src/index.js';

const { CHUNK_SIZE: C, HEADER_SIZE: H, RECORD_SIZE: R } = format;
const base = t.testdir({});
const root = path.join(base, 'root');
await mkdir(root);
const PASS = 'tamper-proof passphrase';
const fs = new CryptFs({ root, tempDir: path.join(base, 'tmp'), passphrase: PASS });
const data = randomBytesSeeded(2 * C + 500, 'tamper');
await writeFsFile(fs, '/orig.bin', data);
const original = await readFile(path.join(root, 'orig.bin'));
await writeFsFile(fs, '/other.bin', randomBytesSeeded(2 * C + 500, 'other'));
const other = await readFile(path.join(root, 'other.bin'));
let n = 0;

/** Stores `bytes` under a new name and reads it back whole. */
async function readCrafted(bytes: Buffer): Promise<unknown> {
  const name = `/crafted-${n++}.bin`;
  await writeFile(path.join(root, name), bytes);
  return rejectionOf(readFsFile(fs, name));
}

function flipped(at: number): Buffer {
  const copy = Buffer.from(original);
  copy[at] ^= 0x40;
  return copy;
}

t.test('the untouched file reads back', async (t) => {
  t.ok((await readFsFile(fs, '/orig.bin')).equals(data));
});

t.test('a flipped byte anywhere is detected', async (t) => {
  const cases: [string, number, string, RegExp][] = [
    ['magic', 0, 'format', /no FERRYCRY magic/],
    ['version', 8, 'format', /unsupported format version/],
    ['chunk size', 9, 'format', /unsupported chunk size/],
    ['scrypt N', 10, 'format', /scrypt logN .* out of range/],
    ['reserved', 14, 'format', /reserved header bytes/],
    ['salt', 20, 'passphrase', /wrong passphrase.*or the header was altered/],
    ['nonce prefix', 50, 'integrity', /chunk 0 does not authenticate/],
    ['key check', 60, 'passphrase', /wrong passphrase/],
    ['chunk 0 ciphertext', H + 5, 'integrity', /chunk 0 does not authenticate/],
    ['chunk 0 tag', H + C + 3, 'integrity', /chunk 0 does not authenticate/],
    ['chunk 1 ciphertext', H + R + C - 1, 'integrity', /chunk 1 does not authenticate/],
    ['final chunk', H + 2 * R + 10, 'integrity', /chunk 2 \(final\) does not authenticate/],
    ['final tag', original.length - 1, 'integrity', /chunk 2 \(final\) does not authenticate/],
  ];
  for (const [what, at, reason, message] of cases) {
    const err = await readCrafted(flipped(at));
    t.ok(err instanceof FsCryptError, `${what} (byte ${at}): read fails with FsCryptError`);
    t.match(err, { reason, message }, `${what}: ${(err as Error | undefined)?.message}`);
  }
});

t.test('truncation, extension, reordering and splicing are detected', async (t) => {
  const rec = (b: Buffer, i: number, len = R): Buffer => b.subarray(H + i * R, H + i * R + len);
  const finalLen = original.length - H - 2 * R;
  const cases: [string, Buffer][] = [
    ['cut by one byte', original.subarray(0, original.length - 1)],
    ['final chunk removed', original.subarray(0, H + 2 * R)],
    ['cut to the header', original.subarray(0, H)],
    ['cut inside the header', original.subarray(0, 40)],
    ['cut inside chunk 1 to a valid-looking size', original.subarray(0, H + R + 600)],
    ['one byte appended', Buffer.concat([original, Buffer.from([0])])],
    ['a chunk appended', Buffer.concat([original, rec(original, 0)])],
    ['chunks 0 and 1 swapped', Buffer.concat([original.subarray(0, H), rec(original, 1), rec(original, 0), rec(original, 2, finalLen)])],
    ['chunk 1 dropped', Buffer.concat([original.subarray(0, H), rec(original, 0), rec(original, 2, finalLen)])],
    ['chunk 1 from another file', Buffer.concat([original.subarray(0, H + R), rec(other, 1), rec(original, 2, finalLen)])],
    ['header from another file', Buffer.concat([other.subarray(0, H), original.subarray(H)])],
  ];
  for (const [what, bytes] of cases) {
    const err = await readCrafted(bytes);
    t.ok(err instanceof FsCryptError, `${what}: ${(err as Error | undefined)?.message}`);
  }
  t.match(await readCrafted(Buffer.alloc(0)), { reason: 'format' }, 'an empty file is not an fs-crypt file');
  t.match(await readCrafted(Buffer.from('plain text someone dropped in')), { reason: 'format' }, 'nor is a plain file');
});

t.test('wrong passphrase', async (t) => {
  const wrong = new CryptFs({ root, tempDir: path.join(base, 'tmp'), passphrase: 'not the passphrase' });
  const err = await rejectionOf(readFsFile(wrong, '/orig.bin'));
  t.match(err, { name: 'FsCryptError', reason: 'passphrase', message: /\/orig\.bin: wrong passphrase/ }, 'a clear error before any byte');
  t.match(await rejectionOf(wrong.openRead('/orig.bin', { start: C, end: C + 10 })), { reason: 'passphrase' }, 'range reads too');
  t.equal((await wrong.stat('/orig.bin')).size, data.length, 'stat still reports the size (no key needed)');
  const nfd = new CryptFs({ root, tempDir: path.join(base, 'tmp'), passphrase: 'cafe\u0301' });
  await writeFsFile(nfd, '/nfd.txt', 'unicode passphrase');
  const nfc = new CryptFs({ root, tempDir: path.join(base, 'tmp'), passphrase: 'caf\u00e9' });
  t.equal((await readFsFile(nfc, '/nfd.txt')).toString(), 'unicode passphrase', 'passphrases are compared in NFC');
});

t.test('the stretched key is computed once per instance', async (t) => {
  const one = new CryptFs({ root, tempDir: path.join(base, 'tmp'), passphrase: PASS });
  for (let i = 0; i < 10; i++) {
    await writeFsFile(one, `/k${i}`, `file ${i}`);
    t.equal((await readFsFile(one, `/k${i}`)).toString(), `file ${i}`);
  }
  t.ok((await readFsFile(one, '/orig.bin')).equals(data), 'and reads files of other instances');
  t.equal(one.keys.derivations, 1, 'one scrypt for 21 file keys');
});

t.test('files record their scrypt parameters', async (t) => {
  const cheap = new CryptFs({ root, tempDir: path.join(base, 'tmp'), passphrase: PASS, scrypt: { logN: 12, r: 8, p: 1 } });
  await writeFsFile(cheap, '/cheap.bin', 'written with N=2^12');
  const stored = await readFile(path.join(root, 'cheap.bin'));
  t.equal(stored[10], 12, 'logN is in the header');
  const reader = new CryptFs({ root, tempDir: path.join(base, 'tmp'), passphrase: PASS });
  t.equal((await readFsFile(reader, '/cheap.bin')).toString(), 'written with N=2^12', 'a default instance reads it');
  const greedy = Buffer.from(stored);
  greedy[10] = 30;
  t.match(await readCrafted(greedy), { reason: 'format', message: /scrypt logN 30 is out of range/ }, 'absurd parameters are refused, not attempted');
});

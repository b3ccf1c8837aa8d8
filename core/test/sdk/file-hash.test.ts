import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import t from 'tap';
import { FsError } from '../../src/fs/fs-error.js';
import { createFileHasher, FILE_HASH_ALGORITHMS, hashFileRange } from '../../src/sdk/file-hash.js';
import type { FileSession } from '../../src/sdk/file-session.js';

const data = randomBytes(10_000);

interface ReadRange {
  start?: number;
  end?: number;
}

/** A file session of one file `/f` (and a directory `/d`) whose reads come in chunks of 777 bytes; the ranges read are recorded. */
function session(reads: ReadRange[]): FileSession {
  const fake = {
    stat: async (p: string) => {
      if (p === '/d') return { name: 'd', path: p, isDir: true, size: 0 };
      if (p !== '/f') throw new FsError('NOT_FOUND', `${p}: no such file or directory`);
      return { name: 'f', path: p, isDir: false, size: data.length };
    },
    openRead: async (_p: string, o: ReadRange = {}) => {
      reads.push({ start: o.start, end: o.end });
      const part = data.subarray(o.start ?? 0, (o.end ?? data.length - 1) + 1);
      const chunks = Array.from({ length: Math.ceil(part.length / 777) }, (_, i) => part.subarray(i * 777, (i + 1) * 777));
      return { stream: Readable.from(chunks), done: Promise.resolve() };
    },
  };
  return fake as unknown as FileSession;
}

const hex = (algo: string, b: Buffer) => (algo === 'crc32' ? crc32(b).toString(16).padStart(8, '0') : createHash(algo).update(b).digest('hex'));

t.test('every algorithm, whole file and range, streamed in chunks', async (t) => {
  for (const algo of Object.keys(FILE_HASH_ALGORITHMS)) {
    const reads: ReadRange[] = [];
    const whole = await hashFileRange(session(reads), '/f', { algorithm: algo, start: 0, length: 0, blockSize: 0 });
    t.same([whole.start, whole.end, whole.hashes.map((h: Buffer) => h.toString('hex'))], [0, data.length, [hex(algo, data)]], `${algo} whole`);
    t.equal(whole.hashes[0]!.length, FILE_HASH_ALGORITHMS[algo], `${algo}: the digest length`);
    const part = await hashFileRange(session(reads), '/f', { algorithm: algo, start: 100, length: 5000, blockSize: 0 });
    t.same([part.start, part.end, part.hashes[0]!.toString('hex')], [100, 5100, hex(algo, data.subarray(100, 5100))], `${algo} range`);
    t.same(
      reads,
      [
        { start: 0, end: data.length - 1 },
        { start: 100, end: 5099 },
      ],
      `${algo}: only the range is read`,
    );
  }
});

t.test('blocks, empty ranges, the check, refusals', async (t) => {
  const reads: ReadRange[] = [];
  const s = session(reads);
  const blocks = await hashFileRange(s, '/f', { algorithm: 'sha1', start: 10, length: 0, blockSize: 4096 });
  t.same(
    blocks.hashes.map((h: Buffer) => h.toString('hex')),
    [0, 1, 2].map((i) => hex('sha1', data.subarray(10 + i * 4096, Math.min(data.length, 10 + (i + 1) * 4096)))),
    'one hash per block, the last one short',
  );
  const past = await hashFileRange(s, '/f', { algorithm: 'md5', start: 20_000, length: 10, blockSize: 0 });
  t.same([past.start, past.end, past.hashes[0]!.toString('hex')], [data.length, data.length, hex('md5', Buffer.alloc(0))], 'past the end: the hash of nothing');
  t.same((await hashFileRange(s, '/f', { algorithm: 'md5', start: 20_000, length: 0, blockSize: 512 })).hashes, [], 'no block past the end');
  let asked = 0;
  const readsBefore = reads.length;
  await t.rejects(
    hashFileRange(s, '/f', {
      algorithm: 'sha256',
      start: 0,
      length: 0,
      blockSize: 256,
      check: (n: number) => {
        asked = n;
        throw new Error('too many');
      },
    }),
    /too many/,
  );
  t.equal(asked, Math.ceil(data.length / 256), 'the check gets the number of hashes');
  await t.rejects(hashFileRange(s, '/d', { algorithm: 'md5', start: 0, length: 0, blockSize: 0 }), { code: 'IS_DIR' });
  await t.rejects(hashFileRange(s, '/f', { algorithm: 'whirlpool', start: 0, length: 0, blockSize: 0 }), { code: 'NOT_SUPPORTED' });
  await t.rejects(hashFileRange(s, '/f', { algorithm: 'md5', start: -1, length: 0, blockSize: 0 }), { code: 'INVALID' });
  await t.rejects(hashFileRange(s, '/nope', { algorithm: 'md5', start: 0, length: 0, blockSize: 0 }), { code: 'NOT_FOUND' });
  t.equal(reads.length, readsBefore, 'nothing read for a refusal, nor after a refused check');
});

t.test('createFileHasher: CRC-32 incremental equals one pass, big-endian digest', async (t) => {
  const h = createFileHasher('crc32');
  for (let i = 0; i < data.length; i += 333) h.update(data.subarray(i, i + 333));
  const d = h.digest();
  t.equal(d.length, 4);
  t.equal(d.readUInt32BE(0), crc32(data));
  t.equal(createFileHasher('crc32').digest().toString('hex'), '00000000', 'the CRC of nothing');
  t.throws(() => createFileHasher('__proto__'), { code: 'NOT_SUPPORTED' }, 'only the listed names');
});

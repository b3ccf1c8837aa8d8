/**
 * Zip64 sizes and offsets: a stored entry of 4 GiB + 3 MiB of zeros, written
 * to a sparse file (zero chunks become a hole), then read by Python's
 * zipfile and unzip. About 4 GiB pass through the writer (a CRC of each).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { ZipWriter } from '../src/index.js';
import { pyRead, scratch, sha } from './readers.js';

t.test('an entry beyond 4 GiB: Zip64 sizes and offsets (sparse file, stored)', async (t) => {
  const zip = new ZipWriter({ level: 0 });
  const file = path.join(scratch(t), 'big.zip');
  const fd = openSync(file, 'w');
  let pos = 0;
  const zero = Buffer.alloc(1 << 20);
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      // zeros are skipped (a hole), so the file stays small on disk
      if (chunk.length !== zero.length || !chunk.equals(zero)) writeSync(fd, chunk, 0, chunk.length, pos);
      pos += chunk.length;
      cb();
    },
    final(cb) {
      closeSync(fd);
      cb();
    },
  });
  const done = pipeline(zip, sink);
  const size = 2 ** 32 + (3 << 20);
  async function* zeros() {
    for (let left = size; left > 0; left -= zero.length) yield zero;
  }
  await zip.addBuffer('before.txt', Buffer.from('before\n'));
  await zip.addStream('zeros.bin', zeros(), { size });
  await zip.addBuffer('after.txt', Buffer.from('after\n'));
  await zip.finalize();
  await done;
  const { entries } = pyRead(file, 'small');
  t.same(
    entries.map((e) => [e.name, e.size]),
    [
      ['before.txt', 7],
      ['zeros.bin', size],
      ['after.txt', 6],
    ],
  );
  t.ok(entries[2]!.offset > 2 ** 32, 'the last entry starts beyond 4 GiB');
  t.equal(entries[2]!.sha256, sha(Buffer.from('after\n')));
  t.match(execFileSync('unzip', ['-l', file]).toString(), /4298113024\s+\S+\s+\S+\s+zeros\.bin/);
  t.match(execFileSync('unzip', ['-p', file, 'after.txt']).toString(), 'after\n');
});

/**
 * Archives written by ZipWriter, checked by independent readers: Info-ZIP's
 * `unzip -t` and Python's zipfile (names, contents, times, attributes,
 * Zip64). Both tools are required (Debian packages unzip, python3).
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import zlib from 'node:zlib';
import t from 'tap';
import { ONE_SHOT_MAX, ZipWriter, crc32, crc32js } from '../src/index.js';
import { pyRead, scratch, sha, toFile, unzipTest } from './readers.js';

t.test('crc32js agrees with zlib for every length and when continued', async (t) => {
  const native = (zlib as { crc32?: (d: Uint8Array, v?: number) => number }).crc32;
  const data = randomBytes(70_000);
  // Known values: CRC-32 of "123456789" is 0xCBF43926.
  t.equal(crc32js(Buffer.from('123456789')), 0xcbf43926);
  t.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  t.equal(crc32js(Buffer.alloc(0)), 0);
  for (let n = 0; n < 64; n++) {
    const b = data.subarray(n, n * 3 + 5);
    if (native) t.equal(crc32js(b), native(b), `length ${b.length}`);
  }
  const whole = crc32js(data);
  t.equal(crc32js(data.subarray(33_333), crc32js(data.subarray(0, 33_333))), whole, 'continued');
  if (native) t.equal(whole, native(data));
});

t.test('a mixed archive: UTF-8 names, empty files, directories, small and 10 MB incompressible files', async (t) => {
  const zip = new ZipWriter();
  const done = toFile(t, zip);
  const mtime = new Date(2024, 4, 17, 13, 45, 30);
  const text = Buffer.from('some text to compress\n'.repeat(500));
  const smallRandom = randomBytes(1000);
  const big = randomBytes(10 * 1024 * 1024);
  const midRandom = randomBytes(ONE_SHOT_MAX + 1);
  await zip.addDirectory('top', { mtime });
  await zip.addDirectory('top/vide/', { mtime });
  await zip.addBuffer('top/été – 日本語.txt', text, { mtime });
  await zip.addBuffer('top/empty.txt', Buffer.alloc(0), { mtime });
  await zip.addBuffer('top/random-small.bin', smallRandom, { mtime, mode: 0o600 });
  await zip.addBuffer('top/random-mid.bin', midRandom, { mtime });
  await zip.addStream('top/big.bin', Readable.from(chunksOf(big, 100_000)), { mtime, size: big.length });
  await zip.addStream('top/empty-stream.txt', Readable.from([]), { mtime, size: 0 });
  await zip.addStream('top/unknown-size.txt', Readable.from([text]), { mtime });
  await zip.finalize();
  const file = await done;
  t.match(unzipTest(file), /No errors detected/);
  const { bad, entries } = pyRead(file);
  t.equal(bad, null, 'testzip: every CRC checks');
  const byName = new Map(entries.map((e) => [e.name, e]));
  t.same(
    entries.map((e) => e.name),
    [
      'top/',
      'top/vide/',
      'top/été – 日本語.txt',
      'top/empty.txt',
      'top/random-small.bin',
      'top/random-mid.bin',
      'top/big.bin',
      'top/empty-stream.txt',
      'top/unknown-size.txt',
    ],
  );
  t.ok(byName.get('top/')!.dir);
  t.equal(byName.get('top/')!.attr >>> 16, 0o040755);
  t.equal(byName.get('top/')!.attr & 0x10, 0x10, 'MS-DOS directory attribute');
  const utf = byName.get('top/été – 日本語.txt')!;
  t.equal(utf.flags & 0x800, 0x800, 'UTF-8 flag');
  t.equal(utf.method, 8, 'deflated');
  t.ok(utf.csize < text.length / 10);
  t.equal(utf.sha256, sha(text));
  t.same(utf.time, [2024, 5, 17, 13, 45, 30]);
  t.equal(byName.get('top/empty.txt')!.size, 0);
  t.equal(byName.get('top/empty.txt')!.method, 0, 'an empty file is stored');
  const rs = byName.get('top/random-small.bin')!;
  t.equal(rs.method, 0, 'incompressible small data is stored');
  t.equal(rs.attr >>> 16, 0o100600);
  t.equal(rs.sha256, sha(smallRandom));
  t.equal(byName.get('top/random-mid.bin')!.sha256, sha(midRandom));
  const b = byName.get('top/big.bin')!;
  t.equal(b.size, big.length);
  t.equal(b.flags & 0x8, 0x8, 'data descriptor');
  t.equal(b.sha256, sha(big));
  t.equal(byName.get('top/empty-stream.txt')!.size, 0);
  t.equal(byName.get('top/unknown-size.txt')!.sha256, sha(text));
  // unzip restores the exact time from the extended timestamp field
  const out = path.join(scratch(t), 'x1');
  execFileSync('unzip', ['-q', file, '-d', out]);
  t.equal(
    execFileSync('stat', ['-c', '%Y', path.join(out, 'top/empty.txt')])
      .toString()
      .trim(),
    String(mtime.getTime() / 1000),
  );
});

function* chunksOf(b: Buffer, n: number): Generator<Buffer> {
  for (let i = 0; i < b.length; i += n) yield b.subarray(i, i + n);
}

t.test('more than 65,535 entries: Zip64 end records', async (t) => {
  const zip = new ZipWriter();
  const done = toFile(t, zip);
  const n = 70_000;
  for (let i = 0; i < n; i++) void zip.addBuffer(`d${i % 100}/f${i}.txt`, Buffer.from(`file ${i}\n`));
  await zip.finalize();
  const file = await done;
  t.equal(zip.entries, n);
  t.match(unzipTest(file), /No errors detected/);
  const { entries } = pyRead(file, 'list');
  t.equal(entries.length, n);
  t.equal(entries[n - 1]!.name, `d${(n - 1) % 100}/f${n - 1}.txt`);
});

t.test('a failing source: the entry is left out, the archive stays valid', async (t) => {
  const zip = new ZipWriter();
  const done = toFile(t, zip);
  await zip.addBuffer('a.txt', Buffer.from('aaa'));
  const failing = new PassThrough();
  failing.write(randomBytes(200_000));
  setTimeout(() => failing.destroy(new Error('disk on fire')), 20);
  await t.rejects(zip.addStream('broken.bin', failing, { size: 1 << 20 }), /disk on fire/);
  await zip.addBuffer('b.txt', Buffer.from('bbb'));
  await zip.finalize();
  const file = await done;
  t.match(unzipTest(file), /No errors detected/);
  const { bad, entries } = pyRead(file);
  t.equal(bad, null);
  t.same(
    entries.map((e) => e.name),
    ['a.txt', 'b.txt'],
  );
});

t.test('destroy: the source being read is destroyed, pending and later calls reject', async (t) => {
  const zip = new ZipWriter();
  const errors: Error[] = [];
  zip.on('error', (err) => errors.push(err));
  const source = new PassThrough();
  source.write(Buffer.alloc(1000));
  const streaming = zip.addStream('s.bin', source);
  const queued = zip.addBuffer('later.txt', Buffer.from('x'));
  zip.resume();
  await new Promise((r) => setTimeout(r, 20));
  zip.destroy(new Error('client went away'));
  await t.rejects(streaming, /client went away/);
  await t.rejects(queued, /client went away/);
  t.ok(source.destroyed, 'source destroyed');
  t.same(
    errors.map((e) => e.message),
    ['client went away'],
  );
  await t.rejects(zip.addBuffer('x', Buffer.from('x')), /client went away/);
});

t.test('back-pressure: a reader that does not read stops the source', async (t) => {
  const zip = new ZipWriter({ highWaterMark: 64 * 1024 });
  let pulled = 0;
  async function* source() {
    for (let i = 0; i < 500; i++) {
      const b = randomBytes(64 * 1024);
      pulled += b.length;
      yield b;
    }
  }
  const adding = zip.addStream('r.bin', source());
  await new Promise((r) => setTimeout(r, 300));
  t.ok(pulled < 2 << 20, `${pulled} bytes read from the source while nothing was read from the zip`);
  const finalized = adding.then(() => zip.finalize());
  let total = 0;
  for await (const c of zip) total += (c as Buffer).length;
  await finalized;
  t.equal(pulled, 500 * 64 * 1024);
  t.ok(total > pulled);
});

t.test('finalize: no entry after it, a name too long is refused', async (t) => {
  const zip = new ZipWriter();
  const done = toFile(t, zip);
  await t.rejects(zip.addBuffer('n'.repeat(70_000), Buffer.from('x')), RangeError);
  const fin = zip.finalize();
  await t.rejects(zip.addBuffer('late.txt', Buffer.from('x')), /finalized/);
  await fin;
  const { entries } = pyRead(await done);
  t.same(entries, []);
});

t.test('a backslash in an entry name is written as a slash', async (t) => {
  const zip = new ZipWriter();
  const done = toFile(t, zip);
  await zip.addDirectory('dir\\sub');
  await zip.addBuffer('dir\\sub\\a.txt', Buffer.from('a'));
  await zip.addStream('b\\c.txt', Readable.from([Buffer.from('c')]));
  await zip.finalize();
  const file = await done;
  t.match(unzipTest(file), /No errors detected/);
  t.same(
    pyRead(file).entries.map((e) => e.name),
    ['dir/sub/', 'dir/sub/a.txt', 'b/c.txt'],
  );
});

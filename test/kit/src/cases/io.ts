import type { Test } from 'tap';
import type { Fs } from '@ferry/core';
import type { CaseGroup, SuiteContext } from '../fs-conformance.js';
import { comparableInfo, expectFsError, expectMissing, namesIn, readFile, rejectionOf, streamBytes, withTimeout, writeFile } from '../fs-helpers.js';
import { randomBytesSeeded, randomSliceSha256, randomStream, sha256Stream } from '../streams.js';

async function largeFileCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  const size = ctx.largeFileSize;
  const seed = `large-${ctx.name}`;
  const expected = await sha256Stream(randomStream(size, seed));
  const result = await writeFile(fs, '/large.bin', randomStream(size, seed), { size });
  t.equal(result.size, size, `done reports ${size} bytes`);
  t.equal((await fs.stat('/large.bin')).size, size, 'stat reports the full size');
  const read = await sha256Stream(await fs.openRead('/large.bin'));
  t.equal(read.size, size, 'reads back every byte');
  t.equal(read.sha256, expected.sha256, 'sha256 of what was read equals sha256 of what was written');

  await t.test('ranges of the large file', ctx.requires('rangeRead'), async (t) => {
    const mid = Math.floor(size / 2);
    for (const [start, end] of [
      [mid, Math.min(size - 1, mid + 1024 * 1024 + 17)],
      [size - 10, size - 1],
    ] as const) {
      const want = await randomSliceSha256(size, seed, start, end);
      const got = await sha256Stream(await fs.openRead('/large.bin', { start, end }));
      t.same(got, want, `bytes ${start}-${end}`);
    }
  });
}

const RANGE_FILE_SIZE = 200_000;

async function rangeCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  const data = randomBytesSeeded(RANGE_FILE_SIZE, 'ranges');
  const size = data.length;
  await writeFile(fs, '/r.bin', data);
  const cases: [string, { start?: number; end?: number }, Buffer][] = [
    ['whole file with start 0', { start: 0 }, data],
    ['start only', { start: 1000 }, data.subarray(1000)],
    ['end only', { end: 99 }, data.subarray(0, 100)],
    ['start and end', { start: 70_000, end: 140_000 }, data.subarray(70_000, 140_001)],
    ['first byte', { start: 0, end: 0 }, data.subarray(0, 1)],
    ['single byte in the middle', { start: 12_345, end: 12_345 }, data.subarray(12_345, 12_346)],
    ['last byte (start only)', { start: size - 1 }, data.subarray(size - 1)],
    ['last byte (start and end)', { start: size - 1, end: size - 1 }, data.subarray(size - 1)],
    ['across the 64 KiB boundary', { start: 65_535, end: 65_536 }, data.subarray(65_535, 65_537)],
    ['exactly the second 64 KiB', { start: 65_536, end: 131_071 }, data.subarray(65_536, 131_072)],
    ['end past the last byte is clamped', { start: 199_000, end: size + 5000 }, data.subarray(199_000)],
    ['whole file with explicit end', { start: 0, end: size - 1 }, data],
  ];
  for (const [name, range, want] of cases) {
    const got = await readFile(fs, '/r.bin', range);
    t.equal(got.length, want.length, `${name}: length ${want.length}`);
    t.ok(got.equals(want), `${name}: bytes`);
  }
  for (const start of [size, size + 1, size * 10]) {
    const got = await readFile(fs, '/r.bin', { start });
    t.equal(got.length, 0, `start ${start} at or past the end (size ${size}) yields an empty stream`);
  }
  t.equal((await readFile(fs, '/r.bin', { start: size, end: size + 10 })).length, 0, 'range wholly past the end is empty');
  await expectFsError(t, fs.openRead('/r.bin', { start: 10, end: 5 }), 'INVALID', 'start after end');
  await expectFsError(t, fs.openRead('/r.bin', { start: -1 }), 'INVALID', 'negative start');
  await writeFile(fs, '/zero', '');
  t.equal((await readFile(fs, '/zero', { start: 0 })).length, 0, 'start 0 of an empty file is empty');
  await expectMissing(t, fs, '/nothing');
  await expectFsError(t, fs.openRead('/nothing', { start: 1 }), 'NOT_FOUND', 'range read of a missing file');
}

async function overwriteCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await t.test('default overwrite replaces and truncates', async (t) => {
    await writeFile(fs, '/f.txt', 'a much longer original content');
    await writeFile(fs, '/f.txt', 'short');
    t.equal((await readFile(fs, '/f.txt')).toString(), 'short', 'new content, no leftover tail');
    t.equal((await fs.stat('/f.txt')).size, 5, 'size shrank');
    t.same(await namesIn(fs, '/'), ['f.txt'], 'still one entry');
  });
  await t.test('overwrite: false onto an existing file', async (t) => {
    const err = await rejectionOf(writeFile(fs, '/f.txt', 'intruder', { overwrite: false }));
    t.match(err, { code: 'EXISTS' }, 'fails with EXISTS (from openWrite or done)');
    t.equal((await readFile(fs, '/f.txt')).toString(), 'short', 'the existing file is untouched');
    t.same(await namesIn(fs, '/'), ['f.txt'], 'nothing else appeared');
  });
  await t.test('overwrite: false onto a new path', async (t) => {
    await writeFile(fs, '/new.txt', 'fresh', { overwrite: false });
    t.equal((await readFile(fs, '/new.txt')).toString(), 'fresh', 'written');
  });
  await t.test('write onto a directory', async (t) => {
    await fs.mkdir('/d');
    const err = await rejectionOf(writeFile(fs, '/d', 'x'));
    t.match(err, { code: /^(IS_DIR|EXISTS)$/ }, 'fails with IS_DIR or EXISTS');
    t.equal((await fs.stat('/d')).isDir, true, 'the directory is still there');
  });
  await t.test('read of a directory', async (t) => {
    await expectFsError(
      t,
      fs.openRead('/d').then((s) => readFileFrom(s)),
      'IS_DIR',
      'openRead of a directory',
    );
  });
}

async function readFileFrom(s: NodeJS.ReadableStream): Promise<void> {
  for await (const _ of s) void _;
}

async function readAbortCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  // Big enough that no backend hands it over in one chunk before the abort lands.
  const size = 8 * 1024 * 1024;
  await writeFile(fs, '/big.bin', randomStream(size, 'read-abort'));
  await t.test('already aborted signal', async (t) => {
    await expectFsError(t, fs.openRead('/big.bin', { signal: AbortSignal.abort() }), 'ABORTED', 'openRead with an aborted signal');
  });
  await t.test('abort while reading', async (t) => {
    const ac = new AbortController();
    const stream = await fs.openRead('/big.bin', { signal: ac.signal });
    let seen = 0;
    const consumed = (async () => {
      for await (const chunk of stream) {
        seen += (chunk as Buffer).length;
        if (!ac.signal.aborted) ac.abort();
      }
    })();
    const err = await withTimeout(rejectionOf(consumed), 30_000, 'a read aborted mid-stream');
    t.ok(err, 'the stream fails once the signal fires');
    t.ok(seen < size, `stopped early (${seen} of ${size} bytes)`);
  });
  await t.test('reads given up before their end leave the others alone', async (t) => {
    // A client that stops a download must not cut other reads in flight on the
    // same backend, nor fail the next request (a shared connection pool torn down).
    await writeFile(fs, '/small.bin', randomStream(300_000, 'given-up-small'));
    const inFlight = await fs.openRead('/big.bin');
    let got = 0;
    const whole = (async () => {
      for await (const chunk of inFlight) got += (chunk as Buffer).length;
    })();
    for (let i = 0; i < 3; i++) {
      (await fs.openRead('/small.bin')).destroy();
      (await fs.openRead('/big.bin')).destroy();
    }
    await withTimeout(whole, 60_000, 'the read in flight while others were given up');
    t.equal(got, size, 'the read in flight got every byte');
    t.equal((await fs.stat('/small.bin')).size, 300_000, 'stat() right after');
    await expectFsError(t, fs.openRead('/missing.bin'), 'NOT_FOUND', 'a read of a missing file right after');
    t.equal((await streamBytes(await fs.openRead('/small.bin'))).length, 300_000, 'a whole read right after');
  });
}

async function readWithInfoCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  const skip = fs.openReadWithInfo ? false : `${ctx.name} has no openReadWithInfo() (optional: a download then calls stat() before openRead())`;
  await t.test('openReadWithInfo() is implemented', { skip }, async (t) => {
    await readWithInfoChecks(t, ctx, fs);
  });
}

async function readWithInfoChecks(t: Test, ctx: SuiteContext, fs: Fs): Promise<void> {
  const open = fs.openReadWithInfo!.bind(fs);
  /**
   * A file opened with its metadata, checked against stat() and its bytes;
   * a backend may leave a file to stat() and openRead() (undefined: nothing
   * left open), as a local disk does with files larger than a read buffer.
   */
  const readsAsStat = async (t: Test, p: string, data: Buffer) => {
    const got = await open(p);
    if (!got) {
      t.same(await streamBytes(await fs.openRead(p)), data, 'undefined: left to openRead(), which reads every byte');
      return;
    }
    const bytes = await streamBytes(got.stream);
    t.ok(bytes.equals(data), `every byte (${bytes.length} of ${data.length})`);
    t.same(comparableInfo(got.info), comparableInfo(await fs.stat(p)), 'info equals stat()');
    t.equal(got.info.size, data.length, 'size');
    t.equal(got.info.isDir, false, 'not a directory');
  };
  const data = randomBytesSeeded(300_000, 'read-with-info');
  await fs.mkdir('/dir');
  await writeFile(fs, '/dir/w.bin', data);
  await t.test('a file: the bytes and what stat() reports', async (t) => {
    await readsAsStat(t, '/dir/w.bin', data);
  });
  await t.test('a small file (4 KiB)', async (t) => {
    const small = randomBytesSeeded(4096, 'read-with-info-small');
    await writeFile(fs, '/dir/small.bin', small);
    await readsAsStat(t, '/dir/small.bin', small);
  });
  await t.test('an empty file', async (t) => {
    await writeFile(fs, '/empty', '');
    await readsAsStat(t, '/empty', Buffer.alloc(0));
  });
  await t.test('a file with a modification time set', ctx.requires('settableMtime'), async (t) => {
    const mtime = new Date('2021-03-04T05:06:07.000Z');
    await writeFile(fs, '/dir/m.bin', 'mtime');
    await fs.chtimes!('/dir/m.bin', mtime);
    const got = await open('/dir/m.bin');
    got?.stream.destroy();
    t.equal((got?.info ?? (await fs.stat('/dir/m.bin'))).mtime.getTime(), mtime.getTime(), 'the mtime set, as stat() reports it');
  });
  await t.test('errors', async (t) => {
    await expectFsError(t, open('/nothing'), 'NOT_FOUND', 'a missing file');
    await expectFsError(t, open('/dir'), 'IS_DIR', 'a directory');
    await expectFsError(t, open('/dir/w.bin', { signal: AbortSignal.abort() }), 'ABORTED', 'an aborted signal');
  });
}

export const ioCases: CaseGroup[] = [
  { name: 'large file streamed in and out', run: largeFileCases },
  { name: 'openRead() ranges', requires: ['rangeRead'], run: rangeCases },
  { name: 'overwrite rules', run: overwriteCases },
  { name: 'openRead() abort', run: readAbortCases },
  { name: 'openReadWithInfo()', run: readWithInfoCases },
];

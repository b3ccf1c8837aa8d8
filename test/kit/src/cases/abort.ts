import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Test } from 'tap';
import type { Fs, PendingUpload, WriteHandle } from '@ferry/core';
import type { CaseGroup, SuiteContext } from '../fs-conformance.js';
import { expectMissing, namesIn, readFile, rejectionOf, withTimeout, writeFile, writeSome } from '../fs-helpers.js';
import { failingStream, randomBytesSeeded, sha256Stream } from '../streams.js';

const SETTLE_MS = 30_000;
const OLD = 'the previous content, which must survive';

type AbortWay = 'WriteHandle.abort()' | 'AbortSignal' | 'source stream error';

/** Starts a write of 1 MiB (of a declared 8 MiB) and interrupts it one way or another. */
async function interruptedWrite(fs: Fs, path: string, way: AbortWay): Promise<{ done: unknown; handle: WriteHandle }> {
  const ac = new AbortController();
  const handle = await fs.openWrite(path, { size: 8 * 1024 * 1024, signal: ac.signal });
  if (way === 'source stream error') {
    const piped = rejectionOf(pipeline(failingStream(1024 * 1024, new Error('client went away')), handle.stream));
    const done = await withTimeout(rejectionOf(handle.done), SETTLE_MS, `done after a ${way}`);
    await withTimeout(piped, SETTLE_MS, 'the pipeline after a source error');
    return { done, handle };
  }
  await writeSome(handle.stream, 1024 * 1024);
  if (way === 'AbortSignal') ac.abort();
  else await withTimeout(handle.abort(new Error('test abort')), SETTLE_MS, 'abort()');
  const done = await withTimeout(rejectionOf(handle.done), SETTLE_MS, `done after ${way}`);
  return { done, handle };
}

async function interruptedWriteCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  await fs.mkdir('/up');
  await writeFile(fs, '/up/existing.txt', OLD);
  for (const way of ['WriteHandle.abort()', 'AbortSignal', 'source stream error'] as const) {
    await t.test(`${way}: new file`, async (t) => {
      const before = await namesIn(fs, '/up');
      const { done } = await interruptedWrite(fs, '/up/new.bin', way);
      t.ok(done, 'done rejects');
      await expectMissing(t, fs, '/up/new.bin', 'stat: the file does not exist');
      t.same(await namesIn(fs, '/up'), before, 'the listing is unchanged (no partial or temporary entry)');
    });
    await t.test(`${way}: overwriting an existing file`, async (t) => {
      const before = await namesIn(fs, '/up');
      const { done } = await interruptedWrite(fs, '/up/existing.txt', way);
      t.ok(done, 'done rejects');
      t.equal((await readFile(fs, '/up/existing.txt')).toString(), OLD, 'the old content is intact');
      t.equal((await fs.stat('/up/existing.txt')).size, OLD.length, 'and so is its size');
      t.same(await namesIn(fs, '/up'), before, 'the listing is unchanged');
    });
  }
  await t.test('abort() before any byte', async (t) => {
    const handle = await fs.openWrite('/up/nothing.bin');
    await withTimeout(handle.abort(), SETTLE_MS, 'abort()');
    t.ok(await withTimeout(rejectionOf(handle.done), SETTLE_MS, 'done'), 'done rejects');
    await expectMissing(t, fs, '/up/nothing.bin');
  });
  await t.test('signal already aborted', async (t) => {
    const err = await rejectionOf(fs.openWrite('/up/never.bin', { signal: AbortSignal.abort() }).then((h) => withTimeout(h.done, SETTLE_MS, 'done')));
    t.match(err, { code: 'ABORTED' }, 'openWrite (or done) fails with ABORTED');
    await expectMissing(t, fs, '/up/never.bin');
  });
}

async function beforePublishCases(t: Test, ctx: SuiteContext): Promise<void> {
  const fs = await ctx.fresh(t);
  const data = randomBytesSeeded(300_000, 'pending');
  const want = await sha256Stream(Readable.from([data]));

  await t.test('sees the full pending bytes before the file is visible', async (t) => {
    let calls = 0;
    let seen: { sha256: string; size: number } | undefined;
    let visibleDuringHook: unknown;
    await writeFile(fs, '/p.bin', data, {
      beforePublish: async (pending: PendingUpload) => {
        calls++;
        t.equal(pending.size, data.length, 'pending.size is the full size');
        seen = await sha256Stream(await pending.openRead());
        visibleDuringHook = await rejectionOf(fs.stat('/p.bin'));
      },
    });
    t.equal(calls, 1, 'the hook runs once');
    t.same(seen, want, 'pending.openRead() yields exactly the uploaded bytes');
    t.match(visibleDuringHook, { code: 'NOT_FOUND' }, 'the file is not visible while the hook runs');
    t.same(await sha256Stream(await fs.openRead('/p.bin')), want, 'published after the hook');
  });
  await t.test('overwrite: the old file stays visible during the hook', async (t) => {
    await writeFile(fs, '/o.txt', OLD);
    let during = '';
    await writeFile(fs, '/o.txt', 'replacement', {
      beforePublish: async () => void (during = (await readFile(fs, '/o.txt')).toString()),
    });
    t.equal(during, OLD, 'readers saw the old content while the hook ran');
    t.equal((await readFile(fs, '/o.txt')).toString(), 'replacement', 'and the new content after');
  });
  await t.test('a throwing hook rejects the upload and leaves nothing', async (t) => {
    const before = await namesIn(fs, '/');
    const usedBefore = await fs.usedSpace();
    const veto = new Error('rejected by policy');
    const err = await rejectionOf(writeFile(fs, '/vetoed.bin', data, { beforePublish: () => Promise.reject(veto) }));
    t.equal(err, veto, 'done rejects with the error the hook threw');
    await expectMissing(t, fs, '/vetoed.bin', 'the rejected file does not exist');
    t.same(await namesIn(fs, '/'), before, 'the listing is unchanged');
    t.same(await fs.usedSpace(), usedBefore, 'usedSpace is unchanged (no leftover bytes)');
  });
  await t.test('a throwing hook on overwrite keeps the old file', async (t) => {
    await writeFile(fs, '/keep.txt', OLD);
    const err = await rejectionOf(writeFile(fs, '/keep.txt', 'never published', { beforePublish: () => Promise.reject(new Error('veto')) }));
    t.match(err, { message: 'veto' }, 'done rejects');
    t.equal((await readFile(fs, '/keep.txt')).toString(), OLD, 'the old content is intact');
  });
}

export const abortCases: CaseGroup[] = [
  { name: 'abort mid-stream leaves nothing visible', run: interruptedWriteCases },
  { name: 'beforePublish', requires: ['atomicUpload'], run: beforePublishCases },
];

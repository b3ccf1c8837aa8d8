import t from 'tap';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { FsError } from '../../src/fs/fs-error.js';
import { startPartUpload, type PartUploadSpec } from '../../src/sdk/part-upload.js';

/** A backend in memory: what each call received, parts taking `delayMs` each. */
function memoryBackend(o: { partSize: number; concurrency: number; delayMs?: number; failPart?: number; signal?: AbortSignal }) {
  const log: string[] = [];
  const parts = new Map<number, Buffer>();
  let inFlight = 0;
  let maxInFlight = 0;
  const buffersSeen = new Set<ArrayBufferLike>();
  let stored: Buffer | undefined;
  const spec: PartUploadSpec = {
    path: '/f.bin',
    partSize: o.partSize,
    concurrency: o.concurrency,
    signal: o.signal,
    mapError: (err) => new FsError('UNAVAILABLE', `backend: ${(err as Error).message}`, { path: '/f.bin' }),
    async sendPart(buf, len, index, offset, signal) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      buffersSeen.add(buf.buffer);
      log.push(`part ${index} @${offset} ${len}`);
      try {
        const copy = Buffer.from(buf.subarray(0, len)); // the buffer is lent: keep a copy
        await sleep(o.delayMs ?? 0, undefined, { signal });
        if (index === o.failPart) throw new Error(`part ${index} refused`);
        parts.set(index, copy);
      } finally {
        inFlight--;
      }
    },
    async complete(last, len, count, offset) {
      log.push(`complete ${count} parts, last ${len} @${offset}`);
      const all = [...Array(count).keys()].map((i) => parts.get(i)!);
      stored = Buffer.concat(last ? [...all, last.subarray(0, len)] : all);
      return { etag: 'e1' };
    },
    async cancel() {
      log.push('cancel');
    },
  };
  return { spec, log, parts, buffersSeen, stored: () => stored, maxInFlight: () => maxInFlight };
}

const data = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));

t.test('parts in order, a full buffer sent once more bytes follow, the rest to complete()', async (t) => {
  const b = memoryBackend({ partSize: 3000, concurrency: 1, delayMs: 2 });
  const h = startPartUpload(b.spec);
  await pipeline(Readable.from([data.subarray(0, 1234), data.subarray(1234, 9000), data.subarray(9000)]), h.stream);
  t.same(await h.done, { size: 10_000, etag: 'e1' });
  t.same(b.log, ['part 0 @0 3000', 'part 1 @3000 3000', 'part 2 @6000 3000', 'complete 3 parts, last 1000 @9000']);
  t.ok(b.stored()!.equals(data), 'the stored bytes are the written ones');
  t.equal(b.maxInFlight(), 1, 'concurrency 1: one part at a time');
  t.ok(b.buffersSeen.size <= 2, `at most concurrency + 1 buffers (${b.buffersSeen.size})`);

  const exact = memoryBackend({ partSize: 5000, concurrency: 1 });
  const h2 = startPartUpload(exact.spec);
  await pipeline(Readable.from([data]), h2.stream);
  await h2.done;
  t.same(exact.log, ['part 0 @0 5000', 'complete 1 parts, last 5000 @5000'], 'an exact multiple: the last full buffer goes to complete()');

  const empty = memoryBackend({ partSize: 5000, concurrency: 1 });
  const h3 = startPartUpload(empty.spec);
  h3.stream.end();
  t.same(await h3.done, { size: 0, etag: 'e1' });
  t.same(empty.log, ['complete 0 parts, last 0 @0'], 'no bytes: complete() alone');
});

t.test('concurrency: parts overlap up to the limit, buffers stay bounded', async (t) => {
  const b = memoryBackend({ partSize: 500, concurrency: 3, delayMs: 10 });
  const h = startPartUpload(b.spec);
  await pipeline(Readable.from([data]), h.stream);
  await h.done;
  t.equal(b.maxInFlight(), 3, 'three parts in flight at most, and at once');
  t.ok(b.buffersSeen.size <= 4, `at most concurrency + 1 buffers (${b.buffersSeen.size})`);
  t.ok(b.stored()!.equals(data));
});

t.test('a failed part: done rejects with the mapped error, cancel() runs after the parts in flight', async (t) => {
  const b = memoryBackend({ partSize: 1000, concurrency: 2, delayMs: 5, failPart: 2 });
  const h = startPartUpload(b.spec);
  await pipeline(Readable.from([data]), h.stream).catch(() => undefined);
  await t.rejects(h.done, { code: 'UNAVAILABLE', message: 'backend: part 2 refused' });
  t.equal(b.log.at(-1), 'cancel', 'cancelled last');
  t.notOk(
    b.log.some((l) => l.startsWith('complete')),
    'never completed',
  );
});

t.test('abort() and the signal cancel the upload', async (t) => {
  const b = memoryBackend({ partSize: 1000, concurrency: 1, delayMs: 50 });
  const h = startPartUpload(b.spec);
  h.stream.write(data.subarray(0, 2500));
  await sleep(10);
  await h.abort();
  await t.rejects(h.done, { code: 'ABORTED' });
  t.equal(b.log.at(-1), 'cancel');

  const ctrl = new AbortController();
  const s = memoryBackend({ partSize: 1000, concurrency: 1, delayMs: 50, signal: ctrl.signal });
  const h2 = startPartUpload(s.spec);
  h2.stream.write(data.subarray(0, 2500));
  ctrl.abort();
  await t.rejects(h2.done, { code: 'ABORTED' });
  t.equal(s.log.at(-1), 'cancel');
  t.notOk(s.log.some((l) => l.startsWith('complete')));

  const gone = memoryBackend({ partSize: 1000, concurrency: 1 });
  const h3 = startPartUpload(gone.spec);
  h3.stream.write(data.subarray(0, 1500));
  h3.stream.destroy(); // the writer went away (client disconnect)
  await t.rejects(h3.done, { code: 'ABORTED' });
});

import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import t from 'tap';
import { GROWN_WRITE_QUEUE, LocalFs, WRITE_QUEUE_BUDGET, queuedUploadBytes } from '../src/index.js';

// Upload write queues (atomic-upload.ts): at the default write buffer size a
// long upload queues up to GROWN_WRITE_QUEUE before its writer is held back
// (fewer, larger writes), an operator's write_buffer_size is kept as it is,
// all uploads together stay within the budget, and the process's count of
// queued bytes returns to zero whatever the outcome.
const KIB = 1024;
const CHUNK = 64 * KIB;
const base = t.testdir({});

/** Writes `chunks` chunks as fast as the stream takes them; returns the highest process-wide queue seen and the bytes. */
async function pour(stream: Writable, chunks: number, seen: { max: number }): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let i = 0; i < chunks; i++) {
    const c = randomBytes(CHUNK);
    parts.push(c);
    if (!stream.write(c)) await new Promise((r) => stream.once('drain', r));
    seen.max = Math.max(seen.max, queuedUploadBytes());
  }
  return Buffer.concat(parts);
}

t.test('the default write buffer grows for a long upload; a configured one is kept', async (t) => {
  for (const [name, writeBufferSize, grows] of [
    ['default', undefined, true],
    ['configured 64 KiB', CHUNK, false],
  ] as const) {
    const root = path.join(base, name.replace(/ /g, '-'));
    await mkdir(root);
    const fs = new LocalFs({ root, tempDir: path.join(base, `${name.replace(/ /g, '-')}-tmp`), writeBufferSize });
    const seen = { max: 0 };
    const h = await fs.openWrite('/big.bin');
    const bytes = await pour(h.stream, 256, seen);
    h.stream.end();
    await h.done;
    t.ok((await readFile(path.join(root, 'big.bin'))).equals(bytes), `${name}: the file is what was written`);
    if (grows) t.ok(seen.max > 2 * CHUNK, `${name}: the queue grew past the default (${seen.max} bytes at most)`);
    else t.ok(seen.max <= 2 * CHUNK, `${name}: the queue stayed within the buffer and one chunk (${seen.max} bytes at most)`);
    t.ok(seen.max <= GROWN_WRITE_QUEUE + CHUNK, `${name}: never more than the grown queue and one chunk`);
    t.equal(queuedUploadBytes(), 0, `${name}: nothing counted as queued afterwards`);
  }
});

t.test('queued bytes are given back by aborted uploads', async (t) => {
  const root = path.join(base, 'aborts');
  await mkdir(root);
  const fs = new LocalFs({ root, tempDir: path.join(base, 'aborts-tmp') });
  const uploads = await Promise.all(Array.from({ length: 8 }, (_, i) => fs.openWrite(`/f${i}.bin`)));
  for (const h of uploads) for (let i = 0; i < 20; i++) h.stream.write(randomBytes(CHUNK));
  t.ok(queuedUploadBytes() > 0, 'bytes are queued while the uploads run');
  t.ok(queuedUploadBytes() <= WRITE_QUEUE_BUDGET + uploads.length * 2 * CHUNK, 'within the budget and one buffer and chunk per upload');
  await Promise.all(uploads.map((h) => h.abort()));
  for (const h of uploads) await h.done.catch(() => undefined);
  t.equal(queuedUploadBytes(), 0, 'every aborted upload gave its queue back');
});

import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { fillZip, ZipWriter } from '../src/index.js';

/** A consumer of the archive: counts its bytes; fails with `failAfter` bytes when given. */
function consume(zip: ZipWriter, failAfter?: number): Promise<number> {
  let n = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      cb(failAfter !== undefined && n > failAfter ? Object.assign(new Error('no space left'), { code: 'ENOSPC' }) : null);
    },
  });
  return pipeline(zip, sink).then(() => n);
}

t.test('the whole archive: resolves to what the consumer resolved to', async (t) => {
  const zip = new ZipWriter({ chunkSize: 1 });
  const size = await fillZip(zip, consume(zip), async () => {
    await zip.addBuffer('a.txt', Buffer.from('hello'));
    await zip.addDirectory('d/');
  });
  t.ok(size > 22 + 2 * 30, `a complete archive (${size} bytes)`);
});

t.test('a failing fill destroys the archive and is the error reported', async (t) => {
  const zip = new ZipWriter();
  const writing = consume(zip);
  const boom = new Error('source failed midway');
  await t.rejects(
    fillZip(zip, writing, async () => {
      await zip.addBuffer('a.txt', Buffer.from('x'));
      throw boom;
    }),
    boom,
  );
  t.ok(zip.destroyed, 'the archive is destroyed');
  await t.rejects(writing, 'the consumer ended with an error (it can remove what it wrote)');
});

t.test('a consumer failing first is the error reported, not the entry it interrupted', async (t) => {
  const zip = new ZipWriter({ level: 0, chunkSize: 1 });
  zip.on('error', () => undefined);
  await t.rejects(
    fillZip(zip, consume(zip, 1000), async () => {
      try {
        for (let i = 0; i < 100; i++) await zip.addBuffer(`f${i}.bin`, Buffer.alloc(4096, i));
      } catch {
        // what the entry saw is only a consequence (a source cut, a destroyed writer)
        throw new Error('entry interrupted');
      }
    }),
    { code: 'ENOSPC' },
  );
});

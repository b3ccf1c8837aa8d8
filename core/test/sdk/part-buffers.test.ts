import t from 'tap';
import { gcPacer } from '../../src/vfs/gc-pacer.js';
import { PartBuffers } from '../../src/sdk/part-buffers.js';

// PartBuffers (the part buffers of one upload, fs-s3's and fs-gcs's writers): after a successful upload the writer hands its part buffers' memory back (detached:
// freed by the next young collection instead of the next full one).

t.test('dispose() detaches the free buffers and the last one, and counts their bytes for the GC pacer', async (t) => {
  const noted: number[] = [];
  const note = gcPacer.note;
  gcPacer.note = (n: number) => void noted.push(n);
  t.teardown(() => (gcPacer.note = note));
  const pool = new PartBuffers(1024, 3);
  const a = await pool.acquire();
  const b = await pool.acquire();
  const c = await pool.acquire();
  a.fill(1);
  pool.release(a);
  pool.release(b);
  t.equal(pool.dispose(c), 3 * 1024, 'bytes given back');
  t.same(noted, [3 * 1024]);
  for (const [name, buf] of Object.entries({ a, b, c })) t.equal(buf.buffer.byteLength, 0, `${name} detached`);
  t.equal(pool.dispose(), 0, 'a second dispose finds nothing');
});

t.test('dispose() leaves a buffer still in use alone', async (t) => {
  const pool = new PartBuffers(1024, 2);
  const inUse = await pool.acquire();
  const free = await pool.acquire();
  inUse.fill(7);
  pool.release(free);
  t.equal(pool.dispose(), 1024);
  t.equal(inUse.length, 1024);
  t.equal(inUse[1023], 7, 'its bytes are intact');
});

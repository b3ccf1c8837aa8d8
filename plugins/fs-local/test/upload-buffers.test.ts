import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { leaseUploadBuffers } from '@ferry/core';
import { LocalFs } from '../src/index.js';

// An upload written from a front-end's lent read buffers (the SDK's leaseUploadBuffers): each
// chunk written as it came gives its buffer back, so the reader reads into the same few buffers;
// the file holds the bytes each chunk held when it was written.
const base = t.testdir({});
const fs = new LocalFs({ root: base, tempDir: path.join(base, '.tmp') });

t.test('written chunks come back to the reader; the file is what was sent', async (t) => {
  const ub = leaseUploadBuffers();
  t.teardown(() => ub.close());
  const h = await fs.openWrite('/up.bin');
  const sent: Buffer[] = [];
  const seen = new Set<ArrayBufferLike>();
  for (let i = 0; i < 64; i++) {
    const b = ub.take();
    const chunk = b.subarray(0, b.length - (i % 7));
    // what a socket would read into the buffer: new bytes each time, over whatever it held
    randomBytes(chunk.length).copy(chunk);
    sent.push(Buffer.from(chunk));
    seen.add(b.buffer);
    ub.lend(chunk);
    if (!h.stream.write(chunk)) await new Promise((r) => h.stream.once('drain', r));
  }
  h.stream.end();
  await h.done;
  t.ok((await readFile(path.join(base, 'up.bin'))).equals(Buffer.concat(sent)), 'byte for byte, no chunk overwritten before it was written');
  t.ok(seen.size < 64, `64 chunks read into ${seen.size} buffers`);
});

import t from 'tap';
import { PassThrough, Writable } from 'node:stream';
import { GcPacer, gcPacer } from '../../src/sdk/gc-pacer.js';
import { pump } from '../../src/vfs/pump.js';
import type { WriteHandle } from '../../src/fs/fs.contract.js';

t.test('a young collection per paceBytes of short-lived buffers', async (t) => {
  const runs: string[] = [];
  const pacer = new GcPacer((o) => void runs.push(o.type), 100, 0);
  t.ok(pacer.active);
  pacer.note(60);
  t.equal(runs.length, 0, 'not yet');
  pacer.note(40);
  t.same(runs, ['minor'], 'at 100 bytes, at once');
  pacer.note(99);
  t.equal(runs.length, 1);
  pacer.note(250);
  t.equal(runs.length, 2, 'one collection for a large count, the count starts again');
  pacer.note(99);
  t.equal(runs.length, 2);
  t.equal(pacer.runs, 2);
});

t.test('at most one collection per minIntervalMs, however fast the bytes come', async (t) => {
  let clock = 1000;
  let runs = 0;
  const pacer = new GcPacer(
    () => void runs++,
    100,
    20,
    () => clock,
  );
  pacer.note(100);
  t.equal(runs, 1);
  clock += 5;
  pacer.note(300);
  t.equal(runs, 1, '5 ms later: not yet, the bytes are kept');
  clock += 15;
  pacer.note(1);
  t.equal(runs, 2, '20 ms after the last one');
  pacer.note(99);
  t.equal(runs, 2, 'the count started again');
});

t.test('without an exposed gc() nothing happens', async (t) => {
  const pacer = new GcPacer(undefined, 1);
  t.notOk(pacer.active);
  pacer.note(1e9);
  t.equal(pacer.runs, 0);
});

t.test('an upload counts every chunk it stores', async (t) => {
  const noted: number[] = [];
  const note = gcPacer.note;
  gcPacer.note = (n: number) => void noted.push(n);
  t.teardown(() => (gcPacer.note = note));
  const stored: number[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      stored.push(chunk.length);
      cb();
    },
  });
  const handle = { stream, done: Promise.resolve({ size: 0 }), abort: async () => undefined } as unknown as WriteHandle;
  const source = new PassThrough();
  const done = pump(source, () => null, undefined, handle, new AbortController().signal);
  source.write(Buffer.alloc(10));
  source.end(Buffer.alloc(20));
  await done;
  t.same(stored, [10, 20]);
  t.same(noted, [10, 20]);
});

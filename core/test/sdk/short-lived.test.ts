import t from 'tap';
import { noteShortLived, setShortLivedSink } from '../../src/sdk/short-lived.js';

t.test('noteShortLived reports to the installed sink, and nowhere without one', async (t) => {
  t.teardown(() => setShortLivedSink(undefined));
  noteShortLived(10); // no sink: nothing to receive it, no error
  const noted: number[] = [];
  setShortLivedSink((n) => void noted.push(n));
  noteShortLived(1024);
  noteShortLived(5);
  t.same(noted, [1024, 5]);
  setShortLivedSink(undefined);
  noteShortLived(7);
  t.same(noted, [1024, 5], 'removed: no longer called');
});

t.test("core's GC pacer installs itself as the sink when it loads", async (t) => {
  const { gcPacer } = await import('../../src/vfs/gc-pacer.js');
  const noted: number[] = [];
  const note = gcPacer.note;
  gcPacer.note = (n: number) => void noted.push(n);
  t.teardown(() => (gcPacer.note = note));
  noteShortLived(4096);
  t.same(noted, [4096]);
});

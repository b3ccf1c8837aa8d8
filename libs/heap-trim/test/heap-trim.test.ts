import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadHeapTrim } from '../src/index.js';

// The addon is built by npm ci (node-gyp) on the machines this project runs
// on (Debian, glibc); it gives free pages of the C allocator back.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const rssMb = () => process.memoryUsage.rss() / 1048576;

const trim = loadHeapTrim();

t.test('built here, unless FERRY_HEAP_TRIM=off', async (t) => {
  t.equal(trim === null, process.env.FERRY_HEAP_TRIM === 'off');
});

t.test('the pages a burst of buffers left free go back to the system', { skip: trim === null ? 'FERRY_HEAP_TRIM=off' : false }, async (t) => {
  // 4,000 buffers of 32 KiB (under glibc's mmap threshold: they come from the heap); one in 50 kept, so
  // the heap cannot shrink from its top and the freed pages stay resident until trimmed
  let burst: Buffer[] | null = Array.from({ length: 4000 }, () => Buffer.allocUnsafeSlow(32 * 1024).fill(1));
  const kept = burst.filter((_, i) => i % 50 === 0);
  burst = null;
  gc();
  await new Promise((r) => setTimeout(r, 100)); // the freed buffers' memory swept
  gc();
  const before = rssMb();
  t.equal(trim!(), true, 'memory was given back');
  const after = rssMb();
  t.ok(before - after > 60, `resident memory fell by most of the 125 MB freed (${before.toFixed(0)} -> ${after.toFixed(0)} MB)`);
  t.ok(
    kept.every((b) => b[0] === 1 && b[b.length - 1] === 1),
    'the buffers still in use keep their bytes',
  );
});

import { randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How far live buffer memory rose above its level before some work, and how often it was looked at. */
export interface BufferGrowth {
  /** Peak of `process.memoryUsage().arrayBuffers` minus the level before, in bytes. */
  grew: number;
  samples: number;
}

/** The `gc` function of V8, exposed for this process. */
function exposedGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Bytes of memory held by live buffers (`process.memoryUsage().arrayBuffers`)
 * after full collections.
 *
 * Two collections, not one: V8 frees the memory of the buffers a collection
 * found dead on a background thread, after the collection returns, and the
 * next collection waits for that sweep before it starts. Read after one, the
 * figure still counts dead buffers whenever that thread has not run yet,
 * which is most often on a busy machine (a compression test saw 2-10 MiB of
 * such garbage beside other tests, 0.2-0.4 MiB after a second collection).
 */
export function liveBufferBytes(): number {
  const gc = exposedGc();
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

/**
 * Runs `work` while sampling the memory held by live buffers every
 * `intervalMs` ({@link liveBufferBytes}): the garbage of a streamed transfer
 * does not count, only what stays referenced. A test then shows that a file
 * or archive is streamed, not held, by bounding `grew` well below its size
 * (and `samples` shows the work was watched: how many depends on the
 * machine, see below).
 *
 * A sample is two full collections, which take tens of milliseconds with a
 * large heap on a slow machine: the next sample waits at least
 * {@link SAMPLE_DUTY} times as long as the last one took, so that sampling
 * never takes more than about a third of the main thread. (At a fixed
 * 100 ms, a zip that takes seconds alone took 270 s in CI, 1,556 samples.)
 */
export async function liveBufferGrowth(work: () => Promise<unknown>, intervalMs = 100): Promise<BufferGrowth> {
  const before = liveBufferBytes();
  let peak = before;
  let samples = 0;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const sample = () => {
    const start = performance.now();
    peak = Math.max(peak, liveBufferBytes());
    samples++;
    if (!done) timer = setTimeout(sample, Math.max(intervalMs, SAMPLE_DUTY * (performance.now() - start)));
  };
  timer = setTimeout(sample, intervalMs);
  try {
    await work();
  } finally {
    done = true;
    clearTimeout(timer);
  }
  return { grew: peak - before, samples };
}

/** Least ratio of the wait before a sample to the time the last one took. */
export const SAMPLE_DUTY = 2;

/**
 * Writes `size` bytes of random hex digits to `file`, 1 MiB at a time:
 * deflate halves such data, so an archive of it is large enough that
 * holding it in memory shows.
 */
export function writeRandomHex(file: string, size: number): void {
  const fd = openSync(file, 'w');
  try {
    for (let left = size; left > 0; left -= 1 << 20) {
      const n = Math.min(left, 1 << 20);
      writeSync(
        fd,
        Buffer.from(
          randomBytes(Math.ceil(n / 2))
            .toString('hex')
            .slice(0, n),
        ),
      );
    }
  } finally {
    closeSync(fd);
  }
}

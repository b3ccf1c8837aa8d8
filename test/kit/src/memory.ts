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

/**
 * Runs `work` while sampling the memory held by live buffers every
 * `intervalMs`, each sample after a full collection: the garbage of a
 * streamed transfer does not count, only what stays referenced. A test then
 * shows that a file or archive is streamed, not held, by bounding `grew`
 * well below its size (and `samples` shows the work was watched).
 */
export async function liveBufferGrowth(work: () => Promise<unknown>, intervalMs = 100): Promise<BufferGrowth> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  let samples = 0;
  const sampler = setInterval(() => {
    gc();
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    samples++;
  }, intervalMs);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return { grew: peak - before, samples };
}

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

import { runInNewContext } from 'node:vm';
import v8 from 'node:v8';
import type { Test } from 'tap';

/**
 * Collects the process's warnings from now on; `check(t)` forces garbage
 * collections and fails on a "Closing directory handle on garbage
 * collection" (or file handle) warning: a handle some request left open.
 */
export function watchHandleWarnings(): { check(t: Test): Promise<void> } {
  const warnings: string[] = [];
  process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`));
  return {
    async check(t) {
      v8.setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setTimeout(r, 20));
      }
      t.same(
        warnings.filter((m) => /directory handle|file descriptor|FileHandle/i.test(m)),
        [],
        'no "Closing directory handle on garbage collection" (or file handle) warning',
      );
    },
  };
}

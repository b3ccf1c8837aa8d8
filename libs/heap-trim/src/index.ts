/**
 * glibc's malloc_trim(0) from node (native/heap-trim.c): the free pages of
 * the C allocator's heaps go back to the system.
 *
 * Node's Buffers live outside the JavaScript heap, in memory of the C
 * allocator. A burst of them (a transfer's chunks, freed by the garbage
 * collector some milliseconds after their last use) leaves the allocator's
 * heap as large as the burst's peak: glibc returns memory to the system on
 * its own only from the top of a heap, and the pages freed below stay
 * resident until the allocator reuses them. malloc_trim() releases every
 * free page. Without the addon (not built on this machine, a C library
 * other than glibc, or FERRY_HEAP_TRIM=off) loadHeapTrim() is null and
 * callers skip the trim.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

interface HeapTrimAddon {
  /** malloc_trim(0): true when memory was given back to the system. */
  trim(): boolean;
  /** True on glibc (elsewhere trim() does nothing and answers false). */
  supported(): boolean;
}

let found: HeapTrimAddon | null | undefined;

/** The trim (true when memory was given back), or null (not built, does not load, not glibc, or FERRY_HEAP_TRIM=off). */
export function loadHeapTrim(): (() => boolean) | null {
  if (found === undefined) {
    found = null;
    if (process.env.FERRY_HEAP_TRIM !== 'off') {
      // dist/src/index.js and src/index.ts sit two or one folders below the package
      for (const rel of ['../../build/Release/heap_trim.node', '../build/Release/heap_trim.node']) {
        const file = fileURLToPath(new URL(rel, import.meta.url));
        if (!existsSync(file)) continue;
        try {
          const addon = createRequire(import.meta.url)(file) as HeapTrimAddon;
          if (addon.supported()) found = addon;
        } catch {
          // built for another node, or broken: no trim
        }
        break;
      }
    }
  }
  const addon = found;
  return addon ? () => addon.trim() : null;
}

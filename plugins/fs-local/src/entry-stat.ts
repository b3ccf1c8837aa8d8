import { lstatSync, type Stats } from 'node:fs';

/**
 * The lstat of one entry, read on the calling thread, as a promise (so callers
 * keep their shape, and an error still rejects). An entry's metadata comes
 * from the kernel's caches in a few microseconds (5.5 us of CPU for the
 * `/proc/self/fd/N/name` form used here); sent through libuv's thread pool
 * the same call cost 40 us of CPU on the machines measured, almost all of it
 * waking a pool thread and being woken back, and the upload of a small file
 * paid that once (docs/performance-history.md). File data, directory walks
 * and batches of entries stay off the event loop (batch I/O worker, thread
 * pool); only single-entry lookups use this.
 */
export function lstatEntry(target: string): Promise<Stats> {
  try {
    return Promise.resolve(lstatSync(target));
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * lstatEntry() for a lookup that expects missing entries (an upload to a new
 * name): null when there is none, without the error lstat throws for it
 * (13 us of CPU where the lookup itself costs 5). Other errors are thrown.
 */
export function lstatEntryOrNull(target: string): Stats | null {
  return lstatSync(target, { throwIfNoEntry: false }) ?? null;
}

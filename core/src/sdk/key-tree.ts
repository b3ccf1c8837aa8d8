import { throwIfFsAborted } from './signals.js';

/**
 * Runs `fn` on every item, at most `limit` at a time, in the items' order. After
 * the first failure (or once `signal` fires) no further item starts; the ones
 * already running are waited for, then the first error is thrown, so nothing
 * this call started still runs once it settles.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure && next < items.length) {
      const i = next++;
      try {
        throwIfFsAborted(signal);
        await fn(items[i]!, i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const workers = Math.max(1, Math.min(Math.floor(limit) || 1, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure) throw failure.error;
}

/** How moveKeyTree() reaches one backend: its listing, its server-side copy and its delete. */
export interface KeyTreeMove<T> {
  /** Every object under `from` (no delimiter, directory markers included), page by page. */
  pages: AsyncIterable<T[]>;
  /** The object's key (it starts with `from`). */
  keyOf: (item: T) => string;
  /** Key prefix of the source directory ("a/b/"). */
  from: string;
  /** Key prefix of the target directory ("c/"): each key keeps its part after `from`. */
  to: string;
  /** Server-side copy of one object to `toKey`. */
  copy: (item: T, toKey: string) => Promise<void>;
  /** Deletes the sources of one page, once all of them were copied (a key already gone is fine). */
  deleteSources: (items: T[]) => Promise<void>;
  /** Copies running at once (default 8). */
  concurrency?: number;
  signal?: AbortSignal;
  /** Called with the running count after each object copied. */
  onProgress?: (moved: number) => void;
}

/**
 * Moves a "directory" of a flat key space (object stores): every object under
 * one key prefix is copied server-side to the same relative key under another,
 * `concurrency` at a time, and a page's sources are deleted once the whole page
 * was copied, so a failure (or an abort) leaves every object at least at its
 * source. Returns how many objects were moved.
 */
export async function moveKeyTree<T>(m: KeyTreeMove<T>): Promise<number> {
  let moved = 0;
  for await (const page of m.pages) {
    throwIfFsAborted(m.signal);
    await forEachConcurrently(
      page,
      m.concurrency ?? 8,
      async (item) => {
        await m.copy(item, m.to + m.keyOf(item).slice(m.from.length));
        moved++; // not inside `onProgress?.(...)`: an absent callback would skip the count
        m.onProgress?.(moved);
      },
      m.signal,
    );
    throwIfFsAborted(m.signal);
    await m.deleteSources(page);
  }
  return moved;
}

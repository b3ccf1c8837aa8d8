/**
 * Marks a promise as handled (so a caller that never awaits it does not
 * crash the process with an unhandled rejection) and returns it unchanged:
 * awaiting it still rejects. Backends use it for `WriteHandle.done`, which a
 * writer may legitimately ignore after calling `abort()`.
 */
export function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

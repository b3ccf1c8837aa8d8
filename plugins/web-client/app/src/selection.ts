/**
 * The entries chosen in a folder of the file browser (checkboxes), for the
 * actions on several entries (share, …). The choice is by name and is
 * cleared when the folder changes.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';

export interface Selection {
  /** The chosen names. */
  names: ReadonlySet<string>;
  has(name: string): boolean;
  toggle(name: string, on: boolean): void;
  clear(): void;
}

/** The selection of the folder `dir` (emptied when `dir` changes). */
export function useSelection(dir: string): Selection {
  const [names, setNames] = useState<ReadonlySet<string>>(() => new Set());
  useEffect(() => setNames(new Set()), [dir]);
  const toggle = useCallback((name: string, on: boolean) => {
    setNames((prev) => {
      if (prev.has(name) === on) return prev;
      const next = new Set(prev);
      if (on) next.add(name);
      else next.delete(name);
      return next;
    });
  }, []);
  const clear = useCallback(() => setNames(new Set()), []);
  return useMemo(() => ({ names, has: (n: string) => names.has(n), toggle, clear }), [names, toggle, clear]);
}

/**
 * The selection of entries of the file list (full paths): a hook with a
 * small API other screens build on (the selection toolbar, sharing a
 * selection), and the pure rules behind it (unit-tested under node).
 */
import { useCallback, useMemo, useRef, useState } from 'react';

/**
 * The selection after a click on `target` in the list order `order`: a plain
 * click toggles it; a shift-click sets every entry from the last clicked one
 * (`anchor`) to it to the state the target takes (what file managers do).
 */
export function toggleSelection(selected: ReadonlySet<string>, order: readonly string[], target: string, anchor?: string | null, range = false): Set<string> {
  const next = new Set(selected);
  const on = !selected.has(target);
  const a = range && anchor ? order.indexOf(anchor) : -1;
  const b = order.indexOf(target);
  if (a < 0 || b < 0) {
    if (on) next.add(target);
    else next.delete(target);
    return next;
  }
  for (let i = Math.min(a, b); i <= Math.max(a, b); i++) {
    if (on) next.add(order[i]!);
    else next.delete(order[i]!);
  }
  return next;
}

/** The selected paths still listed (a refresh may remove some), in list order. */
export function selectedInOrder(selected: ReadonlySet<string>, order: readonly string[]): string[] {
  return order.filter((p) => selected.has(p));
}

/** The state of a "select all" box: none, some (mixed) or all of the listed entries selected. */
export function allState(selected: ReadonlySet<string>, order: readonly string[]): 'none' | 'some' | 'all' {
  const n = order.reduce((c, p) => c + (selected.has(p) ? 1 : 0), 0);
  return n === 0 ? 'none' : n === order.length ? 'all' : 'some';
}

export interface Selection {
  /** The selected paths that are listed, in list order. */
  paths: string[];
  isSelected(path: string): boolean;
  /** Toggles one path; `range` (shift) extends from the last toggled path. */
  toggle(path: string, range?: boolean): void;
  /** Selects every listed path, or clears when all are selected. */
  toggleAll(): void;
  clear(): void;
  state: 'none' | 'some' | 'all';
}

/** The selection of a list whose entries, in display order, are `order` (full paths). */
export function useSelection(order: readonly string[]): Selection {
  const [selected, setSelected] = useState<ReadonlySet<string>>(() => new Set());
  const anchor = useRef<string | null>(null);
  const toggle = useCallback(
    (path: string, range = false) => {
      setSelected((s) => toggleSelection(s, order, path, anchor.current, range));
      anchor.current = path;
    },
    [order],
  );
  const state = allState(selected, order);
  const toggleAll = useCallback(() => setSelected(allState(selected, order) === 'all' ? new Set() : new Set(order)), [selected, order]);
  const clear = useCallback(() => {
    setSelected(new Set());
    anchor.current = null;
  }, []);
  const paths = useMemo(() => selectedInOrder(selected, order), [selected, order]);
  const isSelected = useCallback((p: string) => selected.has(p), [selected]);
  return { paths, isSelected, toggle, toggleAll, clear, state };
}

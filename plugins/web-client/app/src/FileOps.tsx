/**
 * The file operations of the file list, kept out of Files.tsx: what the
 * folder's permissions allow (permissions.ts), the selection (selection.ts)
 * with its toolbar (SelectionBar.tsx), the quota usage, and the preview
 * dialog with its checksums (preview/*).
 */
import { useEffect, useMemo, useRef, useState, type ChangeEvent, type ReactNode } from 'react';
import { isDir, type Entry } from './entries';
import { Icon } from './Icon';
import { joinPath } from './format';
import { useCapabilities } from './capabilities';
import type { Allowed } from './permissions';
import { previewKind } from './preview/kind';
import { Preview, type PreviewItem } from './preview/Preview';
import { QuotaUsage } from './Quota';
import { SelectionBar } from './SelectionBar';
import { useSelection, type Selection } from './selection';
import { t } from './strings';

export interface FileOps {
  allowed: Allowed;
  selection: Selection;
  /** Tells that the folder's contents changed (the quota is read again). */
  changed(): void;
  /** The selection toolbar and the results of its actions. */
  bar: ReactNode;
  /** The quota usage and the preview dialog. */
  footer: ReactNode;
  /** A Preview button for a file the browser can show (when downloads are allowed), else nothing. */
  previewButton(e: Entry, path: string): ReactNode;
}

/**
 * The file operations of folder `dir`, whose listing is `entries` (null while it loads) and whose listed
 * entries (filtered, in display order) are `shown`. The quota is read again whenever the listing is.
 * `extraActions` adds buttons to the selection toolbar (e.g. "share the selection"), given the selected paths.
 */
export function useFileOps(
  dir: string,
  entries: readonly Entry[] | null,
  shown: readonly Entry[],
  reload: () => void,
  extraActions?: (paths: readonly string[]) => ReactNode,
): FileOps {
  const caps = useCapabilities(dir);
  const { allowed } = caps;
  const first = useRef(true);
  const { reload: reloadCaps } = caps;
  useEffect(() => {
    // the first listing of a folder comes with its capabilities (read when `dir` changed); later ones may follow a change
    if (entries === null) first.current = true;
    else if (first.current) first.current = false;
    else reloadCaps();
  }, [entries, reloadCaps]);
  const order = useMemo(() => shown.map((e) => joinPath(dir, e.name)), [dir, shown]);
  const selection = useSelection(order);
  const { clear } = selection;
  useEffect(() => clear(), [dir, clear]);

  const previewable = useMemo<PreviewItem[]>(
    () => shown.filter((e) => !isDir(e) && previewKind(e.name)).map((e) => ({ path: joinPath(dir, e.name), name: e.name, size: e.size })),
    [dir, shown],
  );
  const [previewing, setPreviewing] = useState<number | null>(null);
  useEffect(() => setPreviewing(null), [dir]);

  const changed = caps.reload;

  const byPath = useMemo(() => new Map(shown.map((e) => [joinPath(dir, e.name), e])), [dir, shown]);
  const targets = selection.paths.map((path) => ({ path, dir: isDir(byPath.get(path)!) }));

  const previewButton = (e: Entry, path: string): ReactNode => {
    if (!allowed.download || isDir(e) || !previewKind(e.name)) return null;
    return (
      <button type="button" onClick={() => setPreviewing(previewable.findIndex((p) => p.path === path))} aria-label={`${t.preview} ${e.name}`}>
        <Icon name="eye" />
        <span className="action-label">{t.preview}</span>
      </button>
    );
  };

  return {
    allowed,
    selection,
    changed,
    bar: <SelectionBar selection={selection} targets={targets} dir={dir} allowed={allowed} onChanged={reload} extra={extraActions?.(selection.paths)} />,
    footer: (
      <>
        <QuotaUsage quota={caps.quota} />
        {previewing !== null && previewable[previewing] && (
          <Preview items={previewable} index={previewing} onIndex={setPreviewing} onClose={() => setPreviewing(null)} />
        )}
      </>
    ),
    previewButton,
  };
}

/** The selection box of an entry, before its name (space toggles it; a shift-click selects the range from the last one toggled). */
export function SelectBox({ ops, name, path }: { ops: FileOps; name: string; path: string }) {
  return (
    <input
      type="checkbox"
      className="select-box"
      checked={ops.selection.isSelected(path)}
      aria-label={t.select(name)}
      onChange={(e: ChangeEvent<HTMLInputElement>) => ops.selection.toggle(path, (e.nativeEvent as MouseEvent).shiftKey === true)}
    />
  );
}

/** The "select all" box of the header row (mixed when some are selected). */
export function SelectAllBox({ ops }: { ops: FileOps }) {
  const ref = useRef<HTMLInputElement>(null);
  const { state } = ops.selection;
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = state === 'some';
  }, [state]);
  return <input ref={ref} type="checkbox" className="select-box" checked={state === 'all'} aria-label={t.selectAll} onChange={ops.selection.toggleAll} />;
}

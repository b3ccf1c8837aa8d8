import { useState, type ReactNode } from 'react';
import { Dialog } from './Dialog';
import { runBulk } from './file-actions';
import { failures, zipUrl, type BulkAction, type Outcome, type Target } from './file-paths';
import { FolderPicker } from './FolderPicker';
import type { Allowed } from './permissions';
import type { Selection } from './selection';
import { t } from './strings';

/**
 * The toolbar of a selection of entries of folder `dir`: download as a zip,
 * move or copy to a folder chosen in a picker, delete with one
 * confirmation; what the folder's permissions do not allow is not offered.
 * Failures are told per entry. `extra` holds actions other screens add
 * (e.g. sharing the selection).
 */
export function SelectionBar({
  selection,
  targets,
  dir,
  allowed,
  onChanged,
  extra,
}: {
  selection: Selection;
  /** The selected entries (paths and whether they are folders), in list order. */
  targets: readonly Target[];
  dir: string;
  allowed: Allowed;
  onChanged: () => void;
  extra?: ReactNode;
}) {
  const [pending, setPending] = useState<BulkAction | null>(null);
  const [progress, setProgress] = useState<string>('');
  const [result, setResult] = useState<{ action: BulkAction; outcomes: Outcome[] } | null>(null);

  const n = targets.length;
  const hasDirs = targets.some((x) => x.dir);
  const hasFiles = targets.some((x) => !x.dir);
  const canRemove = (!hasFiles || allowed.deleteFiles) && (!hasDirs || allowed.deleteDirs);
  const canMove = (!hasFiles || allowed.renameFiles) && (!hasDirs || allowed.renameDirs);

  const run = async (action: BulkAction, into?: string) => {
    setPending(null);
    setResult(null);
    const list = [...targets];
    setProgress(t.working(0, list.length));
    const outcomes = await runBulk(action, list, into, (done) => setProgress(t.working(done, list.length)));
    setProgress('');
    setResult({ action, outcomes });
    selection.clear();
    onChanged();
  };

  const label = (a: BulkAction) => (a === 'move' ? t.move : a === 'copy' ? t.copy : t.delete);
  const failed = result ? failures(result.outcomes) : [];

  return (
    <>
      {n > 0 && (
        <div className="selection-bar" role="toolbar" aria-label={t.selectionToolbar}>
          <span className="selection-count" aria-live="polite">
            {t.selectedCount(n)}
          </span>
          {allowed.download && (
            <a className="button" href={zipUrl(targets.map((x) => x.path))} download="download.zip">
              {t.downloadZip}
            </a>
          )}
          {canMove && (
            <button type="button" onClick={() => setPending('move')}>
              {t.move}
            </button>
          )}
          {allowed.copy && (
            <button type="button" onClick={() => setPending('copy')}>
              {t.copy}
            </button>
          )}
          {canRemove && (
            <button type="button" className="danger" onClick={() => setPending('delete')}>
              {t.delete}
            </button>
          )}
          {extra}
          <button type="button" onClick={selection.clear}>
            {t.clearSelection}
          </button>
        </div>
      )}
      {progress && (
        <p className="muted" role="status">
          {progress}
        </p>
      )}
      {result && (
        <div className={failed.length ? 'error banner bulk-result' : 'banner bulk-result'} role={failed.length ? 'alert' : 'status'}>
          <div>
            {failed.length === 0 ? (
              <span>{t.bulkDone(label(result.action), result.outcomes.length)}</span>
            ) : (
              <>
                <span>{t.bulkFailed(failed.length)}</span>
                <ul>
                  {failed.map((o) => (
                    <li key={o.path}>
                      <code>{o.path}</code>: {o.error}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </div>
          <button type="button" onClick={() => setResult(null)}>
            {t.dismiss}
          </button>
        </div>
      )}
      {(pending === 'move' || pending === 'copy') && (
        <FolderPicker
          action={pending}
          paths={targets.map((x) => x.path)}
          start={dir}
          onClose={() => setPending(null)}
          onChoose={(into) => void run(pending, into)}
        />
      )}
      {pending === 'delete' && (
        <Dialog title={t.delete} submitLabel={t.delete} danger onClose={() => setPending(null)} onSubmit={() => void run('delete')}>
          <p>{t.confirmDeleteSelection(n)}</p>
        </Dialog>
      )}
    </>
  );
}

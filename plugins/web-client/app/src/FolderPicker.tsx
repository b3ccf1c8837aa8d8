import { useEffect, useState } from 'react';
import { api, errorMessage } from './api';
import { Dialog } from './Dialog';
import { Icon } from './Icon';
import { isDir, sortEntries } from './entries';
import { baseName, parentOf, placementProblem } from './file-paths';
import { joinPath } from './format';
import { t } from './strings';

/**
 * A dialog to choose the folder a selection is moved or copied to: it
 * browses the user's folders from `start`, and refuses a folder an entry
 * cannot go into (itself, one of its subfolders, or where it is for a move).
 */
export function FolderPicker({
  action,
  paths,
  start,
  onChoose,
  onClose,
}: {
  action: 'move' | 'copy';
  paths: readonly string[];
  start: string;
  onChoose: (dir: string) => void;
  onClose: () => void;
}) {
  const [dir, setDir] = useState(start);
  const [folders, setFolders] = useState<string[] | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    let live = true;
    setFolders(null);
    // cleared on leaving a folder, not when its listing comes: a choice refused meanwhile keeps its message
    setError('');
    void api.GET('/api/v2/user/dirs', { params: { query: { path: dir } } }).then(({ data, error: err, response }) => {
      if (!live) return;
      setFolders(data ? sortEntries(data.filter(isDir), { key: 'name', asc: true }).map((e) => e.name) : []);
      if (!data) setError(errorMessage(err, `HTTP ${response.status}`));
    });
    return () => {
      live = false;
    };
  }, [dir]);

  const choose = () => {
    for (const p of paths) {
      const problem = placementProblem(p, dir, action);
      if (problem === 'into-itself') return setError(t.intoItself(baseName(p)));
      if (problem === 'same-folder' && paths.every((q) => parentOf(q) === dir)) return setError(t.sameFolder);
    }
    onChoose(dir);
  };

  return (
    <Dialog
      title={action === 'move' ? t.moveTo(paths.length) : t.copyTo(paths.length)}
      submitLabel={action === 'move' ? t.moveHere : t.copyHere}
      onSubmit={choose}
      onClose={onClose}
      className="picker"
    >
      <p className="picker-where" aria-live="polite">
        {t.destination(dir)}
      </p>
      <ul className="picker-list" aria-label={t.folderPicker} aria-busy={folders === null}>
        {dir !== '/' && (
          <li>
            <button type="button" className="link" onClick={() => setDir(parentOf(dir))}>
              <Icon name="folder" />
              {t.parentFolder}
            </button>
          </li>
        )}
        {folders?.map((name) => (
          <li key={name}>
            <button type="button" className="link" onClick={() => setDir(joinPath(dir, name))} aria-label={t.openFolder(name)}>
              <Icon name="folder" />
              {name}
            </button>
          </li>
        ))}
      </ul>
      {folders === null ? <p className="muted">{t.loading}</p> : folders.length === 0 && <p className="muted">{t.noSubfolders}</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </Dialog>
  );
}

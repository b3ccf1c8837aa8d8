import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { useLatestCall } from './latest-call.js';
import { api, errorMessage, routeUrl } from './api';
import { Dialog } from './Dialog';
import { listing } from './early';
import { Icon } from './Icon';
import { parentOf } from './file-paths';
import { folderKey, isEditable } from './list-keys';
import { filterEntries, isDir, sortEntries, type Entry, type Sort, type SortKey } from './entries';
import { crumbs, formatDate, formatSize, joinPath, validName } from './format';
import type { ShareChoice } from './shareForm';
import { t } from './strings';
import { UploadButtons, Uploads, useDropZone, useUploads } from './Uploads';
import { VirtualList } from './VirtualList';
import { useFileOps, SelectAllBox, SelectBox } from './FileOps';

/** Row heights, as styles.css sets them: one line on a desktop, two on a phone (the size and date under the name). */
const ROW_HEIGHT = 48;
const ROW_HEIGHT_NARROW = 60;
const NARROW = '(max-width: 40rem)';

function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const m = matchMedia(query);
    const update = () => setMatches(m.matches);
    m.addEventListener('change', update);
    return () => m.removeEventListener('change', update);
  }, [query]);
  return matches;
}

type Pending = { kind: 'mkdir' } | { kind: 'rename'; entry: Entry } | { kind: 'delete'; entry: Entry } | null;

/**
 * The file browser of one folder: breadcrumbs, sortable and filterable virtualized list, actions and uploads.
 * `onShare` (when the account may share): a new share of the selected entries, or of the folder.
 */
export function Files({ dir, onNavigate, onShare }: { dir: string; onNavigate: (dir: string) => void; onShare?: (chosen: ShareChoice) => void }) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [listError, setListError] = useState('');
  const [error, setError] = useState('');
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<Sort>({ key: 'name', asc: true });
  const [pending, setPending] = useState<Pending>(null);
  const [newName, setNewName] = useState('');
  const [nameError, setNameError] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const rowHeight = useMedia(NARROW) ? ROW_HEIGHT_NARROW : ROW_HEIGHT;

  // a listing answering after a later one was asked for (the folder left meanwhile) is dropped
  const begin = useLatestCall();
  const load = useCallback(async () => {
    const current = begin();
    const { data, error: err, response } = await listing(dir);
    if (!current()) return;
    if (data) {
      setEntries(data);
      setListError('');
    } else {
      setEntries([]);
      setListError(errorMessage(err, `HTTP ${response.status}`));
    }
  }, [dir, begin]);

  useEffect(() => {
    setEntries(null);
    setFilter('');
    void load();
    heading.current?.focus();
  }, [load]);

  const uploads = useUploads(dir, () => void load());
  const drop = useDropZone(uploads.add);
  const shown = useMemo(() => sortEntries(filterEntries(entries ?? [], filter), sort), [entries, filter, sort]);
  const ops = useFileOps(dir, entries, shown, () => void load());
  const { allowed } = ops;

  const run = async (action: () => Promise<{ error?: unknown; response: Response }>) => {
    setPending(null);
    const { error: err, response } = await action();
    if (!response.ok) setError(t.actionFailed(errorMessage(err, `HTTP ${response.status}`)));
    else setError('');
    await load();
  };

  const confirmName = (apply: (name: string) => void) => {
    const name = newName.trim();
    if (!validName(name)) return setNameError(t.invalidName);
    apply(name);
  };

  const open = (kind: 'mkdir' | 'rename', entry?: Entry) => {
    setNewName(entry?.name ?? '');
    setNameError('');
    setPending(kind === 'mkdir' ? { kind } : { kind, entry: entry! });
  };

  /** Backspace or Alt+Up: up a folder (but not while typing in a field); Delete: asks to delete the entry whose row has the focus. */
  const onKeyDown = (ev: KeyboardEvent<HTMLElement>) => {
    if ((ev.target as Element).closest('dialog') || isEditable(ev.target as Element)) return;
    const what = folderKey(ev);
    if (what === 'parent' && dir !== '/') {
      ev.preventDefault();
      onNavigate(parentOf(dir));
    } else if (what === 'delete') {
      const at = (ev.target as Element).closest('[data-row]')?.getAttribute('data-row');
      const entry = at == null ? undefined : shown[Number(at)];
      if (!entry || !(isDir(entry) ? allowed.deleteDirs : allowed.deleteFiles)) return;
      ev.preventDefault();
      setPending({ kind: 'delete', entry });
    }
  };

  const toggleSort = (key: SortKey) => setSort((s) => (s.key === key ? { key, asc: !s.asc } : { key, asc: true }));
  const header = (key: SortKey, label: string, before?: ReactNode) => {
    const current = sort.key === key;
    return (
      <div role="columnheader" className={`col-${key}`} aria-sort={current ? (sort.asc ? 'ascending' : 'descending') : 'none'}>
        {before}
        <button type="button" className="sort" onClick={() => toggleSort(key)} aria-label={t.sortBy(label, current && sort.asc ? 'descending' : 'ascending')}>
          {label}
          <span aria-hidden="true">{current ? (sort.asc ? ' ▲' : ' ▼') : ''}</span>
        </button>
      </div>
    );
  };

  const row = (e: Entry, i: number) => {
    const path = joinPath(dir, e.name);
    const folder = isDir(e);
    return (
      <div role="row" className="entry" key={e.name} data-row={i} aria-rowindex={i + 2} aria-selected={ops.selection.isSelected(path)}>
        <div role="cell" className="col-name">
          <SelectBox ops={ops} name={e.name} path={path} />
          {folder ? (
            <button type="button" className="link" data-primary onClick={() => onNavigate(path)}>
              <Icon name="folder" />
              {e.name}
            </button>
          ) : allowed.download ? (
            <a href={routeUrl('/api/v2/user/files', 'get', { path })} download={e.name} aria-label={`${t.download} ${e.name}`} data-primary>
              <Icon name="file" />
              {e.name}
            </a>
          ) : (
            <span data-primary tabIndex={-1}>
              <Icon name="file" />
              {e.name}
            </span>
          )}
        </div>
        <div role="cell" className="col-size">
          {folder ? t.folder : formatSize(e.size)}
        </div>
        <div role="cell" className="col-modified" title={formatDate(e.last_modified)}>
          <span className="date-medium">{formatDate(e.last_modified)}</span>
          <span className="date-short">{formatDate(e.last_modified, t.lang, 'narrow')}</span>
        </div>
        <div role="cell" className="col-actions">
          {ops.previewButton(e, path)}
          {(folder ? allowed.renameDirs : allowed.renameFiles) && (
            <button type="button" onClick={() => open('rename', e)} aria-label={`${t.rename} ${e.name}`}>
              <Icon name="pencil" />
              <span className="action-label">{t.rename}</span>
            </button>
          )}
          {(folder ? allowed.deleteDirs : allowed.deleteFiles) && (
            <button type="button" className="danger" onClick={() => setPending({ kind: 'delete', entry: e })} aria-label={`${t.delete} ${e.name}`}>
              <Icon name="trash" />
              <span className="action-label">{t.delete}</span>
            </button>
          )}
        </div>
      </div>
    );
  };

  return (
    <main id="content" className={drop.dragging ? 'files dragging' : 'files'} onKeyDown={onKeyDown} {...(allowed.upload ? drop.props : {})}>
      <nav aria-label={t.breadcrumbs}>
        <ol className="crumbs">
          <li>
            <a
              href="/web/client/files"
              aria-current={dir === '/' ? 'page' : undefined}
              onClick={(ev) => {
                ev.preventDefault();
                onNavigate('/');
              }}
            >
              {t.home}
            </a>
          </li>
          {crumbs(dir).map((c, i, all) => (
            <li key={c.path}>
              <a
                href={`/web/client/files${c.path}`}
                aria-current={i === all.length - 1 ? 'page' : undefined}
                onClick={(ev) => {
                  ev.preventDefault();
                  onNavigate(c.path);
                }}
              >
                {c.name}
              </a>
            </li>
          ))}
        </ol>
      </nav>
      <h1 ref={heading} tabIndex={-1}>
        {dir === '/' ? t.home : (crumbs(dir).at(-1)?.name ?? t.filesTitle)}
      </h1>
      <div className="toolbar">
        <label className="filter">
          <span className="visually-hidden">{t.filter}</span>
          <input type="search" placeholder={t.filterPlaceholder} value={filter} onChange={(e) => setFilter(e.target.value)} />
        </label>
        {allowed.createDirs && (
          <button type="button" onClick={() => open('mkdir')}>
            {t.newFolder}
          </button>
        )}
        {onShare && (
          <button
            type="button"
            onClick={() => {
              const paths = ops.selection.paths.length ? ops.selection.paths : [dir];
              const oneFile = paths.length === 1 && !!entries?.some((e) => !isDir(e) && joinPath(dir, e.name) === paths[0]);
              onShare({ paths, oneFile });
            }}
          >
            {t.shareSelected(ops.selection.paths.length)}
          </button>
        )}
        {allowed.upload && <UploadButtons onPicked={uploads.add} />}
      </div>
      {ops.bar}
      {(error || listError) && (
        <div className="error banner" role="alert">
          <span>{error || listError}</span>
          {error && (
            <button type="button" onClick={() => setError('')}>
              {t.dismiss}
            </button>
          )}
        </div>
      )}
      <Uploads state={uploads} />
      <div role="table" className="table" aria-label={t.filesTitle} aria-rowcount={shown.length + 1} aria-busy={entries === null}>
        <div role="rowgroup">
          <div role="row" className="entry head" aria-rowindex={1}>
            {header('name', t.name, <SelectAllBox ops={ops} />)}
            {header('size', t.size)}
            {header('modified', t.modified)}
            <div role="columnheader" className="col-actions">
              <span className="visually-hidden">{t.actions}</span>
            </div>
          </div>
        </div>
        {entries === null ? <p className="muted">{t.loading}</p> : <VirtualList items={shown} rowHeight={rowHeight} render={row} label={t.filesTitle} />}
      </div>
      <p className="muted count" role="status">
        {entries === null ? '' : entries.length === 0 ? t.emptyFolder : shown.length === 0 ? t.noMatch : t.entries(shown.length, entries.length)}
      </p>
      {ops.footer}

      {pending?.kind === 'mkdir' && (
        <Dialog
          title={t.newFolder}
          submitLabel={t.create}
          onClose={() => setPending(null)}
          onSubmit={() => confirmName((name) => void run(() => api.POST('/api/v2/user/dirs', { params: { query: { path: joinPath(dir, name) } } })))}
        >
          <NameField label={t.newFolderName} value={newName} error={nameError} onChange={setNewName} />
        </Dialog>
      )}
      {pending?.kind === 'rename' && (
        <Dialog
          title={t.rename}
          submitLabel={t.save}
          onClose={() => setPending(null)}
          onSubmit={() =>
            confirmName((name) => {
              const query = { path: joinPath(dir, pending.entry.name), target: joinPath(dir, name) };
              void run(() =>
                isDir(pending.entry) ? api.PATCH('/api/v2/user/dirs', { params: { query } }) : api.PATCH('/api/v2/user/files', { params: { query } }),
              );
            })
          }
        >
          <NameField label={t.renameTo(pending.entry.name)} value={newName} error={nameError} onChange={setNewName} />
        </Dialog>
      )}
      {pending?.kind === 'delete' && (
        <Dialog
          title={t.delete}
          submitLabel={t.delete}
          danger
          onClose={() => setPending(null)}
          onSubmit={() => {
            const query = { path: joinPath(dir, pending.entry.name) };
            void run(() =>
              isDir(pending.entry) ? api.DELETE('/api/v2/user/dirs', { params: { query } }) : api.DELETE('/api/v2/user/files', { params: { query } }),
            );
          }}
        >
          <p>{t.confirmDelete(pending.entry.name)}</p>
        </Dialog>
      )}
    </main>
  );
}

function NameField({ label, value, error, onChange }: { label: string; value: string; error: string; onChange: (v: string) => void }) {
  return (
    <>
      <label htmlFor="name-field">{label}</label>
      <input
        id="name-field"
        autoFocus
        required
        spellCheck={false}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'name-error' : undefined}
        onChange={(e) => onChange(e.target.value)}
      />
      {error && (
        <p id="name-error" className="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

/**
 * What the admin's lists of named objects (users, groups, ...) share: a page
 * at a time from the server, or the one object found by its exact name; the
 * messages of the last action; the lookup bar with the page settings; the
 * delete confirmation. Each page keeps only its columns and actions.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { Dialog } from '../Dialog';
import { PageSettings, pageOf, usePaging, type Paging } from './paging';
import { t } from './strings';

/** How a list reads its objects: a page (`paging.query`), one by name (404: `notFound`). */
export interface NamedSource<Row> {
  list(query: Paging['query']): Promise<{ rows?: Row[]; message?: string }>;
  get(name: string): Promise<{ row?: Row; status: number; message?: string }>;
  notFound(name: string): string;
}

export interface NamedList<Row> {
  rows: Row[] | null;
  hasNext: boolean;
  paging: Paging;
  /** The name looked up, or null for the pages. */
  found: string | null;
  message: string;
  error: string;
  reload(): Promise<void>;
  /** Runs an action: its failure message (or null), then `done` is shown and the list read again. */
  act(run: () => Promise<string | null>, done: string): Promise<void>;
  /** Back to the pages (after the object looked up is gone). */
  forget(name: string): void;
  bar: { query: string; setQuery(q: string): void; find(e: FormEvent): void; showAll(): void };
}

export function useNamedList<Row>(source: NamedSource<Row>): NamedList<Row> {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [hasNext, setHasNext] = useState(false);
  const paging = usePaging();
  const { offset, limit, order } = paging;
  const [query, setQuery] = useState('');
  const [found, setFoundState] = useState<string | null>(null);
  // read by reload(): an action's reload right after forget() reads the pages, not the object just deleted
  const foundNow = useRef<string | null>(null);
  const setFound = (name: string | null) => {
    foundNow.current = name;
    setFoundState(name);
  };
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');

  const reload = useCallback(async () => {
    const name = foundNow.current;
    if (name !== null) {
      const got = await source.get(name);
      setRows(got.row ? [got.row] : []);
      setHasNext(false);
      if (!got.row) setError(got.status === 404 ? source.notFound(name) : t.actionFailed(got.message ?? ''));
      return;
    }
    const got = await source.list(paging.query);
    if (!got.rows) return setError(t.actionFailed(got.message ?? ''));
    const page = pageOf(got.rows, limit);
    setRows(page.rows);
    setHasNext(page.hasNext);
    // (the source is the page's own constant: not a dependency)
  }, [found, limit, offset, order]);

  useEffect(() => {
    void reload();
  }, [reload]);

  return {
    rows,
    hasNext,
    paging,
    found,
    message,
    error,
    reload,
    async act(run, done) {
      setError('');
      setMessage('');
      const failed = await run();
      if (failed) setError(t.actionFailed(failed));
      else setMessage(done);
      await reload();
    },
    forget(name) {
      if (found === name) setFound(null);
    },
    bar: {
      query,
      setQuery,
      find(e) {
        e.preventDefault();
        setError('');
        setMessage('');
        setFound(query.trim() || null);
        paging.setOffset(0);
      },
      showAll() {
        setQuery('');
        setFound(null);
        setError('');
      },
    },
  };
}

/** The lookup by name and the page settings, then the messages of the last action. */
export function FindBar<Row>({ list, id, label }: { list: NamedList<Row>; id: string; label: string }) {
  const { bar } = list;
  return (
    <>
      <form className="toolbar" role="search" onSubmit={bar.find}>
        <label htmlFor={`${id}-find`}>{label}</label>
        <input id={`${id}-find`} type="search" autoCapitalize="none" spellCheck={false} value={bar.query} onChange={(e) => bar.setQuery(e.target.value)} />
        <button type="submit">{t.find}</button>
        {list.found !== null && (
          <button type="button" onClick={bar.showAll}>
            {t.showAll}
          </button>
        )}
        <PageSettings idPrefix={id} paging={list.paging} />
      </form>
      {list.message && (
        <p className="notice" role="status">
          {list.message}
        </p>
      )}
      {list.error && (
        <p className="error" role="alert">
          {list.error}
        </p>
      )}
    </>
  );
}

/** The link that opens an object's form (a real link: it opens in a new tab too). */
export function OpenLink({ href, name, onOpen }: { href: string; name: string; onOpen: (name: string) => void }) {
  return (
    <a
      href={href}
      onClick={(e) => {
        e.preventDefault();
        onOpen(name);
      }}
    >
      {name}
    </a>
  );
}

/** The confirmation of a delete: `name` while asked, null otherwise. */
export function ConfirmDelete({
  name,
  title,
  children,
  onConfirm,
  onClose,
}: {
  name: string | null;
  title: (name: string) => string;
  children: (name: string) => ReactNode;
  onConfirm: (name: string) => void;
  onClose: () => void;
}) {
  if (!name) return null;
  return (
    <Dialog
      title={title(name)}
      submitLabel={t.delete}
      danger
      onSubmit={() => {
        onClose();
        onConfirm(name);
      }}
      onClose={onClose}
    >
      {children(name)}
    </Dialog>
  );
}

/**
 * The admin's lists of named objects (users, groups, virtual folders, admins,
 * roles): a page at a time from the server (limit, offset, order: a list of
 * 100,000 is never loaded whole), or the one object found by its exact name;
 * the page's columns; the row's own actions; delete with a confirmation (the
 * server's refusal shown); adding and deleting only where the admin may.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useLatestCall } from '../latest-call.js';
import { Dialog } from '../Dialog';
import { PageSettings, Pager, pageOf, usePaging, type Paging } from './paging';
import { t } from './strings';
import { Notices } from './Field';

/** A column of the list: its header and a row's cell. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** A class of the cell (e.g. its state's colour). */
  className?: (row: T) => string | undefined;
}

/** The texts of one kind of object's list. */
export interface ListTexts {
  title: string;
  add: string;
  find: string;
  none: string;
  noSuch: (name: string) => string;
  caption: (from: number, to: number) => string;
  deleteLabel: (name: string) => string;
  confirmDelete: (name: string) => string;
  deleted: (name: string) => string;
}

/** What a row's own actions may do on the page: say what was done, show a failure, or run an action and read the list again. */
export interface RowActions {
  say: (message: string) => void;
  fail: (message: string) => void;
  act: (run: () => Promise<string | null>, done: string) => Promise<void>;
}

/** What the actions on the rows selected (their check boxes) may do: the row actions, and clear the selection. */
export interface BulkActions extends RowActions {
  clear: () => void;
}

/** How a list reads its objects: a page (`paging.query`), one by name (404: `notFound`). */
interface NamedSource<Row> {
  list(query: Paging['query']): Promise<{ rows?: Row[]; message?: string }>;
  get(name: string): Promise<{ row?: Row; status: number; message?: string }>;
  notFound(name: string): string;
}

interface ListState<Row> {
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
  /** Shows what a row's action did, or its failure. */
  say(message: string): void;
  fail(message: string): void;
  /** Back to the pages (after the object looked up is gone). */
  forget(name: string): void;
  bar: { query: string; setQuery(q: string): void; find(e: FormEvent): void; showAll(): void };
}

function useNamedList<Row>(source: NamedSource<Row>): ListState<Row> {
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

  // a page answering after a later one was asked for (another page, a search) is dropped
  const begin = useLatestCall();
  const reload = useCallback(async () => {
    const current = begin();
    const name = foundNow.current;
    if (name !== null) {
      const got = await source.get(name);
      if (!current()) return;
      setRows(got.row ? [got.row] : []);
      setHasNext(false);
      if (!got.row) setError(got.status === 404 ? source.notFound(name) : t.actionFailed(got.message ?? ''));
      return;
    }
    const got = await source.list(paging.query);
    if (!current()) return;
    if (!got.rows) return setError(t.actionFailed(got.message ?? ''));
    const page = pageOf(got.rows, limit);
    setRows(page.rows);
    setHasNext(page.hasNext);
    // (the source is the page's own constant: not a dependency)
  }, [found, limit, offset, order, begin]);

  useEffect(() => {
    void reload();
  }, [reload]);
  // an action that ends later (a quota scan) reads the page shown then, not the one of its start
  const latestReload = useRef(reload);
  latestReload.current = reload;

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
      await latestReload.current();
    },
    say(m) {
      setError('');
      setMessage(m);
    },
    fail(m) {
      setMessage('');
      setError(t.actionFailed(m));
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

export function NamedList<T>({
  idPrefix,
  texts,
  nameHeader = t.name,
  columns,
  nameOf,
  hrefOf,
  list,
  get,
  remove,
  rowActions,
  bulkActions,
  mayAdd = true,
  mayDelete = true,
  onOpen,
}: {
  /** Ids of the controls and the table's test id. */
  idPrefix: string;
  texts: ListTexts;
  /** The header of the name's column (the row's header). */
  nameHeader?: string;
  columns: Column<T>[];
  nameOf: (row: T) => string;
  hrefOf: (name: string) => string;
  list: (query: Paging['query']) => Promise<{ rows?: T[]; message?: string }>;
  get: (name: string) => Promise<{ row?: T; status: number; message?: string }>;
  remove: (name: string) => Promise<string | null>;
  rowActions?: (row: T, actions: RowActions) => ReactNode;
  /** Actions on several rows at once: when given, each row has a check box and the page a "select all" (the names selected on the page shown). */
  bulkActions?: (selected: string[], actions: BulkActions) => ReactNode;
  mayAdd?: boolean;
  mayDelete?: boolean;
  onOpen: (name: string | null) => void;
}) {
  const state = useNamedList<T>({ list, get, notFound: texts.noSuch });
  const { rows, found, bar } = state;
  const { offset } = state.paging;
  const [deleting, setDeleting] = useState<string | null>(null);
  const actions: RowActions = { say: state.say, fail: state.fail, act: state.act };
  const [selectedNames, setSelected] = useState<string[]>([]);
  // only the rows shown can be selected: another page (or a lookup) shows other rows
  const shown = (rows ?? []).map(nameOf);
  const selected = selectedNames.filter((n) => shown.includes(n));
  const toggle = (name: string, on: boolean) => setSelected(on ? [...selected, name] : selected.filter((n) => n !== name));

  return (
    <>
      <div className="title-row">
        <h1>{texts.title}</h1>
        {mayAdd && (
          <button type="button" className="primary" onClick={() => onOpen(null)}>
            {texts.add}
          </button>
        )}
      </div>
      <form className="toolbar" role="search" onSubmit={bar.find}>
        <label htmlFor={`${idPrefix}-find`}>{texts.find}</label>
        <input
          id={`${idPrefix}-find`}
          type="search"
          autoCapitalize="none"
          spellCheck={false}
          value={bar.query}
          onChange={(e) => bar.setQuery(e.target.value)}
        />
        <button type="submit">{t.find}</button>
        {found !== null && (
          <button type="button" onClick={bar.showAll}>
            {t.showAll}
          </button>
        )}
        <PageSettings idPrefix={idPrefix} paging={state.paging} />
      </form>
      {bulkActions && rows && rows.length > 0 && (
        <div className="toolbar" role="group" aria-label={t.selectedRows(selected.length)}>
          <span>{t.selectedRows(selected.length)}</span>
          {bulkActions(selected, { ...actions, clear: () => setSelected([]) })}
        </div>
      )}
      <Notices message={state.message} error={state.error} />
      {rows && rows.length === 0 && !state.error && <p>{texts.none}</p>}
      {rows && rows.length > 0 && (
        <div className="scroll">
          <table className="grid" data-testid={idPrefix}>
            <caption>{found === null ? texts.caption(offset + 1, offset + rows.length) : texts.title}</caption>
            <thead>
              <tr>
                {bulkActions && (
                  <th scope="col">
                    <input
                      type="checkbox"
                      aria-label={t.selectPage}
                      checked={selected.length === shown.length}
                      onChange={(e) => setSelected(e.target.checked ? shown : [])}
                    />
                  </th>
                )}
                <th scope="col">{nameHeader}</th>
                {columns.map((c) => (
                  <th scope="col" key={c.header}>
                    {c.header}
                  </th>
                ))}
                <th scope="col">{t.actions}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const name = nameOf(row);
                return (
                  <tr key={name}>
                    {bulkActions && (
                      <td>
                        <input
                          type="checkbox"
                          aria-label={t.selectRow(name)}
                          checked={selected.includes(name)}
                          onChange={(e) => toggle(name, e.target.checked)}
                        />
                      </td>
                    )}
                    <th scope="row">
                      <a
                        href={hrefOf(name)}
                        onClick={(e) => {
                          e.preventDefault();
                          onOpen(name);
                        }}
                      >
                        {name}
                      </a>
                    </th>
                    {columns.map((c) => (
                      <td key={c.header} className={c.className?.(row)}>
                        {c.cell(row)}
                      </td>
                    ))}
                    <td className="actions">
                      {rowActions?.(row, actions)}
                      {mayDelete && (
                        <button type="button" className="danger" aria-label={texts.deleteLabel(name)} onClick={() => setDeleting(name)}>
                          {t.delete}
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {found === null && <Pager paging={state.paging} hasNext={state.hasNext} />}
      {deleting && (
        <Dialog
          title={texts.deleteLabel(deleting)}
          submitLabel={t.delete}
          danger
          onSubmit={() => {
            const name = deleting;
            setDeleting(null);
            state.forget(name);
            void state.act(() => remove(name), texts.deleted(name));
          }}
          onClose={() => setDeleting(null)}
        >
          <p>{texts.confirmDelete(deleting)}</p>
        </Dialog>
      )}
    </>
  );
}

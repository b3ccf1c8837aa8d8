import { useCallback, useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { Dialog } from '../Dialog';
import { PageSettings, Pager, pageOf, usePaging, type Paging } from './paging';
import { t } from './strings';

/** A column of the list: its header and a row's cell. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
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

/** What a row's own actions may do on the page: say what was done, show a failure. */
export interface RowActions {
  say: (message: string) => void;
  fail: (message: string) => void;
}

/**
 * The list of a kind of named object (virtual folders, admins, roles): a page
 * at a time from the server, a lookup by name, its columns, delete with a
 * confirmation (the server's refusal shown), and the row's own actions.
 */
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
  onOpen,
}: {
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
  onOpen: (name: string | null) => void;
}) {
  const [rows, setRows] = useState<T[] | null>(null);
  const [hasNext, setHasNext] = useState(false);
  const paging = usePaging();
  const { offset, limit, order } = paging;
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<string | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [deleting, setDeleting] = useState<string | null>(null);

  const load = useCallback(async () => {
    if (found !== null) {
      const got = await get(found);
      setRows(got.row ? [got.row] : []);
      setHasNext(false);
      if (!got.row) setError(got.status === 404 ? texts.noSuch(found) : t.actionFailed(got.message ?? ''));
      return;
    }
    const got = await list(paging.query);
    if (!got.rows) return setError(t.actionFailed(got.message ?? ''));
    const page = pageOf(got.rows, limit);
    setRows(page.rows);
    setHasNext(page.hasNext);
  }, [found, limit, offset, order]);

  useEffect(() => {
    void load();
  }, [load]);

  const clear = () => {
    setError('');
    setMessage('');
  };
  const find = (e: FormEvent) => {
    e.preventDefault();
    clear();
    setFound(query.trim() || null);
    paging.setOffset(0);
  };
  const doRemove = async (name: string) => {
    clear();
    const failed = await remove(name);
    if (failed) setError(t.actionFailed(failed));
    else {
      setMessage(texts.deleted(name));
      if (found === name) setFound(null);
    }
    await load();
  };
  const actions: RowActions = {
    say: (m) => {
      clear();
      setMessage(m);
    },
    fail: (m) => {
      clear();
      setError(t.actionFailed(m));
    },
  };

  return (
    <>
      <div className="title-row">
        <h1>{texts.title}</h1>
        <button type="button" className="primary" onClick={() => onOpen(null)}>
          {texts.add}
        </button>
      </div>
      <form className="toolbar" role="search" onSubmit={find}>
        <label htmlFor={`${idPrefix}-find`}>{texts.find}</label>
        <input id={`${idPrefix}-find`} type="search" autoCapitalize="none" spellCheck={false} value={query} onChange={(e) => setQuery(e.target.value)} />
        <button type="submit">{t.find}</button>
        {found !== null && (
          <button
            type="button"
            onClick={() => {
              setQuery('');
              setFound(null);
              setError('');
            }}
          >
            {t.showAll}
          </button>
        )}
        <PageSettings idPrefix={idPrefix} paging={paging} />
      </form>
      {message && (
        <p className="notice" role="status">
          {message}
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {rows && rows.length === 0 && !error && <p>{texts.none}</p>}
      {rows && rows.length > 0 && (
        <div className="scroll">
          <table className="grid" data-testid={idPrefix}>
            <caption>{found === null ? texts.caption(offset + 1, offset + rows.length) : texts.title}</caption>
            <thead>
              <tr>
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
                      <td key={c.header}>{c.cell(row)}</td>
                    ))}
                    <td className="actions">
                      {rowActions?.(row, actions)}
                      <button type="button" className="danger" aria-label={texts.deleteLabel(name)} onClick={() => setDeleting(name)}>
                        {t.delete}
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {found === null && <Pager paging={paging} hasNext={hasNext} />}
      {deleting && (
        <Dialog
          title={texts.deleteLabel(deleting)}
          submitLabel={t.delete}
          danger
          onSubmit={() => {
            const name = deleting;
            setDeleting(null);
            void doRemove(name);
          }}
          onClose={() => setDeleting(null)}
        >
          <p>{texts.confirmDelete(deleting)}</p>
        </Dialog>
      )}
    </>
  );
}

import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Dialog } from '../Dialog';
import { deleteGroup, getGroup, listGroups, type GroupRow } from './groups-api';
import { PageSettings, Pager, pageOf, usePaging } from './paging';
import { t } from './strings';

/**
 * The groups (the page needs manage_groups, which allows all their actions):
 * a page at a time from the server, a lookup by name, delete with a
 * confirmation (the server refuses a group that users or admins still use).
 */
export function Groups({ onOpen }: { onOpen: (name: string | null) => void }) {
  const [rows, setRows] = useState<GroupRow[] | null>(null);
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
      const got = await getGroup(found);
      setRows(got.group ? [got.group] : []);
      setHasNext(false);
      if (!got.group) setError(got.status === 404 ? t.noSuchGroup(found) : t.actionFailed(got.message ?? ''));
      return;
    }
    const got = await listGroups(paging.query);
    if (!got.groups) return setError(t.actionFailed(got.message ?? ''));
    const page = pageOf(got.groups, limit);
    setRows(page.rows);
    setHasNext(page.hasNext);
  }, [found, limit, offset, order]);

  useEffect(() => {
    void load();
  }, [load]);

  const find = (e: FormEvent) => {
    e.preventDefault();
    setError('');
    setMessage('');
    setFound(query.trim() || null);
    paging.setOffset(0);
  };
  const remove = async (name: string) => {
    setError('');
    setMessage('');
    const failed = await deleteGroup(name);
    if (failed) setError(t.actionFailed(failed));
    else {
      setMessage(t.groupDeleted(name));
      if (found === name) setFound(null);
    }
    await load();
  };

  return (
    <>
      <div className="title-row">
        <h1>{t.groups}</h1>
        <button type="button" className="primary" onClick={() => onOpen(null)}>
          {t.addGroup}
        </button>
      </div>
      <form className="toolbar" role="search" onSubmit={find}>
        <label htmlFor="group-find">{t.findGroup}</label>
        <input id="group-find" type="search" autoCapitalize="none" spellCheck={false} value={query} onChange={(e) => setQuery(e.target.value)} />
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
        <PageSettings idPrefix="group" paging={paging} />
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
      {rows && rows.length === 0 && !error && <p>{t.noGroups}</p>}
      {rows && rows.length > 0 && (
        <div className="scroll">
          <table className="grid" data-testid="groups">
            <caption>{found === null ? t.groupsPageOf(offset + 1, offset + rows.length) : t.groups}</caption>
            <thead>
              <tr>
                <th scope="col">{t.name}</th>
                <th scope="col">{t.description}</th>
                <th scope="col">{t.members}</th>
                <th scope="col">{t.lastUpdate}</th>
                <th scope="col">{t.actions}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((g) => (
                <tr key={g.name}>
                  <th scope="row">
                    <a
                      href={`/web/admin/groups/${encodeURIComponent(g.name)}`}
                      onClick={(e) => {
                        e.preventDefault();
                        onOpen(g.name);
                      }}
                    >
                      {g.name}
                    </a>
                  </th>
                  <td>{g.description}</td>
                  <td>{t.memberCount(g.users?.length ?? 0)}</td>
                  <td>{g.updated_at ? new Date(g.updated_at).toLocaleString() : ''}</td>
                  <td className="actions">
                    <button type="button" className="danger" aria-label={t.deleteGroup(g.name)} onClick={() => setDeleting(g.name)}>
                      {t.delete}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {found === null && <Pager paging={paging} hasNext={hasNext} />}
      {deleting && (
        <Dialog
          title={t.deleteGroup(deleting)}
          submitLabel={t.delete}
          danger
          onSubmit={() => {
            const name = deleting;
            setDeleting(null);
            void remove(name);
          }}
          onClose={() => setDeleting(null)}
        >
          <p>{t.confirmDeleteGroup(deleting)}</p>
        </Dialog>
      )}
    </>
  );
}

import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, errorMessage } from '../api';
import { Dialog } from '../Dialog';
import { formatSize } from '../format';
import { PageSettings, Pager, pageOf, usePaging } from './paging';
import { can, type AdminSession } from './session';
import { t } from './strings';
import { deleteUser, getUser, setUserStatus, type UserRow } from './users-api';

/**
 * The users: a page at a time from the server (limit, offset, order: a list of
 * 100,000 is never loaded whole), a lookup by username, enable/disable and
 * delete with a confirmation; each action only with its permission.
 */
export function Users({ session, onOpen }: { session: AdminSession; onOpen: (username: string | null) => void }) {
  const [rows, setRows] = useState<UserRow[] | null>(null);
  const [hasNext, setHasNext] = useState(false);
  const paging = usePaging();
  const { offset, limit, order, setOffset } = paging;
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<string | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [deleting, setDeleting] = useState<string | null>(null);
  const mayEdit = can(session, 'edit_users');

  const load = useCallback(async () => {
    if (found !== null) {
      const got = await getUser(found);
      setRows(got.user ? [got.user] : []);
      setHasNext(false);
      if (!got.user) setError(got.status === 404 ? t.noSuchUser(found) : t.actionFailed(got.message ?? ''));
      return;
    }
    const { data, error: body, response } = await api.GET('/api/v2/users', { params: { query: paging.query } });
    if (!data) {
      setError(t.actionFailed(errorMessage(body, String(response.status))));
      return;
    }
    const page = pageOf(data, limit);
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
    setOffset(0);
  };
  const act = async (run: () => Promise<string | null>, done: string) => {
    setError('');
    setMessage('');
    const failed = await run();
    if (failed) setError(t.actionFailed(failed));
    else setMessage(done);
    await load();
  };

  return (
    <>
      <div className="title-row">
        <h1>{t.users}</h1>
        {can(session, 'add_users') && (
          <button type="button" className="primary" onClick={() => onOpen(null)}>
            {t.addUser}
          </button>
        )}
      </div>
      <form className="toolbar" role="search" onSubmit={find}>
        <label htmlFor="user-find">{t.findUser}</label>
        <input id="user-find" type="search" autoCapitalize="none" spellCheck={false} value={query} onChange={(e) => setQuery(e.target.value)} />
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
        <PageSettings idPrefix="user" paging={paging} />
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
      {rows && rows.length === 0 && !error && <p>{t.noUsers}</p>}
      {rows && rows.length > 0 && (
        <div className="scroll">
          <table className="grid" data-testid="users">
            <caption>{found === null ? t.pageOf(offset + 1, offset + rows.length) : t.users}</caption>
            <thead>
              <tr>
                <th scope="col">{t.username}</th>
                <th scope="col">{t.status}</th>
                <th scope="col">{t.email}</th>
                <th scope="col">{t.quota}</th>
                <th scope="col">{t.expires}</th>
                <th scope="col">{t.actions}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((u) => (
                <tr key={u.username}>
                  <th scope="row">
                    <a
                      href={`/web/admin/users/${encodeURIComponent(u.username)}`}
                      onClick={(e) => {
                        e.preventDefault();
                        onOpen(u.username);
                      }}
                    >
                      {u.username}
                    </a>
                  </th>
                  <td className={u.status === 1 ? 'ok' : 'muted'}>{u.status === 1 ? t.enabled : t.disabled}</td>
                  <td>{u.email}</td>
                  <td>{t.quotaOf(u.quota_size ? formatSize(u.quota_size) : t.unlimited, u.quota_files ? t.files(u.quota_files) : t.unlimited)}</td>
                  <td>{u.expiration_date ? new Date(u.expiration_date).toLocaleDateString() : t.never}</td>
                  <td className="actions">
                    {mayEdit && (
                      <button
                        type="button"
                        aria-label={u.status === 1 ? t.disableUser(u.username) : t.enableUser(u.username)}
                        onClick={() =>
                          void act(
                            () => setUserStatus(u.username, u.status === 1 ? 0 : 1),
                            u.status === 1 ? t.disabledMsg(u.username) : t.enabledMsg(u.username),
                          )
                        }
                      >
                        {u.status === 1 ? t.disable : t.enable}
                      </button>
                    )}
                    {can(session, 'del_users') && (
                      <button type="button" className="danger" aria-label={t.deleteUser(u.username)} onClick={() => setDeleting(u.username)}>
                        {t.delete}
                      </button>
                    )}
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
          title={t.deleteUser(deleting)}
          submitLabel={t.delete}
          danger
          onSubmit={() => {
            const name = deleting;
            setDeleting(null);
            if (found === name) setFound(null);
            void act(() => deleteUser(name), t.deleted(name));
          }}
          onClose={() => setDeleting(null)}
        >
          <p>{t.confirmDelete(deleting)}</p>
        </Dialog>
      )}
    </>
  );
}

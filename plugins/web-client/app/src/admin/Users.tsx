import { useState } from 'react';
import { api, errorMessage } from '../api';
import { formatSize } from '../format';
import { ConfirmDelete, FindBar, OpenLink, useNamedList, type NamedSource } from './named-list';
import { Pager } from './paging';
import { can, type AdminSession } from './session';
import { t } from './strings';
import { deleteUser, getUser, setUserStatus, type UserRow } from './users-api';

const source: NamedSource<UserRow> = {
  list: async (query) => {
    const { data, error, response } = await api.GET('/api/v2/users', { params: { query } });
    return data ? { rows: data } : { message: errorMessage(error, String(response.status)) };
  },
  get: async (username) => {
    const got = await getUser(username);
    return { row: got.user, status: got.status, message: got.message };
  },
  notFound: (username) => t.noSuchUser(username),
};

/**
 * The users: a page at a time from the server (limit, offset, order: a list of
 * 100,000 is never loaded whole), a lookup by username, enable/disable and
 * delete with a confirmation; each action only with its permission.
 */
export function Users({ session, onOpen }: { session: AdminSession; onOpen: (username: string | null) => void }) {
  const list = useNamedList(source);
  const { rows, found } = list;
  const { offset } = list.paging;
  const [deleting, setDeleting] = useState<string | null>(null);
  const mayEdit = can(session, 'edit_users');

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
      <FindBar list={list} id="user" label={t.findUser} />
      {rows && rows.length === 0 && !list.error && <p>{t.noUsers}</p>}
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
                    <OpenLink href={`/web/admin/users/${encodeURIComponent(u.username)}`} name={u.username} onOpen={onOpen} />
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
                          void list.act(
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
      {found === null && <Pager paging={list.paging} hasNext={list.hasNext} />}
      <ConfirmDelete
        name={deleting}
        title={t.deleteUser}
        onClose={() => setDeleting(null)}
        onConfirm={(name) => {
          list.forget(name);
          void list.act(() => deleteUser(name), t.deleted(name));
        }}
      >
        {(name) => <p>{t.confirmDelete(name)}</p>}
      </ConfirmDelete>
    </>
  );
}

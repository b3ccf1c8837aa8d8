import { api, errorMessage } from '../api';
import { formatSize } from '../format';
import { NamedList, type BulkActions } from './NamedList';
import { can, type AdminSession } from './session';
import { t } from './strings';
import { useQuotaScans } from './useQuotaScans';
import { usedOf } from './UserUsage';
import { deleteUser, getUser, runningUserScans, scanUserQuota, setUserStatus, type UserRow } from './users-api';

/** Enables or disables each user named (one PUT each, the rest of the user kept); each refusal shown with the API's message. */
async function setStatusOf(names: string[], status: 0 | 1, a: BulkActions): Promise<void> {
  if (names.length === 0) return a.fail(t.selectFirst);
  const failures: string[] = [];
  const done: string[] = [];
  for (const name of names) {
    const failed = await setUserStatus(name, status);
    if (failed) failures.push(t.userFailed(name, failed));
    else done.push(name);
  }
  a.clear();
  await a.act(async () => (failures.length ? t.someFailed(failures, done) : null), status === 1 ? t.usersEnabled(done) : t.usersDisabled(done));
}

/**
 * The users: a page at a time from the server (limit, offset, order: a list of
 * 100,000 is never loaded whole), a lookup by username, enable/disable and
 * delete with a confirmation; several users enabled or disabled at once
 * (their check boxes); a quota scan ("scanning…" until it ends, then the
 * used quota read again); a clone's form opened; each action only with its permission.
 */
export function Users({
  session,
  onOpen,
  onClone,
}: {
  session: AdminSession;
  onOpen: (username: string | null) => void;
  /** Opens a new user's form filled from this one. */
  onClone: (username: string) => void;
}) {
  const mayEdit = can(session, 'edit_users');
  const mayScan = can(session, 'quota_scans');
  const scans = useQuotaScans(runningUserScans);
  return (
    <NamedList<UserRow>
      idPrefix="users"
      texts={{
        title: t.users,
        add: t.addUser,
        find: t.findUser,
        none: t.noUsers,
        noSuch: t.noSuchUser,
        caption: t.pageOf,
        deleteLabel: t.deleteUser,
        confirmDelete: t.confirmDelete,
        deleted: t.deleted,
      }}
      nameHeader={t.username}
      columns={[
        { header: t.status, cell: (u) => (u.status === 1 ? t.enabled : t.disabled), className: (u) => (u.status === 1 ? 'ok' : 'muted') },
        { header: t.email, cell: (u) => u.email },
        {
          header: t.quota,
          cell: (u) => t.quotaOf(u.quota_size ? formatSize(u.quota_size) : t.unlimited, u.quota_files ? t.files(u.quota_files) : t.unlimited),
        },
        { header: t.usedQuota, cell: (u) => (scans.scanning.includes(u.username) ? t.scanning : usedOf(u)) },
        { header: t.expires, cell: (u) => (u.expiration_date ? new Date(u.expiration_date).toLocaleDateString() : t.never) },
      ]}
      nameOf={(u) => u.username}
      hrefOf={(name) => `/web/admin/users/${encodeURIComponent(name)}`}
      list={async (query) => {
        const { data, error, response } = await api.GET('/api/v2/users', { params: { query } });
        return data ? { rows: data } : { message: errorMessage(error, String(response.status)) };
      }}
      get={async (username) => {
        const got = await getUser(username);
        return { row: got.user, status: got.status, message: got.message };
      }}
      remove={deleteUser}
      rowActions={(u, a) => (
        <>
          {mayScan && (
            <button
              type="button"
              aria-label={t.scanUser(u.username)}
              disabled={scans.scanning.includes(u.username)}
              onClick={() =>
                void scanUserQuota(u.username).then((failed) => {
                  if (failed) return a.fail(failed);
                  a.say(t.userScanStarted(u.username));
                  scans.started(u.username, () => void a.act(async () => null, t.userScanDone(u.username)));
                })
              }
            >
              {t.scanQuota}
            </button>
          )}
          {can(session, 'add_users') && (
            <button type="button" aria-label={t.cloneUser(u.username)} onClick={() => onClone(u.username)}>
              {t.clone}
            </button>
          )}
          {mayEdit && (
            <button
              type="button"
              aria-label={u.status === 1 ? t.disableUser(u.username) : t.enableUser(u.username)}
              onClick={() =>
                void a.act(() => setUserStatus(u.username, u.status === 1 ? 0 : 1), u.status === 1 ? t.disabledMsg(u.username) : t.enabledMsg(u.username))
              }
            >
              {u.status === 1 ? t.disable : t.enable}
            </button>
          )}
        </>
      )}
      bulkActions={
        mayEdit
          ? (selected, a) => (
              <>
                <button type="button" onClick={() => void setStatusOf(selected, 1, a)}>
                  {t.enableSelected}
                </button>
                <button type="button" onClick={() => void setStatusOf(selected, 0, a)}>
                  {t.disableSelected}
                </button>
              </>
            )
          : undefined
      }
      mayAdd={can(session, 'add_users')}
      mayDelete={can(session, 'del_users')}
      onOpen={onOpen}
    />
  );
}

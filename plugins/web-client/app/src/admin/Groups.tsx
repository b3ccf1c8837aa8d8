import { useState } from 'react';
import { deleteGroup, getGroup, listGroups, type GroupRow } from './groups-api';
import { ConfirmDelete, FindBar, OpenLink, useNamedList, type NamedSource } from './named-list';
import { Pager } from './paging';
import { t } from './strings';

const source: NamedSource<GroupRow> = {
  list: async (query) => {
    const got = await listGroups(query);
    return { rows: got.groups, message: got.message };
  },
  get: async (name) => {
    const got = await getGroup(name);
    return { row: got.group, status: got.status, message: got.message };
  },
  notFound: (name) => t.noSuchGroup(name),
};

/**
 * The groups (the page needs manage_groups, which allows all their actions):
 * a page at a time from the server, a lookup by name, delete with a
 * confirmation (the server refuses a group that users or admins still use).
 */
export function Groups({ onOpen }: { onOpen: (name: string | null) => void }) {
  const list = useNamedList(source);
  const { rows, found } = list;
  const { offset } = list.paging;
  const [deleting, setDeleting] = useState<string | null>(null);

  return (
    <>
      <div className="title-row">
        <h1>{t.groups}</h1>
        <button type="button" className="primary" onClick={() => onOpen(null)}>
          {t.addGroup}
        </button>
      </div>
      <FindBar list={list} id="group" label={t.findGroup} />
      {rows && rows.length === 0 && !list.error && <p>{t.noGroups}</p>}
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
                    <OpenLink href={`/web/admin/groups/${encodeURIComponent(g.name)}`} name={g.name} onOpen={onOpen} />
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
      {found === null && <Pager paging={list.paging} hasNext={list.hasNext} />}
      <ConfirmDelete
        name={deleting}
        title={t.deleteGroup}
        onClose={() => setDeleting(null)}
        onConfirm={(name) => {
          list.forget(name);
          void list.act(() => deleteGroup(name), t.groupDeleted(name));
        }}
      >
        {(name) => <p>{t.confirmDeleteGroup(name)}</p>}
      </ConfirmDelete>
    </>
  );
}

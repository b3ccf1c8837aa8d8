import { deleteGroup, getGroup, listGroups, type GroupRow } from './groups-api';
import { NamedList } from './NamedList';
import { t } from './strings';

/**
 * The groups (the page needs manage_groups, which allows all their actions):
 * a page at a time from the server, a lookup by name, delete with a
 * confirmation (the server refuses a group that users or admins still use).
 */
export function Groups({ onOpen }: { onOpen: (name: string | null) => void }) {
  return (
    <NamedList<GroupRow>
      idPrefix="groups"
      texts={{
        title: t.groups,
        add: t.addGroup,
        find: t.findGroup,
        none: t.noGroups,
        noSuch: t.noSuchGroup,
        caption: t.groupsPageOf,
        deleteLabel: t.deleteGroup,
        confirmDelete: t.confirmDeleteGroup,
        deleted: t.groupDeleted,
      }}
      columns={[
        { header: t.description, cell: (g) => g.description },
        { header: t.members, cell: (g) => t.memberCount(g.users?.length ?? 0) },
        { header: t.lastUpdate, cell: (g) => (g.updated_at ? new Date(g.updated_at).toLocaleString() : '') },
      ]}
      nameOf={(g) => g.name}
      hrefOf={(name) => `/web/admin/groups/${encodeURIComponent(name)}`}
      list={async (query) => {
        const got = await listGroups(query);
        return { rows: got.groups, message: got.message };
      }}
      get={async (name) => {
        const got = await getGroup(name);
        return { row: got.group, status: got.status, message: got.message };
      }}
      remove={deleteGroup}
      onOpen={onOpen}
    />
  );
}

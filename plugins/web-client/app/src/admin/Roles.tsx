import { NameAndDescription, NamedForm, useNamedForm } from './NamedForm';
import { NamedList } from './NamedList';
import { createRole, deleteRole, getRole, listRoles, updateRole, type RoleInput, type RoleRow } from './roles-api';
import { adminRoutePath } from './routes';
import { t } from './strings';

const membersOf = (r: RoleRow) => [...(r.admins ?? []).map(t.roleAdminRef), ...(r.users ?? []).map(t.folderUserRef)].join(', ');

/** The roles (admins with "*" and no role): delete with a confirmation (the server refuses a role still given). */
export function Roles({ onOpen }: { onOpen: (name: string | null) => void }) {
  return (
    <NamedList<RoleRow>
      idPrefix="roles"
      texts={{
        title: t.roles,
        add: t.addRole,
        find: t.findRole,
        none: t.noRoles,
        noSuch: t.noSuchRole,
        caption: t.rolesPageOf,
        deleteLabel: t.deleteRole,
        confirmDelete: t.confirmDeleteRole,
        deleted: t.roleDeleted,
      }}
      columns={[
        { header: t.description, cell: (r) => r.description },
        { header: t.givenTo, cell: (r) => membersOf(r) || t.unused },
      ]}
      nameOf={(r) => r.name}
      hrefOf={(name) => adminRoutePath({ kind: 'role', name })}
      list={listRoles}
      get={getRole}
      remove={deleteRole}
      onOpen={onOpen}
    />
  );
}

interface Fields {
  name: string;
  description: string;
}

/** Create (name null) or edit a role: its description (the admins and users it is given to are shown). */
export function RoleForm({ name, onDone, onSaved }: { name: string | null; onDone: () => void; onSaved: (name: string) => void }) {
  const form = useNamedForm<RoleRow, Fields>({
    name,
    empty: { name: '', description: '' },
    get: getRole,
    fieldsOf: (r) => ({ name: r.name, description: r.description ?? '' }),
    save: async (f, base) => {
      const input: RoleInput = { name: f.name.trim(), description: f.description };
      return { failed: base ? await updateRole(base.name, input) : await createRole(input), name: input.name };
    },
    onCreated: onSaved,
    savedText: t.roleSaved,
  });
  const { f, set, base, busy, error } = form;
  return (
    <NamedForm
      title={name === null ? t.newRole : t.editRole(name)}
      backLabel={t.backToRoles}
      onBack={onDone}
      refused={t.roleRefused}
      state={form}
      isNew={name === null}
    >
      {f && (
        <fieldset disabled={busy}>
          <legend>{t.role}</legend>
          <NameAndDescription idPrefix="ro" isNew={name === null} f={f} set={set} error={error} />
          {base && <p data-testid="role-members">{membersOf(base) ? t.givenToList(membersOf(base)) : t.roleUnused}</p>}
        </fieldset>
      )}
    </NamedForm>
  );
}

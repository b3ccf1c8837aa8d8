import { useEffect, useState } from 'react';
import { createAdmin, deleteAdmin, getAdmin, listAdmins, updateAdmin, type AdminInput, type AdminPerm, type AdminRow } from './admins-api';
import { Field } from './Field';
import { names } from './field-message';
import { NamedForm, useNamedForm } from './NamedForm';
import { NamedList } from './NamedList';
import { listRoles } from './roles-api';
import { adminRoutePath } from './routes';
import { t } from './strings';
import { UserGroups, type GroupMapping } from './UserGroups';

/**
 * Every admin permission of the API's type, in the order shown: a record of
 * that type, so the build fails when the API adds or removes one.
 */
const SHOWN: Record<Exclude<AdminPerm, '*'>, true> = {
  view_status: true,
  view_conns: true,
  close_conns: true,
  view_users: true,
  add_users: true,
  edit_users: true,
  del_users: true,
  disable_mfa: true,
  manage_groups: true,
  manage_folders: true,
  quota_scans: true,
  view_defender: true,
  manage_defender: true,
  manage_ip_lists: true,
  view_events: true,
};
const PERMISSIONS = Object.keys(SHOWN) as AdminPerm[];
const permsText = (perms: readonly string[]) => (perms.includes('*') ? t.allPermissions : perms.join(', '));

/** The admins (the "*" permission): a page at a time, delete with a confirmation (the server refuses an admin deleting themself). */
export function Admins({ onOpen }: { onOpen: (name: string | null) => void }) {
  return (
    <NamedList<AdminRow>
      idPrefix="admins"
      texts={{
        title: t.admins,
        add: t.addAdmin,
        find: t.findAdmin,
        none: t.noAdmins,
        noSuch: t.noSuchAdmin,
        caption: t.adminsPageOf,
        deleteLabel: t.deleteAdmin,
        confirmDelete: t.confirmDeleteAdmin,
        deleted: t.adminDeleted,
      }}
      nameHeader={t.username}
      columns={[
        { header: t.status, cell: (a) => (a.status === 1 ? t.enabled : t.disabled) },
        { header: t.email, cell: (a) => a.email },
        { header: t.role, cell: (a) => a.role },
        { header: t.permissions, cell: (a) => permsText(a.permissions) },
      ]}
      nameOf={(a) => a.username}
      hrefOf={(name) => adminRoutePath({ kind: 'admin', name })}
      list={listAdmins}
      get={getAdmin}
      remove={deleteAdmin}
      onOpen={onOpen}
    />
  );
}

interface Fields {
  username: string;
  password: string;
  email: string;
  description: string;
  status: 0 | 1;
  permissions: AdminPerm[];
  allow_list: string;
  role: string;
  /** The groups new users of this admin get, as the user form's rows (type 1 primary, 2 secondary, 3 membership). */
  groups: GroupMapping[];
}

type AdminGroup = NonNullable<AdminInput['groups']>[number];
type AddAs = NonNullable<NonNullable<AdminGroup['options']>['add_to_users_as']>;
/** The API's add_to_users_as (0 membership, 1 primary, 2 secondary) and the user form's group type, both ways. */
const typeOfAddAs = (n: number | undefined): GroupMapping['type'] => (n === 1 ? 1 : n === 2 ? 2 : 3);
const addAsOfType = (type: GroupMapping['type']): AddAs => (type === 1 ? 1 : type === 2 ? 2 : 0);

type Filters = NonNullable<AdminInput['filters']>;
const filtersOf = (a: AdminRow | null): Filters => (a?.filters ?? {}) as Filters;

function inputOf(f: Fields, base: AdminRow | null): AdminInput {
  const input: AdminInput = {
    ...((base ?? {}) as AdminInput),
    username: f.username.trim(),
    email: f.email.trim(),
    description: f.description,
    status: f.status,
    permissions: f.permissions,
    role: f.role.trim(),
    groups: f.groups.map((g) => ({ name: g.name.trim(), options: { add_to_users_as: addAsOfType(g.type) } })).filter((g) => g.name),
    filters: {
      ...filtersOf(base),
      allow_list: f.allow_list
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean),
    },
  };
  if (f.password) input.password = f.password;
  else delete input.password;
  return input;
}

/**
 * Create (name null) or edit an admin: the account, its permissions, the IP
 * addresses it may sign in from, its role (the roles are suggested to an
 * admin who may read them), the groups its new users get. Its other settings are kept on save.
 */
export function AdminForm({
  name,
  canReadRoles,
  onDone,
  onSaved,
}: {
  name: string | null;
  canReadRoles: boolean;
  onDone: () => void;
  onSaved: (name: string) => void;
}) {
  const form = useNamedForm<AdminRow, Fields>({
    name,
    empty: { username: '', password: '', email: '', description: '', status: 1, permissions: [], allow_list: '', role: '', groups: [] },
    get: getAdmin,
    fieldsOf: (a) => ({
      username: a.username,
      password: '',
      email: a.email ?? '',
      description: a.description ?? '',
      status: a.status,
      permissions: a.permissions as AdminPerm[],
      allow_list: (filtersOf(a).allow_list ?? []).join('\n'),
      role: a.role ?? '',
      groups: (a.groups ?? []).map((g) => ({ name: g.name, type: typeOfAddAs((g.options as { add_to_users_as?: number } | undefined)?.add_to_users_as) })),
    }),
    save: async (f, base) => {
      const input = inputOf(f, base);
      return { failed: base ? await updateAdmin(base.username, input) : await createAdmin(input), name: input.username };
    },
    onCreated: onSaved,
    savedText: t.adminSaved,
  });
  const [roles, setRoles] = useState<string[]>([]);
  useEffect(() => {
    if (canReadRoles) void listRoles({ limit: 500 }).then((got) => setRoles((got.rows ?? []).map((r) => r.name)));
  }, [canReadRoles]);
  const { f, set, busy, error } = form;
  const all = f?.permissions.includes('*') ?? false;
  const toggle = (p: AdminPerm, on: boolean) => f && set('permissions', on ? [...f.permissions, p] : f.permissions.filter((x) => x !== p));
  return (
    <NamedForm
      title={name === null ? t.newAdmin : t.editAdmin(name)}
      backLabel={t.backToAdmins}
      onBack={onDone}
      refused={t.adminRefused}
      state={form}
      isNew={name === null}
    >
      {f && (
        <>
          <fieldset disabled={busy}>
            <legend>{t.account}</legend>
            <Field id="ad-username" label={t.username} path="username" error={error}>
              {(c) => (
                <input
                  {...c}
                  required
                  readOnly={name !== null}
                  autoCapitalize="none"
                  spellCheck={false}
                  value={f.username}
                  onChange={(e) => set('username', e.target.value)}
                />
              )}
            </Field>
            <Field id="ad-password" label={name === null ? t.password : t.passwordKeep} path="password" error={error}>
              {(c) => <input {...c} type="password" autoComplete="new-password" value={f.password} onChange={(e) => set('password', e.target.value)} />}
            </Field>
            <Field id="ad-email" label={t.email} path="email" error={error}>
              {(c) => <input {...c} type="email" value={f.email} onChange={(e) => set('email', e.target.value)} />}
            </Field>
            <Field id="ad-description" label={t.description} path="description" error={error}>
              {(c) => <input {...c} value={f.description} onChange={(e) => set('description', e.target.value)} />}
            </Field>
            <Field id="ad-status" label={t.status} path="status" error={error}>
              {(c) => (
                <select {...c} value={f.status} onChange={(e) => set('status', e.target.value === '0' ? 0 : 1)}>
                  <option value="1">{t.enabled}</option>
                  <option value="0">{t.disabled}</option>
                </select>
              )}
            </Field>
            <Field id="ad-role" label={t.role} path="role" error={error} help={t.roleHelp}>
              {(c) => (
                <input
                  {...c}
                  list={roles.length ? 'ad-roles' : undefined}
                  autoCapitalize="none"
                  spellCheck={false}
                  value={f.role}
                  onChange={(e) => set('role', e.target.value)}
                />
              )}
            </Field>
            {roles.length > 0 && (
              <datalist id="ad-roles">
                {roles.map((r) => (
                  <option key={r} value={r} />
                ))}
              </datalist>
            )}
            <Field id="ad-allow_list" label={t.allowedIps} path="filters.allow_list" error={error} help={t.allowedIpsHelp}>
              {(c) => <textarea {...c} rows={3} spellCheck={false} value={f.allow_list} onChange={(e) => set('allow_list', e.target.value)} />}
            </Field>
          </fieldset>
          <fieldset disabled={busy} aria-describedby="ad-perm-help">
            <legend>{t.adminPermissions}</legend>
            <p id="ad-perm-help" className="muted">
              {t.adminPermissionsHelp}
            </p>
            {names(error, 'permissions') && <p className="error">{error}</p>}
            <label className="check">
              <input type="checkbox" checked={all} onChange={(e) => set('permissions', e.target.checked ? ['*'] : [])} />
              {t.allPermissions}
            </label>
            {!all &&
              PERMISSIONS.map((p) => (
                <label className="check" key={p}>
                  <input type="checkbox" checked={f.permissions.includes(p)} onChange={(e) => toggle(p, e.target.checked)} />
                  {p}
                </label>
              ))}
          </fieldset>
          <UserGroups groups={f.groups} onChange={(g) => set('groups', g)} disabled={busy} error={error} suggest help={t.adminGroupsHelp} />
        </>
      )}
    </NamedForm>
  );
}

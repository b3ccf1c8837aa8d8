import { useEffect, useState, type FormEvent } from 'react';
import { userSettingsOf, withUserSettings, type AccountSettings } from './account-settings-model';
import { AccountSettingsSections } from './AccountSettingsSections';
import { Field, Notices } from './Field';
import { PermissionsEditor, permMapOf, permRowsOf, type PermRow } from './PermissionsEditor';
import { can, type AdminSession } from './session';
import { StorageForm } from './StorageForm';
import { adminRoutePath, type AdminRoute } from './routes';
import { emptyStorage, filesystemInputOf, storageFieldsOf, withoutStoredSecrets, type StorageFields } from './storage-model';
import { t } from './strings';
import { UserGroups, type GroupMapping } from './UserGroups';
import { UserUsage } from './UserUsage';
import { createUser, getUser, updateUser, type UserInput, type UserRow } from './users-api';

interface Fields {
  username: string;
  status: 0 | 1;
  password: string;
  email: string;
  description: string;
  home_dir: string;
  perms: PermRow[];
  settings: AccountSettings;
  expiration: string;
  groups: GroupMapping[];
  storage: StorageFields;
}

const empty: Fields = {
  username: '',
  status: 1,
  password: '',
  email: '',
  description: '',
  home_dir: '',
  perms: [{ path: '/', perms: ['*'] }],
  settings: userSettingsOf(null),
  expiration: '',
  groups: [],
  storage: emptyStorage(),
};

/** A date input's value (YYYY-MM-DD, UTC) from Unix milliseconds, and back (the end of that day is not implied: midnight UTC). */
const dateOf = (ms: number | undefined) => (ms ? new Date(ms).toISOString().slice(0, 10) : '');
const msOf = (date: string) => (date ? Date.parse(`${date}T00:00:00Z`) : 0);

function fieldsOf(u: UserRow): Fields {
  return {
    username: u.username,
    status: u.status === 0 ? 0 : 1,
    password: '',
    email: u.email ?? '',
    description: u.description ?? '',
    home_dir: u.home_dir ?? '',
    perms: permRowsOf(u.permissions),
    settings: userSettingsOf(u),
    expiration: dateOf(u.expiration_date),
    groups: (u.groups ?? []).map((g) => ({ ...g })),
    storage: storageFieldsOf(u.filesystem),
  };
}

/**
 * What is a user's own and not copied by a clone: who they are, their password, their home directory
 * (a clone sharing the model's files would see and change them), their usage and dates.
 */
const NOT_CLONED = [
  'id',
  'username',
  'home_dir',
  'password',
  'has_password',
  'used_quota_size',
  'used_quota_files',
  'last_quota_update',
  'used_upload_data_transfer',
  'used_download_data_transfer',
  'created_at',
  'updated_at',
  'last_login',
  'first_download',
  'first_upload',
  'last_password_change',
] as const;
/** Their second factor's secrets, in the filters. */
const NOT_CLONED_FILTERS = ['totp_config', 'recovery_codes'] as const;

/** The user a new one is made from (the API's intent of a clone): every setting but what is the user's own (NOT_CLONED) and their secrets. */
function cloneBaseOf(u: UserRow): UserRow {
  const copy = { ...u } as Record<string, unknown>;
  for (const k of NOT_CLONED) delete copy[k];
  const filters = { ...((u.filters ?? {}) as Record<string, unknown>) };
  for (const k of NOT_CLONED_FILTERS) delete filters[k];
  copy.filters = filters;
  return copy as UserRow;
}

/** The form of a new user cloned from `u`: no username, no password, the storage's secrets to be typed again. */
const cloneFieldsOf = (u: UserRow): Fields => {
  const f = fieldsOf(cloneBaseOf(u));
  return { ...f, username: '', password: '', storage: withoutStoredSecrets(f.storage) };
};

/** The fields the form edits, over the user as read (PUT replaces the whole object: what the form does not show is kept). */
function inputOf(f: Fields, base: UserRow | null): UserInput {
  const input: UserInput = {
    ...((base ?? {}) as UserInput),
    username: f.username.trim(),
    status: f.status,
    email: f.email.trim(),
    description: f.description,
    home_dir: f.home_dir.trim(),
    permissions: permMapOf(f.perms),
    expiration_date: msOf(f.expiration),
    groups: f.groups.map((g) => ({ ...g, name: g.name.trim() })).filter((g) => g.name),
    filesystem: filesystemInputOf(f.storage) as UserInput['filesystem'],
  };
  if (f.password) input.password = f.password;
  else delete input.password;
  return withUserSettings(input, f.settings, base);
}

/** Create (username null) or edit a user: the main fields, permissions per path, expiration, groups, storage on any filesystem provider, limits and quotas, virtual folders, filters. */
export function UserForm({
  session,
  username,
  cloneOf = null,
  go,
  onDone,
  onSaved,
}: {
  session: AdminSession;
  username: string | null;
  /** A new user's form filled from this user. */
  cloneOf?: string | null;
  /** Opens another page (a clone's form, the user's events). */
  go: (to: AdminRoute) => void;
  onDone: () => void;
  onSaved: (username: string) => void;
}) {
  const [base, setBase] = useState<UserRow | null>(null);
  const [f, setF] = useState<Fields | null>(username === null && !cloneOf ? empty : null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [saved, setSaved] = useState('');
  const editable = username === null ? can(session, 'add_users') : can(session, 'edit_users');

  useEffect(() => {
    if (username === null && cloneOf) {
      void getUser(cloneOf).then((got) => {
        if (!got.user) return setError(got.message ?? '');
        setBase(cloneBaseOf(got.user));
        setF(cloneFieldsOf(got.user));
      });
      return;
    }
    if (username === null) return;
    void getUser(username).then((got) => {
      if (got.user) {
        setBase(got.user);
        setF(fieldsOf(got.user));
      } else setError(got.message ?? '');
    });
  }, [username]);

  if (!f) {
    return (
      <>
        <h1>{username ?? t.newUser}</h1>
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : (
          <p aria-busy="true">{t.loading}</p>
        )}
      </>
    );
  }
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => setF({ ...f, [k]: v });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    setSaved('');
    const input = inputOf(f, base);
    const failed = username === null ? await createUser(input) : await updateUser(username, input);
    setBusy(false);
    if (failed) return setError(failed);
    if (username === null) return onSaved(input.username);
    setSaved(t.saved(username));
    const got = await getUser(username);
    if (got.user) {
      setBase(got.user);
      setF(fieldsOf(got.user));
    }
  };

  return (
    <>
      <form className="user-form" onSubmit={(e) => void submit(e)} aria-describedby={error ? 'form-error' : undefined}>
        <div className="title-row">
          <h1>{username === null ? (cloneOf ? t.cloneOfUser(cloneOf) : t.newUser) : t.editUser(username)}</h1>
          {username !== null && can(session, 'view_events') && (
            <a
              className="button"
              href={adminRoutePath({ kind: 'events', username })}
              onClick={(e) => {
                e.preventDefault();
                go({ kind: 'events', username });
              }}
            >
              {t.userEvents}
            </a>
          )}
          {username !== null && can(session, 'add_users') && (
            <button type="button" onClick={() => go({ kind: 'user', username: null, cloneOf: username })}>
              {t.clone}
            </button>
          )}
          <button type="button" onClick={onDone}>
            {t.back}
          </button>
        </div>
        {username === null && cloneOf && (
          <p className="notice" data-testid="clone-note">
            {t.cloneNote(cloneOf)}
          </p>
        )}
        <Notices message={saved} error={error} errorId="form-error" refused={t.fixErrors} />
        <fieldset disabled={!editable || busy}>
          <legend>{t.account}</legend>
          <Field id="u-username" label={t.username} path="username" error={error}>
            {(c) => (
              <input
                {...c}
                required
                readOnly={username !== null}
                autoCapitalize="none"
                spellCheck={false}
                value={f.username}
                onChange={(e) => set('username', e.target.value)}
              />
            )}
          </Field>
          <Field id="u-status" label={t.status} path="status" error={error}>
            {(c) => (
              <select {...c} value={f.status} onChange={(e) => set('status', Number(e.target.value) === 0 ? 0 : 1)}>
                <option value={1}>{t.enabled}</option>
                <option value={0}>{t.disabled}</option>
              </select>
            )}
          </Field>
          <Field id="u-password" label={username === null ? t.password : t.passwordKeep} path="password" error={error}>
            {(c) => <input {...c} type="password" autoComplete="new-password" value={f.password} onChange={(e) => set('password', e.target.value)} />}
          </Field>
          <Field id="u-email" label={t.email} path="email" error={error}>
            {(c) => <input {...c} type="email" value={f.email} onChange={(e) => set('email', e.target.value)} />}
          </Field>
          <Field id="u-description" label={t.description} path="description" error={error}>
            {(c) => <input {...c} value={f.description} onChange={(e) => set('description', e.target.value)} />}
          </Field>
          <Field id="u-expiration_date" label={t.expiration} path="expiration_date" error={error} help={t.expirationHelp}>
            {(c) => <input {...c} type="date" value={f.expiration} onChange={(e) => set('expiration', e.target.value)} />}
          </Field>
        </fieldset>
        <fieldset disabled={!editable || busy}>
          <legend>{t.storage}</legend>
          <StorageForm idPrefix="u" path="filesystem" value={f.storage} error={error} onChange={(v) => set('storage', v)} />
          <Field id="u-home_dir" label={t.homeDir} path="home_dir" error={error}>
            {(c) => <input {...c} spellCheck={false} value={f.home_dir} onChange={(e) => set('home_dir', e.target.value)} />}
          </Field>
        </fieldset>
        <PermissionsEditor
          idPrefix="u"
          rows={f.perms}
          onChange={(rows) => set('perms', rows)}
          disabled={!editable || busy}
          help={t.permissionsHelp}
          path="permissions"
          error={error}
          keepRoot
        />
        <UserGroups
          groups={f.groups}
          onChange={(groups) => set('groups', groups)}
          disabled={!editable || busy}
          error={error}
          suggest={can(session, 'manage_groups')}
        />
        <AccountSettingsSections
          kind="user"
          settings={f.settings}
          onChange={(v) => set('settings', v)}
          error={error}
          disabled={!editable || busy}
          suggestFolders={can(session, 'manage_folders')}
        />
        {editable && (
          <div className="row">
            <button type="submit" className="primary" disabled={busy}>
              {busy ? t.saving : username === null ? t.create : t.save}
            </button>
          </div>
        )}
      </form>
      {username !== null && <UserUsage username={username} mayScan={can(session, 'quota_scans')} />}
    </>
  );
}

import { useEffect, useState, type FormEvent } from 'react';
import { groupSettingsOf, withGroupSettings, type AccountSettings } from './account-settings-model';
import { AccountSettingsSections } from './AccountSettingsSections';
import { Field, Notices } from './Field';
import { NameAndDescription } from './NamedForm';
import { createGroup, getGroup, updateGroup, type GroupInput, type GroupRow, type GroupSettings } from './groups-api';
import { PermissionsEditor, permMapOf, permRowsOf, type PermRow } from './PermissionsEditor';
import { StorageForm } from './StorageForm';
import { emptyStorage, filesystemInputOf, storageFieldsOf, type StorageFields } from './storage-model';
import { can, type AdminSession } from './session';
import { t } from './strings';

interface Fields {
  name: string;
  description: string;
  home_dir: string;
  perms: PermRow[];
  storage: StorageFields;
  settings: AccountSettings;
}

const empty: Fields = {
  name: '',
  description: '',
  home_dir: '',
  perms: [],
  storage: emptyStorage(),
  settings: groupSettingsOf(null),
};

/** The settings of a group as read (the answer's type leaves them open: they are those the API takes). */
const settingsOf = (g: GroupRow | null): GroupSettings => (g?.user_settings ?? {}) as GroupSettings;

function fieldsOf(g: GroupRow): Fields {
  const s = settingsOf(g);
  return {
    name: g.name,
    description: g.description ?? '',
    home_dir: s.home_dir ?? '',
    perms: permRowsOf(s.permissions),
    storage: storageFieldsOf(s.filesystem),
    settings: groupSettingsOf(g),
  };
}

/** The fields the form edits over the group as read (PUT replaces the whole object: what the form does not show is kept). */
function inputOf(f: Fields, base: GroupRow | null): GroupInput {
  const settings: GroupSettings = { ...settingsOf(base), home_dir: f.home_dir.trim(), filesystem: filesystemInputOf(f.storage) as GroupSettings['filesystem'] };
  const permissions = permMapOf(f.perms);
  if (Object.keys(permissions).length) settings.permissions = permissions;
  else delete settings.permissions;
  return withGroupSettings({ ...((base ?? {}) as GroupInput), name: f.name.trim(), description: f.description, user_settings: settings }, f.settings, base);
}

/**
 * Create (name null) or edit a group: its description and what it gives its
 * users (home directory, storage on any filesystem provider, permissions per path,
 * limits and quotas, the expiration of new accounts, virtual folders, filters).
 */
export function GroupForm({
  session,
  name,
  onDone,
  onSaved,
}: {
  session: AdminSession;
  name: string | null;
  onDone: () => void;
  onSaved: (name: string) => void;
}) {
  const [base, setBase] = useState<GroupRow | null>(null);
  const [f, setF] = useState<Fields | null>(name === null ? empty : null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [saved, setSaved] = useState('');

  useEffect(() => {
    if (name === null) return;
    void getGroup(name).then((got) => {
      if (got.group) {
        setBase(got.group);
        setF(fieldsOf(got.group));
      } else setError(got.message ?? '');
    });
  }, [name]);

  if (!f) {
    return (
      <>
        <h1>{name}</h1>
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
    const failed = name === null ? await createGroup(input) : await updateGroup(name, input);
    setBusy(false);
    if (failed) return setError(failed);
    if (name === null) return onSaved(input.name);
    setSaved(t.groupSaved(name));
    const got = await getGroup(name);
    if (got.group) {
      setBase(got.group);
      setF(fieldsOf(got.group));
    }
  };

  return (
    <form className="user-form" onSubmit={(e) => void submit(e)} aria-describedby={error ? 'form-error' : undefined}>
      <div className="title-row">
        <h1>{name === null ? t.newGroup : t.editGroup(name)}</h1>
        <button type="button" onClick={onDone}>
          {t.backToGroups}
        </button>
      </div>
      <Notices message={saved} error={error} errorId="form-error" refused={t.groupRefused} />
      <fieldset disabled={busy}>
        <legend>{t.group}</legend>
        <NameAndDescription idPrefix="g" isNew={name === null} f={f} set={set} error={error} />
        {base && <p data-testid="group-members">{base.users?.length ? t.membersAre(base.users.join(', ')) : t.noMembers}</p>}
      </fieldset>
      <fieldset disabled={busy}>
        <legend>{t.groupSettings}</legend>
        <p className="muted">{t.groupSettingsHelp}</p>
        <StorageForm
          idPrefix="g"
          path="user_settings.filesystem"
          value={f.storage}
          error={error}
          providerHelp={t.groupStorageHelp}
          onChange={(v) => set('storage', v)}
        />
        <Field id="g-home_dir" label={t.homeDir} path="user_settings.home_dir" error={error} help={t.groupHomeHelp}>
          {(c) => <input {...c} spellCheck={false} value={f.home_dir} onChange={(e) => set('home_dir', e.target.value)} />}
        </Field>
      </fieldset>
      <PermissionsEditor
        idPrefix="g"
        rows={f.perms}
        onChange={(rows) => set('perms', rows)}
        disabled={busy}
        help={t.groupPermissionsHelp}
        path="user_settings.permissions"
        error={error}
        keepRoot={false}
      />
      <AccountSettingsSections
        kind="group"
        settings={f.settings}
        onChange={(v) => set('settings', v)}
        error={error}
        disabled={busy}
        suggestFolders={can(session, 'manage_folders')}
      />
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t.saving : name === null ? t.create : t.save}
        </button>
      </div>
    </form>
  );
}

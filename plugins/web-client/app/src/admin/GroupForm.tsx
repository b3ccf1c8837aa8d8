import { useEffect, useState, type FormEvent } from 'react';
import { Field } from './Field';
import { NameAndDescription } from './NamedForm';
import { createGroup, getGroup, updateGroup, type GroupInput, type GroupRow, type GroupSettings } from './groups-api';
import { PermissionsEditor, permMapOf, permRowsOf, type PermRow } from './PermissionsEditor';
import { StorageForm } from './StorageForm';
import { emptyStorage, filesystemInputOf, storageFieldsOf, type StorageFields } from './storage-model';
import { t } from './strings';

/** The numeric settings the form edits (user_settings members; 0: none, or unlimited). */
const NUMBERS = ['quota_size', 'quota_files', 'max_sessions', 'upload_bandwidth', 'download_bandwidth', 'expires_in'] as const;
type NumberKey = (typeof NUMBERS)[number];

interface Fields extends Record<NumberKey, string> {
  name: string;
  description: string;
  home_dir: string;
  perms: PermRow[];
  storage: StorageFields;
}

const empty: Fields = {
  name: '',
  description: '',
  home_dir: '',
  perms: [],
  storage: emptyStorage(),
  ...(Object.fromEntries(NUMBERS.map((k) => [k, '0'])) as Record<NumberKey, string>),
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
    ...(Object.fromEntries(NUMBERS.map((k) => [k, String(s[k] ?? 0)])) as Record<NumberKey, string>),
  };
}

/** The fields the form edits over the group as read (PUT replaces the whole object: the filters and folders are kept). */
function inputOf(f: Fields, base: GroupRow | null): GroupInput {
  const settings: GroupSettings = { ...settingsOf(base), home_dir: f.home_dir.trim(), filesystem: filesystemInputOf(f.storage) as GroupSettings['filesystem'] };
  for (const k of NUMBERS) settings[k] = Number(f[k]) || 0;
  const permissions = permMapOf(f.perms);
  if (Object.keys(permissions).length) settings.permissions = permissions;
  else delete settings.permissions;
  return { ...((base ?? {}) as GroupInput), name: f.name.trim(), description: f.description, user_settings: settings };
}

/**
 * Create (name null) or edit a group: its description and what it gives its
 * users (home directory, storage on any filesystem provider, permissions per path,
 * quotas, sessions, bandwidth, the expiration of new accounts).
 */
export function GroupForm({ name, onDone, onSaved }: { name: string | null; onDone: () => void; onSaved: (name: string) => void }) {
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

  const number = (k: NumberKey, label: string, help?: string) => (
    <Field id={`g-${k}`} label={label} path={`user_settings.${k}`} error={error} help={help}>
      {(c) => <input {...c} type="number" min={0} value={f[k]} onChange={(e) => set(k, e.target.value)} />}
    </Field>
  );

  return (
    <form className="user-form" onSubmit={(e) => void submit(e)} aria-describedby={error ? 'form-error' : undefined}>
      <div className="title-row">
        <h1>{name === null ? t.newGroup : t.editGroup(name)}</h1>
        <button type="button" onClick={onDone}>
          {t.backToGroups}
        </button>
      </div>
      {saved && (
        <p className="notice" role="status">
          {saved}
        </p>
      )}
      {error && (
        <p id="form-error" className="error" role="alert">
          {t.groupRefused} {error}
        </p>
      )}
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
        {number('quota_size', t.quotaSize)}
        {number('quota_files', t.quotaFiles)}
        {number('max_sessions', t.maxSessions)}
        {number('upload_bandwidth', t.uploadBandwidth)}
        {number('download_bandwidth', t.downloadBandwidth)}
        {number('expires_in', t.expiresIn, t.expiresInHelp)}
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
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t.saving : name === null ? t.create : t.save}
        </button>
      </div>
    </form>
  );
}

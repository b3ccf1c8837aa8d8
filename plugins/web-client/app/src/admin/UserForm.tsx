import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { can, type AdminSession } from './session';
import { t } from './strings';
import { createUser, getUser, updateUser, type UserInput, type UserRow } from './users-api';

type Perm = NonNullable<UserInput['permissions']>[string][number];
/** The operations a path may allow (core/src/accounts/permissions.ts USER_PERMISSIONS), '*' aside. */
const OPERATIONS: Perm[] = [
  'list',
  'download',
  'upload',
  'overwrite',
  'delete',
  'delete_files',
  'delete_dirs',
  'rename',
  'rename_files',
  'rename_dirs',
  'create_dirs',
  'create_symlinks',
  'chmod',
  'chown',
  'chtimes',
  'copy',
];
const LOCAL_PROVIDER = 0;
/** Group types of the API: 1 primary, 2 secondary. */
const PRIMARY = 1;
const SECONDARY = 2;

interface PermRow {
  path: string;
  perms: Perm[];
}
interface Fields {
  username: string;
  status: 0 | 1;
  password: string;
  email: string;
  description: string;
  home_dir: string;
  perms: PermRow[];
  quota_size: string;
  quota_files: string;
  expiration: string;
  primary_group: string;
  secondary_groups: string;
}

const empty: Fields = {
  username: '',
  status: 1,
  password: '',
  email: '',
  description: '',
  home_dir: '',
  perms: [{ path: '/', perms: ['*'] }],
  quota_size: '0',
  quota_files: '0',
  expiration: '',
  primary_group: '',
  secondary_groups: '',
};

/** A date input's value (YYYY-MM-DD, UTC) from Unix milliseconds, and back (the end of that day is not implied: midnight UTC). */
const dateOf = (ms: number | undefined) => (ms ? new Date(ms).toISOString().slice(0, 10) : '');
const msOf = (date: string) => (date ? Date.parse(`${date}T00:00:00Z`) : 0);

function fieldsOf(u: UserRow): Fields {
  const groups = u.groups ?? [];
  return {
    username: u.username,
    status: u.status === 0 ? 0 : 1,
    password: '',
    email: u.email ?? '',
    description: u.description ?? '',
    home_dir: u.home_dir ?? '',
    perms: Object.entries(u.permissions ?? {}).map(([path, perms]) => ({ path, perms: [...perms] as Perm[] })),
    quota_size: String(u.quota_size ?? 0),
    quota_files: String(u.quota_files ?? 0),
    expiration: dateOf(u.expiration_date),
    primary_group: groups.find((g) => g.type === PRIMARY)?.name ?? '',
    secondary_groups: groups
      .filter((g) => g.type === SECONDARY)
      .map((g) => g.name)
      .join(', '),
  };
}

/** The fields the form edits, over the user as read (PUT replaces the whole object: what the form does not show is kept). */
function inputOf(f: Fields, base: UserRow | null): UserInput {
  const others = (base?.groups ?? []).filter((g) => g.type !== PRIMARY && g.type !== SECONDARY);
  const secondary = f.secondary_groups
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((name) => ({ name, type: SECONDARY as 2 }));
  const input: UserInput = {
    ...((base ?? {}) as UserInput),
    username: f.username.trim(),
    status: f.status,
    email: f.email.trim(),
    description: f.description,
    home_dir: f.home_dir.trim(),
    permissions: Object.fromEntries(f.perms.filter((r) => r.path.trim()).map((r) => [r.path.trim(), r.perms])),
    quota_size: Number(f.quota_size) || 0,
    quota_files: Number(f.quota_files) || 0,
    expiration_date: msOf(f.expiration),
    groups: [...(f.primary_group.trim() ? [{ name: f.primary_group.trim(), type: PRIMARY as 1 }] : []), ...secondary, ...others],
    ...(base ? {} : { filesystem: { provider: LOCAL_PROVIDER } as UserInput['filesystem'] }),
  };
  if (f.password) input.password = f.password;
  else delete input.password;
  return input;
}

/** The field a validation message of the API names ("\"email\" must be a valid email", "permissions for \"/\"..."), if any. */
export function fieldOfMessage(message: string): string | null {
  const m = /"([a-z_]+)(?:[.[][^"]*)?"/.exec(message);
  return m ? m[1]! : null;
}

/** Create (username null) or edit a user: the main fields, permissions per path, quotas, expiration, groups, local storage. */
export function UserForm({
  session,
  username,
  onDone,
  onSaved,
}: {
  session: AdminSession;
  username: string | null;
  onDone: () => void;
  onSaved: (username: string) => void;
}) {
  const [base, setBase] = useState<UserRow | null>(null);
  const [f, setF] = useState<Fields | null>(username === null ? empty : null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [saved, setSaved] = useState('');
  const editable = username === null ? can(session, 'add_users') : can(session, 'edit_users');

  useEffect(() => {
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
        <h1>{username}</h1>
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
  const setPerm = (i: number, row: PermRow) =>
    set(
      'perms',
      f.perms.map((r, j) => (j === i ? row : r)),
    );
  const errorField = error ? fieldOfMessage(error) : null;
  const provider = (base?.filesystem as { provider?: number } | undefined)?.provider ?? LOCAL_PROVIDER;

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

  /** A labelled control with the API's message when it names this field. */
  const field = (id: keyof Fields | 'permissions' | 'groups' | 'expiration_date', label: string, control: (described?: string) => ReactNode, help?: string) => {
    const bad = errorField === id;
    const described = [help ? `${id}-help` : '', bad ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
    return (
      <div className="field">
        <label htmlFor={`u-${id}`}>{label}</label>
        {control(described)}
        {help && (
          <small id={`${id}-help`} className="muted">
            {help}
          </small>
        )}
        {bad && (
          <small id={`${id}-error`} className="error">
            {error}
          </small>
        )}
      </div>
    );
  };

  return (
    <form className="user-form" onSubmit={(e) => void submit(e)} aria-describedby={error ? 'form-error' : undefined}>
      <div className="title-row">
        <h1>{username === null ? t.newUser : t.editUser(username)}</h1>
        <button type="button" onClick={onDone}>
          {t.back}
        </button>
      </div>
      {saved && (
        <p className="notice" role="status">
          {saved}
        </p>
      )}
      {error && (
        <p id="form-error" className="error" role="alert">
          {t.fixErrors} {error}
        </p>
      )}
      <fieldset disabled={!editable || busy}>
        <legend>{t.account}</legend>
        {field('username', t.username, (d) => (
          <input
            id="u-username"
            required
            readOnly={username !== null}
            autoCapitalize="none"
            spellCheck={false}
            aria-describedby={d}
            aria-invalid={errorField === 'username' || undefined}
            value={f.username}
            onChange={(e) => set('username', e.target.value)}
          />
        ))}
        {field('status', t.status, () => (
          <select id="u-status" value={f.status} onChange={(e) => set('status', Number(e.target.value) === 0 ? 0 : 1)}>
            <option value={1}>{t.enabled}</option>
            <option value={0}>{t.disabled}</option>
          </select>
        ))}
        {field('password', username === null ? t.password : t.passwordKeep, (d) => (
          <input
            id="u-password"
            type="password"
            autoComplete="new-password"
            aria-describedby={d}
            aria-invalid={errorField === 'password' || undefined}
            value={f.password}
            onChange={(e) => set('password', e.target.value)}
          />
        ))}
        {field('email', t.email, (d) => (
          <input
            id="u-email"
            type="email"
            aria-describedby={d}
            aria-invalid={errorField === 'email' || undefined}
            value={f.email}
            onChange={(e) => set('email', e.target.value)}
          />
        ))}
        {field('description', t.description, (d) => (
          <input id="u-description" aria-describedby={d} value={f.description} onChange={(e) => set('description', e.target.value)} />
        ))}
        {field(
          'expiration_date',
          t.expiration,
          (d) => (
            <input id="u-expiration_date" type="date" aria-describedby={d} value={f.expiration} onChange={(e) => set('expiration', e.target.value)} />
          ),
          t.expirationHelp,
        )}
      </fieldset>
      <fieldset disabled={!editable || busy}>
        <legend>{t.storage}</legend>
        <p>{provider === LOCAL_PROVIDER ? t.localFs : t.otherProvider(provider)}</p>
        {field('home_dir', t.homeDir, (d) => (
          <input
            id="u-home_dir"
            spellCheck={false}
            aria-describedby={d}
            aria-invalid={errorField === 'home_dir' || undefined}
            value={f.home_dir}
            onChange={(e) => set('home_dir', e.target.value)}
          />
        ))}
        {field('quota_size', t.quotaSize, (d) => (
          <input id="u-quota_size" type="number" min={0} aria-describedby={d} value={f.quota_size} onChange={(e) => set('quota_size', e.target.value)} />
        ))}
        {field('quota_files', t.quotaFiles, (d) => (
          <input id="u-quota_files" type="number" min={0} aria-describedby={d} value={f.quota_files} onChange={(e) => set('quota_files', e.target.value)} />
        ))}
      </fieldset>
      <fieldset disabled={!editable || busy} aria-describedby="perm-help">
        <legend>{t.permissions}</legend>
        <p id="perm-help" className="muted">
          {t.permissionsHelp}
        </p>
        {errorField === 'permissions' && <p className="error">{error}</p>}
        {f.perms.map((row, i) => (
          <div className="perm-row" key={i} role="group" aria-label={`${t.permissions} ${row.path}`}>
            <label htmlFor={`perm-path-${i}`}>{t.path}</label>
            <input id={`perm-path-${i}`} value={row.path} spellCheck={false} onChange={(e) => setPerm(i, { ...row, path: e.target.value })} />
            <label className="check">
              <input type="checkbox" checked={row.perms.includes('*')} onChange={(e) => setPerm(i, { ...row, perms: e.target.checked ? ['*'] : [] })} />
              {t.all}
            </label>
            {!row.perms.includes('*') &&
              OPERATIONS.map((op) => (
                <label className="check" key={op}>
                  <input
                    type="checkbox"
                    checked={row.perms.includes(op)}
                    onChange={(e) => setPerm(i, { ...row, perms: e.target.checked ? [...row.perms, op] : row.perms.filter((p) => p !== op) })}
                  />
                  {op}
                </label>
              ))}
            {row.path !== '/' && (
              <button
                type="button"
                aria-label={t.removePath(row.path)}
                onClick={() =>
                  set(
                    'perms',
                    f.perms.filter((_, j) => j !== i),
                  )
                }
              >
                ×
              </button>
            )}
          </div>
        ))}
        <button type="button" onClick={() => set('perms', [...f.perms, { path: '', perms: ['list', 'download'] }])}>
          {t.addPath}
        </button>
      </fieldset>
      <fieldset disabled={!editable || busy}>
        <legend>{t.groups}</legend>
        {errorField === 'groups' && <p className="error">{error}</p>}
        {field('primary_group', t.primaryGroup, () => (
          <input id="u-primary_group" spellCheck={false} value={f.primary_group} onChange={(e) => set('primary_group', e.target.value)} />
        ))}
        {field('secondary_groups', t.secondaryGroups, () => (
          <input id="u-secondary_groups" spellCheck={false} value={f.secondary_groups} onChange={(e) => set('secondary_groups', e.target.value)} />
        ))}
      </fieldset>
      {editable && (
        <div className="row">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t.saving : username === null ? t.create : t.save}
          </button>
        </div>
      )}
    </form>
  );
}

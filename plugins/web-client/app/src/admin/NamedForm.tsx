import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { Field, Notices } from './Field';
import { t } from './strings';

/**
 * The state of the form of a named object (virtual folder, admin, role):
 * the object as read (null for a new one), the edited fields, and the save
 * (create, or PUT of the whole object; the object read again after).
 */
export function useNamedForm<Row, Fields>({
  name,
  empty,
  get,
  fieldsOf,
  save,
  onCreated,
  savedText,
}: {
  name: string | null;
  empty: Fields;
  get: (name: string) => Promise<{ row?: Row; message?: string }>;
  fieldsOf: (row: Row) => Fields;
  /** Creates (base null) or updates; null when done, else the API's message. */
  save: (f: Fields, base: Row | null) => Promise<{ failed: string | null; name: string }>;
  onCreated: (name: string) => void;
  savedText: (name: string) => string;
}) {
  const [base, setBase] = useState<Row | null>(null);
  const [f, setF] = useState<Fields | null>(name === null ? empty : null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [saved, setSaved] = useState('');

  const reload = async (n: string) => {
    const got = await get(n);
    if (got.row) {
      setBase(got.row);
      setF(fieldsOf(got.row));
    } else setError(got.message ?? '');
  };
  useEffect(() => {
    if (name !== null) void reload(name);
  }, [name]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!f) return;
    setBusy(true);
    setError('');
    setSaved('');
    const done = await save(f, base);
    setBusy(false);
    if (done.failed) return setError(done.failed);
    if (name === null) return onCreated(done.name);
    setSaved(savedText(name));
    await reload(name);
  };
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => setF((old) => (old ? { ...old, [k]: v } : old));
  return { base, f, set, busy, error, saved, submit };
}

/** The form's frame: its title and way back, what was saved or refused, the fields, the submit button (a loading state until the object is read). */
export function NamedForm({
  title,
  backLabel,
  onBack,
  refused,
  state,
  isNew,
  children,
}: {
  title: string;
  backLabel: string;
  onBack: () => void;
  /** The sentence before the API's message. */
  refused: string;
  state: { f: unknown; busy: boolean; error: string; saved: string; submit: (e: FormEvent) => Promise<void> };
  isNew: boolean;
  children: ReactNode;
}) {
  const { busy, error, saved } = state;
  if (!state.f) {
    return (
      <>
        <h1>{title}</h1>
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
  return (
    <form className="user-form" onSubmit={(e) => void state.submit(e)} aria-describedby={error ? 'form-error' : undefined}>
      <div className="title-row">
        <h1>{title}</h1>
        <button type="button" onClick={onBack}>
          {backLabel}
        </button>
      </div>
      <Notices message={saved} error={error} errorId="form-error" refused={refused} />
      {children}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t.saving : isNew ? t.create : t.save}
        </button>
      </div>
    </form>
  );
}

/**
 * The name (fixed once the object exists) and description fields a named
 * object's form starts with; `idPrefix` keeps the ids of the page unique.
 */
export function NameAndDescription({
  idPrefix,
  isNew,
  f,
  set,
  error,
}: {
  idPrefix: string;
  isNew: boolean;
  f: { name: string; description: string };
  set: (k: 'name' | 'description', v: string) => void;
  error: string;
}) {
  return (
    <>
      <Field id={`${idPrefix}-name`} label={t.name} path="name" error={error}>
        {(c) => (
          <input {...c} required readOnly={!isNew} autoCapitalize="none" spellCheck={false} value={f.name} onChange={(e) => set('name', e.target.value)} />
        )}
      </Field>
      <Field id={`${idPrefix}-description`} label={t.description} path="description" error={error}>
        {(c) => <input {...c} value={f.description} onChange={(e) => set('description', e.target.value)} />}
      </Field>
    </>
  );
}

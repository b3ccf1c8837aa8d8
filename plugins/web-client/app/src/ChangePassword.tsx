import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { changePassword } from './session';
import { t } from './strings';

/**
 * The password change form's fields and checks (current, new, new again; PUT /api/v2/user/changepwd):
 * the page a session must pass first (ChangePassword) and the profile's section share it.
 * `buttons` go before the submit button; `autoFocus` puts the focus on the current password.
 */
export function PasswordChangeFields({
  onChanged,
  buttons,
  autoFocus,
  idPrefix = '',
  change = changePassword,
}: {
  onChanged: () => void;
  /** The change itself: the user's route by default; the web admin gives its own. */
  change?: (current: string, next: string) => Promise<string | null>;
  buttons?: ReactNode;
  autoFocus?: boolean;
  idPrefix?: string;
}) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (autoFocus) first.current?.focus();
  }, [autoFocus]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (next !== again) return setError(t.passwordsDiffer);
    if (next === current) return setError(t.passwordSameAsOld);
    setBusy(true);
    setError('');
    const problem = await change(current, next);
    setBusy(false);
    if (problem === null) return onChanged();
    setError(t.passwordChangeFailed(problem));
  };

  const field = (id: string, label: string, value: string, set: (v: string) => void, autoComplete: string) => (
    <>
      <label htmlFor={idPrefix + id}>{label}</label>
      <input
        id={idPrefix + id}
        ref={id === 'current-password' ? first : undefined}
        type="password"
        autoComplete={autoComplete}
        required
        value={value}
        onChange={(e) => set(e.target.value)}
      />
    </>
  );

  return (
    <form className="stack" onSubmit={(e) => void submit(e)}>
      {field('current-password', t.currentPassword, current, setCurrent, 'current-password')}
      {field('new-password', t.newPassword, next, setNext, 'new-password')}
      {field('confirm-password', t.confirmPassword, again, setAgain, 'new-password')}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        {buttons}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t.changingPassword : t.changePassword}
        </button>
      </div>
    </form>
  );
}

/** The password change a session must make first (password_change_required): current, new, new again. */
export function ChangePassword({
  onChanged,
  onCancel,
  change,
}: {
  onChanged: () => void;
  onCancel: () => void;
  change?: (current: string, next: string) => Promise<string | null>;
}) {
  return (
    <main className="center">
      <div className="card login">
        <h1>{t.changePasswordTitle}</h1>
        <p>{t.changePasswordHelp}</p>
        <PasswordChangeFields
          autoFocus
          onChanged={onChanged}
          {...(change ? { change } : {})}
          buttons={
            <button type="button" onClick={onCancel}>
              {t.logout}
            </button>
          }
        />
      </div>
    </main>
  );
}

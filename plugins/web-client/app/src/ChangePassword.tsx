import { useEffect, useRef, useState, type FormEvent } from 'react';
import { changePassword } from './session';
import { t } from './strings';

/**
 * The password change a session must make first (password_change_required): current, new, new again.
 * The user's route by default; the web admin gives its own `change`.
 */
export function ChangePassword({
  onChanged,
  onCancel,
  change = changePassword,
}: {
  onChanged: () => void;
  onCancel: () => void;
  change?: (current: string, next: string) => Promise<string | null>;
}) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

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
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
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
    <main className="center">
      <form className="card login" onSubmit={(e) => void submit(e)}>
        <h1>{t.changePasswordTitle}</h1>
        <p>{t.changePasswordHelp}</p>
        {field('current-password', t.currentPassword, current, setCurrent, 'current-password')}
        {field('new-password', t.newPassword, next, setNext, 'new-password')}
        {field('confirm-password', t.confirmPassword, again, setAgain, 'new-password')}
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <div className="row">
          <button type="button" onClick={onCancel}>
            {t.logout}
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t.changingPassword : t.changePassword}
          </button>
        </div>
      </form>
    </main>
  );
}

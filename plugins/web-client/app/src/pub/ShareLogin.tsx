import { useState, type FormEvent } from 'react';
import { t } from '../strings';
import { openShare, requestCode, type ShareState } from './shareApi';

/** What a refused password or code says (the share's own refusals are shown by the page). */
function loginError(s: ShareState, byCode: boolean): string {
  if (s.kind === 'credentials') return byCode ? t.pubWrongCode : t.pubWrongPassword;
  if (s.kind === 'error') return s.status === 429 ? t.tooManyAttempts : t.unexpected(s.status);
  return '';
}

/**
 * The credentials a protected share asks for: its password, or for an
 * email-restricted share an address, then the one-time code mailed to it.
 * `onAnswer` gets the share's answer when it is not a wrong credential.
 */
export function ShareLogin({ id, password, emailCodes, onAnswer }: { id: string; password: boolean; emailCodes: boolean; onAnswer: (s: ShareState) => void }) {
  const [mode, setMode] = useState<'password' | 'email' | 'code'>(password ? 'password' : 'email');
  const [value, setValue] = useState('');
  const [email, setEmail] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    setBusy(true);
    setError('');
    try {
      if (mode === 'email') {
        const refused = await requestCode(id, value.trim());
        if (refused) return setError(refused);
        setEmail(value.trim());
        setValue('');
        setMode('code');
        return;
      }
      const s = await openShare(id, mode === 'password' ? { password: value } : { email, code: value.trim() });
      const wrong = loginError(s, mode === 'code');
      if (wrong) {
        setValue('');
        return setError(wrong);
      }
      onAnswer(s);
    } catch {
      setError(t.networkError);
    } finally {
      setBusy(false);
    }
  };

  const field =
    mode === 'password'
      ? { id: 'share-password', label: t.password, type: 'password', autoComplete: 'current-password', help: t.pubPasswordHelp }
      : mode === 'email'
        ? { id: 'share-email', label: t.pubEmail, type: 'email', autoComplete: 'email', help: t.pubEmailHelp }
        : { id: 'share-code', label: t.pubCode, type: 'text', autoComplete: 'one-time-code', help: t.pubCodeHelp(email) };

  return (
    <main id="content" className="center">
      <form className="card" onSubmit={(e) => void submit(e)} aria-describedby="share-login-help">
        <h1>{t.pubPasswordTitle}</h1>
        <p id="share-login-help">{field.help}</p>
        <label htmlFor={field.id}>{field.label}</label>
        <input
          id={field.id}
          key={field.id}
          name={field.id}
          type={field.type}
          autoComplete={field.autoComplete}
          spellCheck={false}
          autoFocus
          required
          value={value}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'share-login-error' : undefined}
          onChange={(e) => setValue(e.target.value)}
        />
        {error && (
          <p id="share-login-error" className="error" role="alert">
            {error}
          </p>
        )}
        <div className="row">
          {mode === 'code' && (
            <button
              type="button"
              onClick={() => {
                setMode('email');
                setValue(email);
                setError('');
              }}
            >
              {t.pubOtherAddress}
            </button>
          )}
          {password && emailCodes && mode === 'password' && (
            <button type="button" onClick={() => setMode('email')}>
              {t.pubSendCode}
            </button>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t.pubOpening : mode === 'email' ? t.pubSendCode : t.pubOpen}
          </button>
        </div>
      </form>
    </main>
  );
}

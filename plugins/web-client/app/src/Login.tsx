import { useEffect, useRef, useState, type FormEvent } from 'react';
import { login, type Session, type SignIn } from './session';
import { t } from './strings';

/**
 * Sign-in: username and password, then the passcode step when the account has two-factor
 * authentication. The user's by default; the web admin gives its own `signIn` and `title`.
 */
export function Login<S = Session>({ notice, onSignedIn, signIn, title }: { notice: string; onSignedIn: (s: S) => void; signIn?: SignIn<S>; title?: string }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [passcode, setPasscode] = useState('');
  const [step, setStep] = useState<'password' | 'passcode'>('password');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const passcodeRef = useRef<HTMLInputElement>(null);
  const usernameRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    (step === 'passcode' ? passcodeRef : usernameRef).current?.focus();
  }, [step]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    const out = await (signIn ?? (login as unknown as SignIn<S>))(username, password, step === 'passcode' ? passcode : undefined);
    setBusy(false);
    if (out.kind === 'ok') return onSignedIn(out.session);
    if (out.kind === 'two-factor') {
      setStep('passcode');
      return;
    }
    setError(out.message);
    if (step === 'passcode') {
      setPasscode('');
      passcodeRef.current?.focus();
    }
  };

  return (
    <main className="center">
      <form className="card login" onSubmit={(e) => void submit(e)} aria-describedby={error ? 'login-error' : undefined}>
        <h1>{step === 'password' ? (title ?? t.loginTitle) : t.passcodeTitle}</h1>
        {notice && !error && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        {step === 'password' ? (
          <>
            <label htmlFor="username">{t.username}</label>
            <input
              id="username"
              ref={usernameRef}
              name="username"
              autoComplete="username"
              autoCapitalize="none"
              spellCheck={false}
              required
              value={username}
              onChange={(e) => setUsername(e.target.value)}
            />
            <label htmlFor="password">{t.password}</label>
            <input
              id="password"
              name="password"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </>
        ) : (
          <>
            <p id="passcode-help">{t.passcodeHelp}</p>
            <label htmlFor="passcode">{t.passcode}</label>
            <input
              id="passcode"
              ref={passcodeRef}
              name="passcode"
              autoComplete="one-time-code"
              inputMode="text"
              spellCheck={false}
              required
              aria-describedby="passcode-help"
              value={passcode}
              onChange={(e) => setPasscode(e.target.value.trim())}
            />
          </>
        )}
        {error && (
          <p id="login-error" className="error" role="alert">
            {error}
          </p>
        )}
        <div className="row">
          {step === 'passcode' && (
            <button
              type="button"
              onClick={() => {
                setStep('password');
                setPasscode('');
                setError('');
              }}
            >
              {t.back}
            </button>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t.signingIn : step === 'password' ? t.signIn : t.verify}
          </button>
        </div>
      </form>
    </main>
  );
}

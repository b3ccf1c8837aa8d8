import { useEffect, useRef, useState, type FormEvent } from 'react';
import { forgotPassword, login, loginOptions, oidcLoginUrl, resetPassword, type AccountKind, type Session, type SignIn } from './session';
import { t } from './strings';

type Step = 'password' | 'passcode' | 'forgot' | 'reset';

/**
 * The reason of a refused single sign-on: the OIDC callback sends the browser back to the sign-in page
 * with `#sso-error=<reason>` (a fragment: never sent to a server). Read once, then removed from the URL.
 */
function ssoRefusal(): string {
  const m = /^#sso-error=(.*)$/s.exec(window.location.hash);
  if (!m) return '';
  history.replaceState(history.state, '', window.location.pathname + window.location.search);
  let reason: string;
  try {
    reason = decodeURIComponent(m[1]!);
  } catch {
    reason = m[1]!;
  }
  return t.ssoRefused(reason.slice(0, 500));
}

/**
 * Sign-in: username and password, then the passcode step when the account has two-factor authentication;
 * the single sign-on button when the binding has an OpenID provider; "forgot password" (a code by email,
 * then the code and a new password) when the server can send mail.
 *
 * The user's by default; the web admin gives its own `signIn` and `title`, and `kind` 'admin' (the
 * password reset and single sign-on of an admin account).
 */
export function Login<S = Session>({
  notice,
  onSignedIn,
  signIn,
  title: passwordTitle,
  kind = 'user',
}: {
  notice: string;
  onSignedIn: (s: S) => void;
  signIn?: SignIn<S>;
  title?: string;
  kind?: AccountKind;
}) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [passcode, setPasscode] = useState('');
  const [code, setCode] = useState('');
  const [again, setAgain] = useState('');
  const [step, setStep] = useState<Step>('password');
  const [busy, setBusy] = useState(false);
  // a single sign-on the server refused comes back here with its reason (see ssoRefusal)
  const [error, setError] = useState(() => ssoRefusal());
  const [info, setInfo] = useState('');
  const [options, setOptions] = useState({ password_reset: false, oidc: false });
  const passcodeRef = useRef<HTMLInputElement>(null);
  const usernameRef = useRef<HTMLInputElement>(null);
  const codeRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    void loginOptions().then(setOptions);
  }, []);
  useEffect(() => {
    (step === 'passcode' ? passcodeRef : step === 'reset' ? codeRef : usernameRef).current?.focus();
  }, [step]);

  const goTo = (s: Step, message = '') => {
    setStep(s);
    setError('');
    setInfo(message);
    setPasscode('');
    if (s !== 'password') setPassword('');
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    if (step === 'forgot') {
      const problem = await forgotPassword(username, kind);
      setBusy(false);
      if (problem) return setError(problem);
      setCode('');
      setAgain('');
      return goTo('reset', t.codeSent);
    }
    if (step === 'reset') {
      if (password !== again) {
        setBusy(false);
        return setError(t.passwordsDiffer);
      }
      const problem = await resetPassword(username, code.trim(), password, kind);
      setBusy(false);
      if (problem) return setError(t.resetFailed(problem));
      return goTo('password', t.passwordReset);
    }
    const out = await (signIn ?? (login as unknown as SignIn<S>))(username, password, step === 'passcode' ? passcode : undefined);
    setBusy(false);
    if (out.kind === 'ok') return onSignedIn(out.session);
    if (out.kind === 'two-factor') {
      setInfo('');
      setStep('passcode');
      return;
    }
    setError(out.message);
    if (step === 'passcode') {
      setPasscode('');
      passcodeRef.current?.focus();
    }
  };

  const title = { password: passwordTitle ?? t.loginTitle, passcode: t.passcodeTitle, forgot: t.forgotTitle, reset: t.forgotTitle }[step];
  const submitLabel = busy
    ? step === 'forgot'
      ? t.sendingCode
      : t.signingIn
    : { password: t.signIn, passcode: t.verify, forgot: t.sendCode, reset: t.resetPassword }[step];
  const message = info || (step === 'password' ? notice : '');

  const usernameField = (
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
    </>
  );
  const passwordField = (id: string, label: string, value: string, set: (v: string) => void, autoComplete: string) => (
    <>
      <label htmlFor={id}>{label}</label>
      <input id={id} name={id} type="password" autoComplete={autoComplete} required value={value} onChange={(e) => set(e.target.value)} />
    </>
  );

  return (
    <main className="center">
      <div className="card login">
        <form className="stack" onSubmit={(e) => void submit(e)} aria-describedby={error ? 'login-error' : undefined}>
          <h1>{title}</h1>
          {message && !error && (
            <p className="notice" role="status">
              {message}
            </p>
          )}
          {step === 'password' && (
            <>
              {usernameField}
              {passwordField('password', t.password, password, setPassword, 'current-password')}
            </>
          )}
          {step === 'passcode' && (
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
          {step === 'forgot' && (
            <>
              <p>{t.forgotHelp}</p>
              {usernameField}
            </>
          )}
          {step === 'reset' && (
            <>
              <label htmlFor="reset-code">{t.resetCode}</label>
              <input
                id="reset-code"
                ref={codeRef}
                name="code"
                autoComplete="one-time-code"
                autoCapitalize="characters"
                spellCheck={false}
                required
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
              {passwordField('reset-password', t.newPassword, password, setPassword, 'new-password')}
              {passwordField('reset-password-again', t.confirmPassword, again, setAgain, 'new-password')}
            </>
          )}
          {error && (
            <p id="login-error" className="error" role="alert">
              {error}
            </p>
          )}
          <div className="row">
            {step !== 'password' && (
              <button type="button" onClick={() => goTo('password')}>
                {t.back}
              </button>
            )}
            <button type="submit" className="primary" disabled={busy}>
              {submitLabel}
            </button>
          </div>
        </form>
        {step === 'password' && options.password_reset && (
          <button type="button" className="linkish" onClick={() => goTo('forgot')}>
            {t.forgotPassword}
          </button>
        )}
        {step === 'password' && options.oidc && (
          <>
            <p className="separator">{t.orSeparator}</p>
            <a className="button sso" href={oidcLoginUrl(kind)}>
              {t.signInOidc}
            </a>
          </>
        )}
      </div>
    </main>
  );
}

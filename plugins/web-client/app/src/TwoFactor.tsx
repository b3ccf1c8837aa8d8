/**
 * The two-factor section of a profile, the web client's and the web admin's
 * (each gives its calls, two-factor-api.ts): enrolment (a configuration, a
 * new secret shown as a QR code and as text, the protocols for a user, a code
 * check, then the save), the recovery codes shown once with a download, their
 * regeneration, and turning 2FA off.
 */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Dialog } from './Dialog';
import { MFA_PROTOCOLS, type Enrolment, type MfaProtocol, type TotpConfig, type TwoFactorApi, type TwoFactorState } from './two-factor-api';
import { QrCode } from './QrCode';
import { t } from './strings';

const protocolList = (ps: readonly string[]) => ps.map((p) => t.protocolNames[p] ?? p).join(', ');

/** The recovery codes, shown once: a list, a .txt download (a Blob link) and a button that closes them. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const [href, setHref] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    const url = URL.createObjectURL(new Blob([codes.join('\n') + '\n'], { type: 'text/plain' }));
    setHref(url);
    heading.current?.focus();
    return () => URL.revokeObjectURL(url);
  }, [codes]);
  return (
    <section className="recovery" aria-labelledby="recovery-title">
      <h3 id="recovery-title" ref={heading} tabIndex={-1}>
        {t.recoveryTitle}
      </h3>
      <p>{t.recoveryHelp}</p>
      <ul className="codes" aria-label={t.recoveryList}>
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="row">
        {href && (
          <a className="button" href={href} download={t.recoveryFile}>
            {t.downloadRecovery}
          </a>
        )}
        <button type="button" className="primary" onClick={onDone}>
          {t.recoveryDone}
        </button>
      </div>
    </section>
  );
}

/** Enrolment: configuration, generate, QR code and secret, protocols, code check, save. */
function Enrol({ state, api, onEnabled, onCancel }: { state: TwoFactorState | undefined; api: TwoFactorApi; onEnabled: () => void; onCancel: () => void }) {
  const required = (state?.required_protocols ?? []) as MfaProtocol[];
  const [configs, setConfigs] = useState<TotpConfig[]>([]);
  const [configName, setConfigName] = useState('');
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [protocols, setProtocols] = useState<MfaProtocol[]>(() => [...new Set<MfaProtocol>(['HTTP', ...required])]);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const codeRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    let live = true;
    void api.configs().then((c) => {
      if (!live) return;
      if (typeof c === 'string') return setError(c);
      setConfigs(c);
      setConfigName((n) => n || c[0]?.name || '');
    });
    return () => {
      live = false;
    };
  }, []);

  const generate = async () => {
    setBusy(true);
    setError('');
    const e = await api.generate(configName);
    setBusy(false);
    if (typeof e === 'string') return setError(e);
    setEnrolment(e);
  };
  useEffect(() => {
    if (enrolment) codeRef.current?.focus();
  }, [enrolment]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!enrolment) return void generate();
    setBusy(true);
    setError('');
    const problem = (await api.validate(enrolment, code)) ?? (await api.enable(enrolment, protocols));
    setBusy(false);
    if (problem) {
      setError(problem);
      setCode('');
      codeRef.current?.focus();
      return;
    }
    onEnabled();
  };

  const toggle = (p: MfaProtocol, on: boolean) => setProtocols((ps) => (on ? [...ps, p] : ps.filter((x) => x !== p)));

  return (
    <form className="stack" onSubmit={(e) => void submit(e)}>
      {!enrolment ? (
        <>
          {configs.length > 1 && (
            <>
              <label htmlFor="totp-config">{t.totpConfig}</label>
              <select id="totp-config" value={configName} onChange={(e) => setConfigName(e.target.value)}>
                {configs.map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name} ({c.issuer})
                  </option>
                ))}
              </select>
            </>
          )}
          <div className="row">
            <button type="button" onClick={onCancel}>
              {t.cancel}
            </button>
            <button type="submit" className="primary" disabled={busy || !configName}>
              {t.continue}
            </button>
          </div>
        </>
      ) : (
        <>
          <p>{t.scanQr}</p>
          <div className="enrol">
            <QrCode text={enrolment.url} label={t.totpQrLabel} />
            <div className="stack">
              <span className="label" id="totp-secret-label">
                {t.secretLabel}
              </span>
              <code className="secret" aria-labelledby="totp-secret-label" data-testid="totp-secret">
                {enrolment.secret}
              </code>
            </div>
          </div>
          {api.protocols && (
            <fieldset>
              <legend>{t.protocolsLegend}</legend>
              {MFA_PROTOCOLS.map((p) => (
                <label key={p} className="check">
                  <input type="checkbox" checked={protocols.includes(p)} disabled={required.includes(p)} onChange={(e) => toggle(p, e.target.checked)} />
                  {t.protocolNames[p] ?? p} {required.includes(p) && <span className="muted">{t.protocolRequired}</span>}
                </label>
              ))}
            </fieldset>
          )}
          <label htmlFor="totp-code">{t.checkCode}</label>
          <p id="totp-code-help" className="muted">
            {t.checkCodeHelp}
          </p>
          <input
            id="totp-code"
            ref={codeRef}
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            required
            aria-describedby="totp-code-help"
            value={code}
            onChange={(e) => setCode(e.target.value.trim())}
          />
          <div className="row">
            <button type="button" onClick={onCancel}>
              {t.cancel}
            </button>
            <button type="submit" className="primary" disabled={busy || protocols.length === 0}>
              {t.enable2fa}
            </button>
          </div>
        </>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/** The section: the state, then enrolment, recovery codes, regeneration and turning it off. */
export function TwoFactor({ state, api, onChange }: { state: TwoFactorState | undefined; api: TwoFactorApi; onChange: () => void }) {
  const tf = state;
  const [mode, setMode] = useState<'view' | 'enrol' | 'confirm-regenerate' | 'confirm-disable'>('view');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');

  const showCodes = async (fresh: boolean) => {
    const c = await api.recoveryCodes(fresh);
    if (typeof c === 'string') return setError(c);
    setCodes(c);
  };

  if (codes) {
    return (
      <RecoveryCodes
        codes={codes}
        onDone={() => {
          setCodes(null);
          onChange();
        }}
      />
    );
  }
  if (mode === 'enrol') {
    return (
      <Enrol
        state={state}
        api={api}
        onCancel={() => setMode('view')}
        onEnabled={() => {
          setMode('view');
          setStatus(t.twoFactorEnabled);
          void showCodes(false);
        }}
      />
    );
  }
  const required = tf?.required_protocols ?? [];
  return (
    <div className="stack">
      <p>{tf?.enabled ? t.twoFactorOn(tf.config_name, protocolList(tf.protocols)) : t.twoFactorOff}</p>
      {required.length > 0 && <p className="muted">{t.twoFactorRequired(protocolList(required))}</p>}
      {status && (
        <p className="notice" role="status">
          {status}
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="row start">
        {tf?.enabled ? (
          <>
            <button type="button" onClick={() => setMode('confirm-regenerate')}>
              {t.regenerateRecovery}
            </button>
            {required.length === 0 && (
              <button type="button" className="danger" onClick={() => setMode('confirm-disable')}>
                {t.disable2fa}
              </button>
            )}
          </>
        ) : (
          <button type="button" className="primary" onClick={() => setMode('enrol')}>
            {t.setUp2fa}
          </button>
        )}
      </div>
      {mode === 'confirm-regenerate' && (
        <Dialog
          title={t.regenerateRecovery}
          submitLabel={t.regenerateRecovery}
          onClose={() => setMode('view')}
          onSubmit={() => {
            setMode('view');
            void showCodes(true);
          }}
        >
          <p>{t.confirmRegenerate}</p>
        </Dialog>
      )}
      {mode === 'confirm-disable' && (
        <Dialog
          title={t.disable2fa}
          submitLabel={t.disable2fa}
          danger
          onClose={() => setMode('view')}
          onSubmit={() => {
            setMode('view');
            setError('');
            void api.disable().then((problem) => {
              if (problem) return setError(problem);
              setStatus(t.twoFactorDisabled);
              onChange();
            });
          }}
        >
          <p>{t.confirmDisable2fa}</p>
        </Dialog>
      )}
    </div>
  );
}

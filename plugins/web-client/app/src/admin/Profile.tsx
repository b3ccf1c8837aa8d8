import { useCallback, useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { PasswordChangeFields } from '../ChangePassword';
import { TwoFactor } from '../TwoFactor';
import { twoFactorApi, type TwoFactorState } from '../two-factor-api';
import { changeAdminPassword } from './session';
import { Field } from './Field';
import { loadAdminProfile, saveAdminProfile, type AdminProfile } from './profile-api';
import { t } from './strings';

const adminTwoFactor = twoFactorApi('admin');

/** The admin's two-factor state as the shared section reads it: an admin's code is asked at its HTTP logins. */
function stateOf(p: AdminProfile): TwoFactorState | undefined {
  const tf = p.two_factor;
  if (!tf) return undefined;
  return { enabled: tf.enabled, config_name: tf.config_name, protocols: tf.enabled ? ['HTTP'] : [], required_protocols: tf.required ? ['HTTP'] : [] };
}

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </section>
  );
}

/** Email, description and whether API keys may authenticate as the admin (PUT /api/v2/admin/profile). */
function Details({ profile, onSaved }: { profile: AdminProfile; onSaved: () => void }) {
  const [email, setEmail] = useState(profile.email ?? '');
  const [description, setDescription] = useState(profile.description ?? '');
  const [apiKeys, setApiKeys] = useState(profile.allow_api_key_auth ?? false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    setStatus('');
    const problem = await saveAdminProfile({ email, description, allow_api_key_auth: apiKeys });
    setBusy(false);
    if (problem) return setError(problem);
    setStatus(t.profileSaved);
    onSaved();
  };

  return (
    <form className="user-form" onSubmit={(e) => void submit(e)}>
      <fieldset disabled={busy}>
        <legend className="visually-hidden">{t.profileDetails}</legend>
        <Field id="profile-email" label={t.email} path="email" error={error}>
          {(c) => <input {...c} type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field id="profile-description" label={t.description} path="description" error={error}>
          {(c) => <input {...c} value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <label className="check">
          <input type="checkbox" checked={apiKeys} onChange={(e) => setApiKeys(e.target.checked)} />
          {t.allowApiKeyAuth}
        </label>
      </fieldset>
      {error && !/"(email|description)"/.test(error) && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {status && (
        <p className="notice" role="status">
          {status}
        </p>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {t.save}
        </button>
      </div>
    </form>
  );
}

/**
 * The signed-in admin's own profile (every admin): its details, its
 * password, and its two-factor authentication (the web client's section, on
 * the admin's routes).
 */
export default function Profile() {
  const [profile, setProfile] = useState<AdminProfile | null>(null);
  const [error, setError] = useState('');
  const [passwordStatus, setPasswordStatus] = useState('');
  const [pwdKey, setPwdKey] = useState(0);

  const reload = useCallback(() => {
    void loadAdminProfile().then((p) => {
      if (typeof p === 'string') return setError(p);
      setError('');
      setProfile(p);
    });
  }, []);
  useEffect(reload, [reload]);

  return (
    <>
      <h1>{t.profile}</h1>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {!profile && !error && <p aria-busy="true">{t.loading}</p>}
      {profile && (
        <>
          <Section id="profile-details" title={t.profileDetails}>
            <Details profile={profile} onSaved={reload} />
          </Section>
          <Section id="profile-password" title={t.passwordSection}>
            <PasswordChangeFields
              key={pwdKey}
              idPrefix="profile-"
              change={changeAdminPassword}
              onChanged={() => {
                setPasswordStatus(t.passwordChanged);
                setPwdKey((k) => k + 1);
              }}
            />
            {passwordStatus && (
              <p className="notice" role="status">
                {passwordStatus}
              </p>
            )}
          </Section>
          <Section id="profile-2fa" title={t.twoFactorSection}>
            <TwoFactor state={stateOf(profile)} api={adminTwoFactor} onChange={reload} />
          </Section>
        </>
      )}
    </>
  );
}

/**
 * The signed-in user's profile (/web/client/profile): password, contact
 * details, API key login, SSH public keys, two-factor authentication. A
 * section the account's web client options forbid is not shown (and the
 * server refuses the change anyway).
 */
import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { PasswordChangeFields } from './ChangePassword';
import { Dialog } from './Dialog';
import { forbids, loadProfile, saveProfile, type Profile as ProfileData } from './profile-api';
import { t } from './strings';
import { TwoFactor } from './TwoFactor';
import { twoFactorApi } from './two-factor-api';
import { ApiKeys } from './ApiKeys';

const userTwoFactor = twoFactorApi('user');

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="card wide" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </section>
  );
}

/** A save's outcome under a form: "Saved." or the reason. */
function Outcome({ value }: { value: { ok: boolean; text: string } | null }) {
  if (!value) return null;
  return value.ok ? (
    <p className="notice" role="status">
      {value.text}
    </p>
  ) : (
    <p className="error" role="alert">
      {value.text}
    </p>
  );
}

type Result = { ok: boolean; text: string } | null;
const resultOf = (problem: string | null): Result => (problem === null ? { ok: true, text: t.saved } : { ok: false, text: t.saveFailed(problem) });

function ContactDetails({ profile, onSaved }: { profile: ProfileData; onSaved: () => void }) {
  const [email, setEmail] = useState(profile.email ?? '');
  const [description, setDescription] = useState(profile.description ?? '');
  const [result, setResult] = useState<Result>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = resultOf(await saveProfile({ email: email.trim(), description }));
    setResult(r);
    if (r?.ok) onSaved();
  };
  return (
    <form className="stack" onSubmit={(e) => void submit(e)}>
      <label htmlFor="profile-email">{t.email}</label>
      <input id="profile-email" type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />
      <label htmlFor="profile-description">{t.description}</label>
      <textarea id="profile-description" rows={2} maxLength={4096} value={description} onChange={(e) => setDescription(e.target.value)} />
      <Outcome value={result} />
      <div className="row">
        <button type="submit" className="primary">
          {t.saveInfo}
        </button>
      </div>
    </form>
  );
}

/** API key login (its switch unless api-key-auth-change-disabled) and, while it is on, the user's own keys. */
function ApiKeyAuth({ profile, onSaved }: { profile: ProfileData; onSaved: () => void }) {
  const mayChange = !forbids(profile, 'api-key-auth-change-disabled');
  const [result, setResult] = useState<Result>(null);
  // shown changed at once, put back if the server refuses
  const [on, setOn] = useState(!!profile.allow_api_key_auth);
  const toggle = async (next: boolean) => {
    setOn(next);
    const problem = await saveProfile({ allow_api_key_auth: next });
    setResult(problem === null ? { ok: true, text: next ? t.apiKeyAuthOn : t.apiKeyAuthOff } : { ok: false, text: t.saveFailed(problem) });
    if (problem !== null) setOn(!next);
    onSaved();
  };
  return (
    <div className="stack">
      {mayChange ? (
        <>
          <label className="check">
            <input type="checkbox" checked={on} aria-describedby="api-key-help" onChange={(e) => void toggle(e.target.checked)} />
            {t.allowApiKeyAuth}
          </label>
          <p id="api-key-help" className="muted">
            {t.apiKeyHelp}
          </p>
          <Outcome value={result} />
        </>
      ) : (
        <p>{t.apiKeyAuthOn}</p>
      )}
      {on && <ApiKeys />}
    </div>
  );
}

/** "ssh-ed25519 AAAA…last8 comment": how a key is named in the list and its buttons. */
export function keyName(line: string): string {
  const [type = '', body = '', ...comment] = line.trim().split(/\s+/);
  const short = body.length > 12 ? `…${body.slice(-8)}` : body;
  return [type, short, comment.join(' ')].filter(Boolean).join(' ');
}

function PublicKeys({ profile, onSaved }: { profile: ProfileData; onSaved: () => void }) {
  const keys = profile.public_keys ?? [];
  const [draft, setDraft] = useState('');
  const [result, setResult] = useState<Result>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const save = async (next: string[]) => {
    const problem = await saveProfile({ public_keys: next });
    setResult(resultOf(problem));
    if (problem === null) onSaved();
    return problem === null;
  };
  const add = async (e: FormEvent) => {
    e.preventDefault();
    const line = draft.trim().replace(/\s+/g, ' ');
    if (!line) return;
    if (await save([...keys, line])) setDraft('');
  };
  return (
    <div className="stack">
      <p className="muted" id="keys-help">
        {t.publicKeysHelp}
      </p>
      {keys.length === 0 ? (
        <p>{t.noPublicKeys}</p>
      ) : (
        <ul className="keys" aria-label={t.publicKeysList}>
          {keys.map((k) => (
            <li key={k}>
              <code title={k}>{keyName(k)}</code>
              <button type="button" className="danger" aria-label={t.removeKey(keyName(k))} onClick={() => setRemoving(k)}>
                {t.remove}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="stack" onSubmit={(e) => void add(e)}>
        <label htmlFor="new-key">{t.newPublicKey}</label>
        <textarea
          id="new-key"
          rows={3}
          spellCheck={false}
          autoCapitalize="none"
          aria-describedby="keys-help"
          required
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <Outcome value={result} />
        <div className="row">
          <button type="submit" className="primary">
            {t.addKey}
          </button>
        </div>
      </form>
      {removing !== null && (
        <Dialog
          title={t.removeKey(keyName(removing))}
          submitLabel={t.remove}
          danger
          onClose={() => setRemoving(null)}
          onSubmit={() => {
            const k = removing;
            setRemoving(null);
            void save(keys.filter((x) => x !== k));
          }}
        >
          <p>{t.confirmRemoveKey(keyName(removing))}</p>
        </Dialog>
      )}
    </div>
  );
}

export function Profile({ onPasswordChanged }: { onPasswordChanged: () => void }) {
  const [profile, setProfile] = useState<ProfileData | null>(null);
  const [error, setError] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const reload = useCallback(() => {
    void loadProfile().then((p) => {
      if (typeof p === 'string') return setError(t.profileLoadFailed(p));
      setError('');
      setProfile(p);
    });
  }, []);
  useEffect(() => {
    reload();
    heading.current?.focus();
  }, [reload]);

  return (
    <main id="content" className="profile">
      <h1 ref={heading} tabIndex={-1}>
        {t.profileTitle}
      </h1>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {profile && (
        <>
          {!forbids(profile, 'password-change-disabled') && (
            <Section id="password" title={t.passwordSection}>
              <PasswordChangeFields idPrefix="profile-" onChanged={onPasswordChanged} />
            </Section>
          )}
          {!forbids(profile, 'mfa-disabled') && (
            <Section id="two-factor" title={t.twoFactorSection}>
              <TwoFactor state={profile.two_factor} api={userTwoFactor} onChange={reload} />
            </Section>
          )}
          {!forbids(profile, 'info-change-disabled') && (
            <Section id="info" title={t.infoSection}>
              <ContactDetails profile={profile} onSaved={reload} />
            </Section>
          )}
          {!forbids(profile, 'publickey-change-disabled') && (
            <Section id="keys" title={t.publicKeysSection}>
              <PublicKeys profile={profile} onSaved={reload} />
            </Section>
          )}
          {(!forbids(profile, 'api-key-auth-change-disabled') || profile.allow_api_key_auth) && (
            <Section id="api-key" title={t.apiKeySection}>
              <ApiKeyAuth profile={profile} onSaved={reload} />
            </Section>
          )}
        </>
      )}
    </main>
  );
}

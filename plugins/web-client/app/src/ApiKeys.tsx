/** The user's own API keys (profile, when API key login is on): list, create (the key shown once), delete. */
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Dialog } from './Dialog';
import { createApiKey, deleteApiKey, listApiKeys, type OwnApiKey } from './profile-api';
import { t } from './strings';

const day = (ms: number) => (ms ? new Date(ms).toLocaleDateString(t.lang) : t.keyNever);

export function ApiKeys() {
  const [keys, setKeys] = useState<OwnApiKey[]>([]);
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState('');
  const [error, setError] = useState('');
  const [deleting, setDeleting] = useState<OwnApiKey | null>(null);
  const reload = useCallback(() => {
    void listApiKeys().then((k) => (typeof k === 'string' ? setError(k) : setKeys(k)));
  }, []);
  useEffect(reload, [reload]);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    setCreated('');
    // the end of the chosen day, in the browser's time zone
    const expiresAt = expires ? new Date(`${expires}T23:59:59`).getTime() : 0;
    const r = await createApiKey(name.trim(), '', expiresAt);
    if (typeof r === 'string') return setError(t.saveFailed(r));
    setCreated(r.key);
    setName('');
    setExpires('');
    reload();
  };

  return (
    <div className="stack">
      <h3 id="api-keys-title">{t.apiKeysTitle}</h3>
      <p className="muted">{t.apiKeysHelp}</p>
      {keys.length === 0 ? (
        <p>{t.noApiKeys}</p>
      ) : (
        <ul className="keys" aria-labelledby="api-keys-title">
          {keys.map((k) => (
            <li key={k.id}>
              <span className="stack">
                <strong>{k.name}</strong>
                <span className="muted">{t.apiKeyMeta(day(k.created_at), day(k.last_use_at), k.expires_at ? t.expiresOn(day(k.expires_at)) : t.noExpiry)}</span>
              </span>
              <button type="button" className="danger" aria-label={t.deleteApiKey(k.name)} onClick={() => setDeleting(k)}>
                {t.delete}
              </button>
            </li>
          ))}
        </ul>
      )}
      {created && (
        <div className="stack created-key" role="status">
          <span>{t.apiKeyCreated}</span>
          <code aria-label={t.newApiKey} className="secret">
            {created}
          </code>
        </div>
      )}
      <form className="stack" onSubmit={(e) => void create(e)}>
        <label htmlFor="api-key-name">{t.apiKeyName}</label>
        <input id="api-key-name" required maxLength={255} value={name} onChange={(e) => setName(e.target.value)} />
        <label htmlFor="api-key-expires">{t.apiKeyExpires}</label>
        <input id="api-key-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <div className="row">
          <button type="submit" className="primary">
            {t.createApiKey}
          </button>
        </div>
      </form>
      {deleting && (
        <Dialog
          title={t.deleteApiKey(deleting.name)}
          submitLabel={t.delete}
          danger
          onClose={() => setDeleting(null)}
          onSubmit={() => {
            const k = deleting;
            setDeleting(null);
            void deleteApiKey(k.id).then((problem) => {
              if (problem) setError(problem);
              setCreated('');
              reload();
            });
          }}
        >
          <p>{t.confirmDeleteApiKey(deleting.name)}</p>
        </Dialog>
      )}
    </div>
  );
}

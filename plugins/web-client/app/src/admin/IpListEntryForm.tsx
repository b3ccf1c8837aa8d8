import { useState, type FormEvent } from 'react';
import { Field } from './Field';
import { IP_LIST_PROTOCOLS, addIpListEntry, updateIpListEntry, type IpListEntry, type IpListType } from './security-api';
import { t } from './strings';

const PROTOCOLS = Object.entries(IP_LIST_PROTOCOLS) as [keyof typeof IP_LIST_PROTOCOLS, number][];

/** The names of an entry's protocol bits ('all' for 0). */
export const protocolNames = (bits: number): string =>
  bits
    ? PROTOCOLS.filter(([, b]) => bits & b)
        .map(([n]) => n)
        .join(', ')
    : t.allProtocols;

/**
 * Add an entry to the list `type` (entry null) or edit one (its network is
 * the key: not editable): mode (allow or deny, the defender's lists only),
 * protocols, description. The API's validation messages show at their field.
 */
export function IpListEntryForm({
  type,
  entry,
  onDone,
  onSaved,
}: {
  type: IpListType;
  entry: IpListEntry | null;
  onDone: () => void;
  onSaved: (ipornet: string, added: boolean) => void;
}) {
  const [ipornet, setIpornet] = useState(entry?.ipornet ?? '');
  const [mode, setMode] = useState<1 | 2>(entry?.mode === 2 ? 2 : 1);
  const [protocols, setProtocols] = useState(entry?.protocols ?? 0);
  const [description, setDescription] = useState(entry?.description ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    const body = { mode: type === 2 ? mode : 1, protocols, description };
    const failed = entry ? await updateIpListEntry(type, entry.ipornet, body) : await addIpListEntry(type, { ...body, ipornet: ipornet.trim() });
    setBusy(false);
    if (failed) return setError(failed);
    onSaved(entry?.ipornet ?? ipornet.trim(), !entry);
  };

  return (
    <form className="user-form" onSubmit={(e) => void submit(e)} aria-labelledby="entry-title">
      <h2 id="entry-title">{entry ? t.editEntry(entry.ipornet) : t.newEntry}</h2>
      {error && (
        <p className="error" role="alert">
          {t.entryRefused} {error}
        </p>
      )}
      <fieldset disabled={busy}>
        <legend>{t.ipListName(type)}</legend>
        <Field id="ip-ipornet" label={t.ipOrNet} path="ipornet" error={error} help={t.ipOrNetHelp}>
          {(c) => (
            <input
              {...c}
              required
              readOnly={entry !== null}
              autoCapitalize="none"
              spellCheck={false}
              value={ipornet}
              onChange={(e) => setIpornet(e.target.value)}
            />
          )}
        </Field>
        {type === 2 && (
          <Field id="ip-mode" label={t.mode} path="mode" error={error}>
            {(c) => (
              <select {...c} value={mode} onChange={(e) => setMode(Number(e.target.value) === 2 ? 2 : 1)}>
                <option value={1}>{t.modeAllow}</option>
                <option value={2}>{t.modeDeny}</option>
              </select>
            )}
          </Field>
        )}
        <div className="field" role="group" aria-labelledby="ip-protocols-label" aria-describedby="ip-protocols-help">
          <span id="ip-protocols-label" className="label">
            {t.protocols}
          </span>
          <div className="row">
            {PROTOCOLS.map(([name, bit]) => (
              <label className="check" key={name}>
                <input
                  type="checkbox"
                  checked={(protocols & bit) !== 0}
                  onChange={(e) => setProtocols(e.target.checked ? protocols | bit : protocols & ~bit)}
                />
                {name}
              </label>
            ))}
          </div>
          <small id="ip-protocols-help" className="muted">
            {t.protocolsHelp}
          </small>
        </div>
        <Field id="ip-description" label={t.description} path="description" error={error}>
          {(c) => <input {...c} value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
      </fieldset>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t.saving : entry ? t.save : t.create}
        </button>
        <button type="button" onClick={onDone}>
          {t.cancel}
        </button>
      </div>
    </form>
  );
}

import { useState, type FormEvent } from 'react';
import { Dialog } from '../Dialog';
import { RESTORE_MODES, backupUrl, restoreBackup, type RestoreMode } from './backup-api';
import { Field } from './Field';
import { t } from './strings';

const modeLabel = (m: RestoreMode) => (m === 0 ? t.restoreMode0 : m === 1 ? t.restoreMode1 : t.restoreMode2);

/**
 * Maintenance (admins with "*" and no role): download a backup of everything
 * the server stores, restore one (after a confirmation) with the chosen
 * mode, the server's answer shown.
 */
export default function Maintenance() {
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<RestoreMode>(0);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<{ ok: boolean; message: string } | null>(null);

  const ask = (e: FormEvent) => {
    e.preventDefault();
    setAnswer(null);
    if (file) setConfirming(true);
  };
  const restore = async () => {
    if (!file) return;
    setBusy(true);
    setAnswer(await restoreBackup(file, mode));
    setBusy(false);
  };
  const error = answer && !answer.ok ? answer.message : '';

  return (
    <>
      <h1>{t.maintenance}</h1>
      <section aria-labelledby="backup-title" className="card">
        <h2 id="backup-title">{t.backup}</h2>
        <p className="muted">{t.backupHelp}</p>
        <a className="button" href={backupUrl()} download="ferry-backup.json">
          {t.downloadBackup}
        </a>
      </section>
      <section aria-labelledby="restore-title" className="card">
        <h2 id="restore-title">{t.restore}</h2>
        <form className="user-form" onSubmit={ask}>
          <fieldset disabled={busy}>
            <legend>{t.restoreOptions}</legend>
            <Field id="restore-file" label={t.backupFile} path="file" error="" help={t.restoreHelp}>
              {(c) => <input {...c} type="file" required accept="application/json,.json" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />}
            </Field>
            <Field id="restore-mode" label={t.restoreMode} path="mode" error={error}>
              {(c) => (
                <select {...c} value={mode} onChange={(e) => setMode(Number(e.target.value) as RestoreMode)}>
                  {RESTORE_MODES.map((m) => (
                    <option key={m} value={m}>
                      {modeLabel(m)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </fieldset>
          <div className="row">
            <button type="submit" className="primary" disabled={busy || !file}>
              {busy ? t.restoring : t.restoreButton}
            </button>
          </div>
        </form>
        {answer?.ok && (
          <p className="notice" role="status" data-testid="restore-answer">
            {t.restored(answer.message)}
          </p>
        )}
        {answer && !answer.ok && (
          <p className="error" role="alert" data-testid="restore-answer">
            {t.restoreRefused} {answer.message}
          </p>
        )}
      </section>
      {confirming && file && (
        <Dialog
          title={t.restore}
          submitLabel={t.restoreButton}
          danger
          onSubmit={() => {
            setConfirming(false);
            void restore();
          }}
          onClose={() => setConfirming(false)}
        >
          <p>{t.confirmRestore(file.name)}</p>
          <p>{modeLabel(mode)}</p>
        </Dialog>
      )}
    </>
  );
}

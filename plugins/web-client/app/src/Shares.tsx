/**
 * The Shares screen: the user's shares (GET /api/v2/user/shares) with their
 * link, its QR code, uses, expiry and last use; the form that creates one
 * (from the paths chosen in the file browser) or edits one; deletion with a
 * confirmation. What the form offers follows the account's share policy
 * (GET /api/v2/user/share-policy); the server checks it again.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { api, errorMessage } from './api';
import { Dialog } from './Dialog';
import { formatDate } from './format';
import { QrCode } from './QrCode';
import {
  SCOPES,
  bodyOf,
  defaultScope,
  fieldOfMessage,
  formOf,
  isSpent,
  localDay,
  newForm,
  pathsOf,
  scopeOffered,
  scopePolicy,
  shareLink,
  type Field,
  type FieldErrors,
  type Share,
  type ShareForm,
  type ShareChoice,
  type SharePolicy,
} from './shareForm';
import { t } from './strings';

type View = { kind: 'list' } | { kind: 'form'; share: Share | null; form: ShareForm };

/** `paths`: chosen in the file browser, to open the form of a new share with (then `onPathsTaken`). */
export default function Shares({ policy, paths, onPathsTaken }: { policy: SharePolicy; paths: ShareChoice | null; onPathsTaken: () => void }) {
  const [shares, setShares] = useState<Share[] | null>(null);
  const [loadError, setLoadError] = useState('');
  const [view, setView] = useState<View>({ kind: 'list' });
  const [status, setStatus] = useState('');
  const [deleting, setDeleting] = useState<Share | null>(null);
  const [error, setError] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);

  const load = useCallback(async () => {
    const { data, error: err, response } = await api.GET('/api/v2/user/shares', { params: { query: { limit: 500 } } });
    if (data) {
      setShares(data);
      setLoadError('');
    } else {
      setShares([]);
      setLoadError(t.sharesLoadFailed(errorMessage(err, `HTTP ${response.status}`)));
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    if (paths) {
      setView({ kind: 'form', share: null, form: newForm(paths.paths, policy, Date.now(), paths.oneFile) });
      onPathsTaken();
    }
  }, [paths, policy, onPathsTaken]);

  useEffect(() => {
    if (view.kind === 'list') heading.current?.focus();
  }, [view.kind]);

  const done = (message: string) => {
    setView({ kind: 'list' });
    setStatus(message);
    void load();
  };

  const remove = async (s: Share) => {
    setDeleting(null);
    const { error: err, response } = await api.DELETE('/api/v2/user/shares/{id}', { params: { path: { id: s.id } } });
    if (response.ok) {
      setError('');
      setStatus(t.shareDeleted(s.name));
    } else setError(t.actionFailed(errorMessage(err, `HTTP ${response.status}`)));
    await load();
  };

  if (view.kind === 'form') {
    return (
      <main id="content" className="shares">
        <ShareEditor
          share={view.share}
          initial={view.form}
          policy={policy}
          onCancel={() => setView({ kind: 'list' })}
          onSaved={(name) => done(view.share ? t.shareSaved(name) : t.shareCreated(name))}
        />
      </main>
    );
  }

  return (
    <main id="content" className="shares">
      <h1 ref={heading} tabIndex={-1}>
        {t.sharesTitle}
      </h1>
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => setView({ kind: 'form', share: null, form: newForm([], policy) })}>
          {t.newShare}
        </button>
      </div>
      <p className="muted" role="status">
        {status}
      </p>
      {(error || loadError) && (
        <div className="error banner" role="alert">
          <span>{error || loadError}</span>
          {error && (
            <button type="button" onClick={() => setError('')}>
              {t.dismiss}
            </button>
          )}
        </div>
      )}
      {shares === null ? (
        <p className="muted" aria-busy="true">
          {t.loading}
        </p>
      ) : shares.length === 0 && !loadError ? (
        <p className="muted">{t.noShares}</p>
      ) : (
        <ul className="share-list">
          {shares.map((s) => (
            <ShareCard
              key={s.id}
              share={s}
              onStatus={setStatus}
              onEdit={() => setView({ kind: 'form', share: s, form: formOf(s) })}
              onDelete={() => setDeleting(s)}
            />
          ))}
        </ul>
      )}
      {deleting && (
        <Dialog title={t.deleteShare(deleting.name)} submitLabel={t.delete} danger onClose={() => setDeleting(null)} onSubmit={() => void remove(deleting)}>
          <p>{t.confirmDeleteShare(deleting.name)}</p>
        </Dialog>
      )}
    </main>
  );
}

/** Copies `text`: the Clipboard API, else the selected text of `input` and the copy command; says which happened. */
async function copyText(text: string, input: HTMLInputElement | null): Promise<string> {
  try {
    await navigator.clipboard.writeText(text);
    return t.linkCopied;
  } catch {
    input?.focus();
    input?.select();
    try {
      if (document.execCommand('copy')) return t.linkCopied;
    } catch {
      // no copy command: the link stays selected for the user to copy
    }
    return t.linkSelected;
  }
}

function ShareCard({ share: s, onStatus, onEdit, onDelete }: { share: Share; onStatus: (m: string) => void; onEdit: () => void; onDelete: () => void }) {
  const [qr, setQr] = useState(false);
  const link = shareLink(location.origin, s.id);
  const input = useRef<HTMLInputElement>(null);
  const id = `share-${s.id}`;
  const spent = isSpent(s);
  return (
    <li className="share" aria-labelledby={`${id}-name`}>
      <h2 id={`${id}-name`}>
        {s.name}
        {spent && <span className="badge">{t.spent}</span>}
      </h2>
      {s.description && <p className="muted">{s.description}</p>}
      <dl className="share-facts">
        <div>
          <dt>{t.sharePathsShown}</dt>
          <dd>
            {s.paths.map((p) => (
              <code key={p}>{p}</code>
            ))}
          </dd>
        </div>
        <div>
          <dt>{t.shareScope}</dt>
          <dd>{t.scopeLabel(s.scope)}</dd>
        </div>
        <div>
          <dt>{t.protectedByPassword}</dt>
          <dd>{s.password ? t.yes : t.no}</dd>
        </div>
        <div>
          <dt>{t.uses}</dt>
          <dd>{t.usesValue(s.used_tokens ?? 0, s.max_tokens ?? 0)}</dd>
        </div>
        <div>
          <dt>{t.expires}</dt>
          <dd>{s.expires_at ? formatDate(new Date(s.expires_at).toISOString()) : t.never}</dd>
        </div>
        <div>
          <dt>{t.lastUse}</dt>
          <dd>{s.last_use_at ? formatDate(new Date(s.last_use_at).toISOString()) : t.notUsedYet}</dd>
        </div>
        {!!s.allow_from?.length && (
          <div>
            <dt>{t.shareAllowFrom}</dt>
            <dd>{s.allow_from.join(', ')}</dd>
          </div>
        )}
        {!!s.emails?.length && (
          <div>
            <dt>{t.restrictedTo}</dt>
            <dd>{s.emails.join(', ')}</dd>
          </div>
        )}
      </dl>
      <div className="share-link">
        <label htmlFor={`${id}-link`} className="visually-hidden">
          {t.linkOf(s.name)}
        </label>
        <input id={`${id}-link`} ref={input} readOnly value={link} spellCheck={false} onFocus={(e) => e.target.select()} />
      </div>
      <div className="share-actions">
        <button type="button" aria-label={t.copyLinkOf(s.name)} onClick={() => void copyText(link, input.current).then(onStatus)}>
          {t.copyLink}
        </button>
        <button type="button" aria-label={t.showQrOf(s.name)} aria-expanded={qr} aria-controls={`${id}-qr`} onClick={() => setQr((v) => !v)}>
          {t.showQr}
        </button>
        <button type="button" aria-label={t.editNamed(s.name)} onClick={onEdit}>
          {t.edit}
        </button>
        <button type="button" className="danger" aria-label={t.deleteShare(s.name)} onClick={onDelete}>
          {t.delete}
        </button>
      </div>
      <div id={`${id}-qr`} className="share-qr" hidden={!qr}>
        {qr && <QrCode text={link} label={t.qrLabel(s.name)} />}
      </div>
    </li>
  );
}

/** The API field a form value feeds. */
const FIELD_OF: Partial<Record<keyof ShareForm, Field>> = {
  name: 'name',
  description: 'description',
  scope: 'scope',
  paths: 'paths',
  expires: 'expires_at',
  password: 'password',
  maxTokens: 'max_tokens',
  allowFrom: 'allow_from',
  emails: 'emails',
};

const MESSAGES = {
  nameRequired: t.nameRequired,
  pathsRequired: t.pathsRequired,
  writeNeedsOneFolder: t.writeNeedsOneFolder,
  expiryInPast: t.expiryInPast,
  expiryTooLate: t.expiryTooLate,
  expiryRequired: t.expiryRequired,
  passwordRequired: t.passwordRequired,
  maxTokensInvalid: t.maxTokensInvalid,
  scopeBeyondPolicy: t.scopeBeyondPolicy,
};

function ShareEditor({
  share,
  initial,
  policy,
  onCancel,
  onSaved,
}: {
  share: Share | null;
  initial: ShareForm;
  policy: SharePolicy;
  onCancel: () => void;
  onSaved: (name: string) => void;
}) {
  const [form, setForm] = useState(initial);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const set = <K extends keyof ShareForm>(k: K, v: ShareForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    // a corrected field loses its message
    const field = FIELD_OF[k];
    if (field) setErrors((e) => (e[field] ? { ...e, [field]: undefined } : e));
  };

  useEffect(() => heading.current?.focus(), []);
  // every marked field corrected: the banner that asked for it goes
  useEffect(() => {
    if (!Object.values(errors).some(Boolean)) setFormError((m) => (m === t.fixFields ? '' : m));
  }, [errors]);

  // the first refused field gets the focus in the commit that shows its message (not a frame later:
  // a screen reader, or a quick user, would otherwise meet the message with the focus elsewhere)
  const pendingFocus = useRef<Field | undefined>(undefined);
  useLayoutEffect(() => {
    const first = pendingFocus.current;
    pendingFocus.current = undefined;
    if (first) formRef.current?.querySelector<HTMLElement>(`[data-field="${first}"]`)?.focus();
  }, [errors]);
  const focusFirstError = (errs: FieldErrors) => {
    pendingFocus.current = (Object.keys(errs) as Field[])[0];
  };

  const submit = async () => {
    const out = bodyOf(form, policy, MESSAGES);
    if ('errors' in out) {
      setErrors(out.errors);
      setFormError(t.fixFields);
      return focusFirstError(out.errors);
    }
    setBusy(true);
    let res;
    try {
      res = share
        ? await api.PUT('/api/v2/user/shares/{id}', { params: { path: { id: share.id } }, body: out.body })
        : await api.POST('/api/v2/user/shares', { body: out.body });
    } catch {
      setBusy(false);
      setFormError(t.networkError);
      return;
    }
    setBusy(false);
    if (res.response.ok) return onSaved(out.body.name);
    const message = errorMessage(res.error, `HTTP ${res.response.status}`);
    const field = res.response.status === 400 ? fieldOfMessage(message) : null;
    if (field) {
      setErrors({ [field]: message });
      setFormError(t.fixFields);
      focusFirstError({ [field]: message });
    } else {
      setErrors({});
      setFormError(t.actionFailed(message));
    }
  };

  // the rules of the paths typed: under share_policy_change_disabled, only the scopes they allow are offered
  const sp = scopePolicy(policy, pathsOf(form.paths));
  const scopeNote = sp.locked && sp.allowed !== 3 ? t.scopeLockedHelp(SCOPES.filter((sc) => scopeOffered(sp, sc)).map((sc) => t.scopeLabel(sc))) : '';
  const setPaths = (text: string) => {
    set('paths', text);
    // a scope the new paths' rules forbid gives way to the one they allow
    const next = scopePolicy(policy, pathsOf(text));
    if (!scopeOffered(next, form.scope) && next.allowed) set('scope', defaultScope(next, pathsOf(text).length));
  };

  const today = localDay(Date.now());
  const maxDay = policy.max_expiration_days ? localDay(Date.now() + policy.max_expiration_days * 86_400_000) : undefined;
  const passwordHelp = form.hasPassword ? t.sharePasswordHelpKeep : policy.password_required ? t.sharePasswordHelpRequired : t.sharePasswordHelpNew;

  return (
    <form
      ref={formRef}
      className="share-form"
      noValidate
      aria-labelledby="share-form-title"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h1 id="share-form-title" ref={heading} tabIndex={-1}>
        {share ? t.editShare(share.name) : t.newShare}
      </h1>
      {formError && (
        <p className="error banner" role="alert">
          {formError}
        </p>
      )}
      <FormField field="name" label={t.shareName} error={errors.name}>
        {(p) => <input {...p} required value={form.name} maxLength={255} onChange={(e) => set('name', e.target.value)} />}
      </FormField>
      <FormField field="description" label={t.shareDescription} error={errors.description}>
        {(p) => <textarea {...p} rows={2} value={form.description} onChange={(e) => set('description', e.target.value)} />}
      </FormField>
      <fieldset className="scope" aria-describedby={errors.scope ? 'share-scope-error share-scope-help' : 'share-scope-help'}>
        <legend>{t.shareScope}</legend>
        {SCOPES.map((sc) => (
          <label key={sc} className="choice">
            <input
              type="radio"
              name="scope"
              data-field={sc === form.scope ? 'scope' : undefined}
              checked={form.scope === sc}
              disabled={!scopeOffered(sp, sc)}
              onChange={() => set('scope', sc)}
            />
            {t.scopeLabel(sc)}
          </label>
        ))}
        <p id="share-scope-help" className="help">
          {scopeNote ? `${scopeNote} ${t.scopeHelp}` : t.scopeHelp}
        </p>
        {errors.scope && (
          <p id="share-scope-error" className="error">
            {errors.scope}
          </p>
        )}
      </fieldset>
      <FormField field="paths" label={t.sharePaths} help={t.sharePathsHelp} error={errors.paths}>
        {(p) => <textarea {...p} required rows={3} spellCheck={false} value={form.paths} onChange={(e) => setPaths(e.target.value)} />}
      </FormField>
      <FormField field="password" label={t.sharePassword} help={passwordHelp} error={errors.password}>
        {(p) => (
          <input
            {...p}
            type="password"
            autoComplete="new-password"
            required={policy.password_required && !form.hasPassword}
            value={form.password}
            disabled={form.removePassword}
            onChange={(e) => set('password', e.target.value)}
          />
        )}
      </FormField>
      {form.hasPassword && !policy.password_required && (
        <label className="choice">
          <input type="checkbox" checked={form.removePassword} onChange={(e) => setForm((f) => ({ ...f, removePassword: e.target.checked, password: '' }))} />
          {t.removePassword}
        </label>
      )}
      <FormField field="expires_at" label={t.shareExpires} help={t.shareExpiresHelp(policy.max_expiration_days)} error={errors.expires_at}>
        {(p) => (
          <input
            {...p}
            type="date"
            min={today}
            max={maxDay}
            required={!!policy.max_expiration_days}
            value={form.expires}
            onChange={(e) => set('expires', e.target.value)}
          />
        )}
      </FormField>
      <FormField field="max_tokens" label={t.shareMaxTokens} help={t.shareMaxTokensHelp} error={errors.max_tokens}>
        {(p) => <input {...p} type="number" min={0} step={1} inputMode="numeric" value={form.maxTokens} onChange={(e) => set('maxTokens', e.target.value)} />}
      </FormField>
      <FormField field="allow_from" label={t.shareAllowFrom} help={t.shareAllowFromHelp} error={errors.allow_from}>
        {(p) => <textarea {...p} rows={2} spellCheck={false} value={form.allowFrom} onChange={(e) => set('allowFrom', e.target.value)} />}
      </FormField>
      <FormField field="emails" label={t.shareEmails} help={t.shareEmailsHelp} error={errors.emails}>
        {(p) => <textarea {...p} rows={2} spellCheck={false} value={form.emails} onChange={(e) => set('emails', e.target.value)} />}
      </FormField>
      <div className="row">
        <button type="button" onClick={onCancel}>
          {t.cancel}
        </button>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? t.saving : share ? t.saveShare : t.createShare}
        </button>
      </div>
    </form>
  );
}

interface ControlProps {
  id: string;
  'data-field': Field;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
}

/** A labelled control with its help and its error (the form's, or the API's message naming the field). */
function FormField({
  field,
  label,
  help,
  error,
  children,
}: {
  field: Field;
  label: string;
  help?: string;
  error?: string;
  children: (p: ControlProps) => ReactNode;
}) {
  const id = `share-${field}`;
  const described = [error ? `${id}-error` : '', help ? `${id}-help` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'data-field': field, 'aria-invalid': error ? true : undefined, 'aria-describedby': described || undefined })}
      {help && (
        <p id={`${id}-help`} className="help">
          {help}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} className="error">
          {error}
        </p>
      )}
    </div>
  );
}

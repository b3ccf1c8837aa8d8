import { useLayoutEffect, type ReactNode } from 'react';
import { names } from './field-message';

/** The attributes a field's control takes: its id, what describes it, whether the API refused it. */
export interface ControlProps {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: true;
}

/**
 * A labelled control with its help and, when the API's `error` names `path`,
 * the message under it (the control marked invalid and described by it).
 */
export function Field({
  id,
  label,
  path,
  error,
  help,
  refused,
  children,
}: {
  id: string;
  label: string;
  /** The field's key path in the API's object (what its messages name). */
  path: string;
  error: string;
  help?: string;
  /** Show `error` here even when it names another path (a message about a whole sub-object none of its fields claims). */
  refused?: boolean;
  children: (control: ControlProps) => ReactNode;
}) {
  const bad = Boolean(error) && (refused === true || names(error, path));
  // the refused field gets the focus (and is scrolled to): where to correct it
  // (in the commit that shows the message, so nothing meets the message with the focus elsewhere)
  useLayoutEffect(() => {
    if (bad) document.getElementById(id)?.focus();
  }, [bad, error, id]);
  const described = [help ? `${id}-help` : '', bad ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-describedby': described, ...(bad ? { 'aria-invalid': true as const } : {}) })}
      {help && (
        <small id={`${id}-help`} className="muted">
          {help}
        </small>
      )}
      {bad && (
        <small id={`${id}-error`} className="error">
          {error}
        </small>
      )}
    </div>
  );
}

/** Checkboxes of a list of values (fs events, protocols...): a labelled group. */
export function Checks<V extends string | number>({
  id,
  label,
  path,
  error,
  choices,
  value,
  name,
  onChange,
}: {
  id: string;
  label: string;
  path: string;
  error: string;
  choices: readonly V[];
  value: V[];
  name: (v: V) => string;
  onChange: (v: V[]) => void;
}) {
  const bad = names(error, path);
  return (
    <div className="field wide" role="group" aria-labelledby={`${id}-label`} aria-describedby={bad ? `${id}-error` : undefined}>
      <span id={`${id}-label`}>{label}</span>
      <div className="checks">
        {choices.map((c) => (
          <label key={c} className="check">
            <input type="checkbox" checked={value.includes(c)} onChange={(e) => onChange(e.target.checked ? [...value, c] : value.filter((x) => x !== c))} />
            {name(c)}
          </label>
        ))}
      </div>
      {bad && (
        <small id={`${id}-error`} className="error">
          {error}
        </small>
      )}
    </div>
  );
}

/**
 * The outcome of a page's last action: its notice (role status) and its
 * error (role alert), each shown only when set. A form's error has an id
 * (`errorId`, what its controls may point to) and the words put before the
 * API's message (`refused`).
 */
export function Notices({ message, error, errorId, refused }: { message?: string; error?: string; errorId?: string; refused?: string }) {
  return (
    <>
      {message && (
        <p className="notice" role="status">
          {message}
        </p>
      )}
      {error && (
        <p id={errorId} className="error" role="alert">
          {refused ? `${refused} ${error}` : error}
        </p>
      )}
    </>
  );
}

import type { ReactNode } from 'react';

/**
 * The field a validation message of the API names, as the key path in its
 * first quotes: '"email" must be a valid email' → 'email',
 * '"user_settings.home_dir" must be an absolute path' → 'user_settings.home_dir'.
 */
export function fieldOfMessage(message: string): string | null {
  const m = /"([a-z_]+(?:[.[][^"]*)?)"/.exec(message);
  return m ? m[1]! : null;
}

/** Whether `message` names the field `path` or something inside it ('groups[0].name' is in 'groups'). */
export function names(message: string, path: string): boolean {
  const f = message ? fieldOfMessage(message) : null;
  return f !== null && (f === path || f.startsWith(`${path}.`) || f.startsWith(`${path}[`));
}

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
  children,
}: {
  id: string;
  label: string;
  /** The field's key path in the API's object (what its messages name). */
  path: string;
  error: string;
  help?: string;
  children: (control: ControlProps) => ReactNode;
}) {
  const bad = names(error, path);
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

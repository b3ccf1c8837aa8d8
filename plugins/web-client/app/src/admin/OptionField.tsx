import type { ReactNode } from 'react';
import { Field, type ControlProps } from './Field';
import { names } from './field-message';
import type { OptionSpec, OptionValues, SecretEdit } from './option-values';
import { t } from './strings';

/**
 * A secret's input: whether one is stored ("set"/"not set", never its value),
 * an empty input keeping it, a typed one replacing it, a box to remove it.
 * `multiline` for keys (PEM) that hold line breaks.
 */
export function SecretInput({
  control,
  value,
  multiline,
  onChange,
}: {
  control: ControlProps;
  value: SecretEdit;
  multiline?: boolean;
  onChange: (v: SecretEdit) => void;
}) {
  const kept = value.stored !== null && !value.clear;
  const typed = { value: value.value, placeholder: kept ? t.secretKeepPlaceholder : '', spellCheck: false, autoComplete: 'new-password' };
  return (
    <div className="secret">
      {multiline ? (
        <textarea {...control} {...typed} rows={4} className="code" onChange={(e) => onChange({ ...value, value: e.target.value, clear: false })} />
      ) : (
        <input {...control} {...typed} type="password" onChange={(e) => onChange({ ...value, value: e.target.value, clear: false })} />
      )}
      {value.stored && (
        <label className="check">
          <input type="checkbox" checked={value.clear} onChange={(e) => onChange({ ...value, value: '', clear: e.target.checked })} />
          {t.secretClear}
        </label>
      )}
    </div>
  );
}

/** The help of a secret: a typed value to be stored, else whether the server holds one. */
export const secretHelp = (s: SecretEdit): string => (s.value !== '' ? t.secretTyped : s.stored && !s.clear ? t.secretSet : t.secretUnset);

const NO_SECRET: SecretEdit = { stored: null, value: '', clear: false };

/**
 * One option of an API object's sub-object (an event action's options, a
 * filesystem provider's config): its control by kind, the API's message when
 * it names `path`, `after` (a template's preview) under it.
 */
export function OptionField({
  id,
  spec,
  label,
  path,
  value,
  error,
  help,
  choiceLabel,
  after,
  onChange,
}: {
  id: string;
  spec: OptionSpec;
  label: string;
  /** The option's key path in the API's object (what its messages name). */
  path: string;
  value: OptionValues[string] | undefined;
  error: string;
  help?: string;
  choiceLabel: (choice: string | number) => string;
  after?: ReactNode;
  onChange: (v: OptionValues[string]) => void;
}) {
  const text = typeof value === 'string' ? value : '';
  if (spec.kind === 'bool') {
    const bad = names(error, path);
    return (
      <div className="field">
        <label className="check">
          <input
            id={id}
            type="checkbox"
            checked={value === true}
            aria-invalid={bad || undefined}
            aria-describedby={bad ? `${id}-error` : undefined}
            onChange={(e) => onChange(e.target.checked)}
          />
          {label}
        </label>
        {bad && (
          <small id={`${id}-error`} className="error">
            {error}
          </small>
        )}
      </div>
    );
  }
  if (spec.kind === 'multi') {
    const chosen = Array.isArray(value) ? value : [];
    return (
      <div className="field" role="group" aria-labelledby={`${id}-label`}>
        <span id={`${id}-label`}>{label}</span>
        <div className="checks">
          {spec.choices?.map((c) => (
            <label key={c} className="check">
              <input
                type="checkbox"
                checked={chosen.includes(String(c))}
                onChange={(e) => onChange(e.target.checked ? [...chosen, String(c)] : chosen.filter((x) => x !== String(c)))}
              />
              {choiceLabel(c)}
            </label>
          ))}
        </div>
      </div>
    );
  }
  if (spec.kind === 'secret') {
    const s = (value as SecretEdit | undefined) ?? NO_SECRET;
    return (
      <div className={spec.multiline ? 'wide' : undefined}>
        <Field id={id} label={label} path={path} error={error} help={help ? `${secretHelp(s)} ${help}` : secretHelp(s)}>
          {(c) => <SecretInput control={c} value={s} multiline={spec.multiline} onChange={onChange} />}
        </Field>
      </div>
    );
  }
  const wide = spec.kind === 'area' || spec.kind === 'json' || spec.kind === 'lines' || spec.kind === 'kv';
  return (
    <div className={wide || after ? 'wide' : undefined}>
      <Field id={id} label={label} path={path} error={error} help={help}>
        {(c) =>
          spec.kind === 'select' ? (
            <select {...c} value={text} onChange={(e) => onChange(e.target.value)}>
              {spec.choices?.map((ch) => (
                <option key={ch} value={String(ch)}>
                  {choiceLabel(ch)}
                </option>
              ))}
            </select>
          ) : wide ? (
            <textarea
              {...c}
              rows={spec.kind === 'area' || spec.kind === 'json' ? 6 : 3}
              spellCheck={false}
              className="code"
              value={text}
              onChange={(e) => onChange(e.target.value)}
            />
          ) : (
            <input
              {...c}
              type={spec.kind === 'number' ? 'number' : 'text'}
              required={spec.required}
              spellCheck={false}
              autoCapitalize="none"
              value={text}
              onChange={(e) => onChange(e.target.value)}
            />
          )
        }
      </Field>
      {after}
    </div>
  );
}

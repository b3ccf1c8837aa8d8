/**
 * Form values of the options of an API object (an event action's options, a
 * filesystem provider's config) without React (the unit tests read it): how
 * each option is edited, its form value read from the API's object and its
 * value for the API from the form; secrets as set/unset, never their value.
 */

type Obj = Record<string, unknown>;

/** How an option is edited: `lines` is a list of strings (one a line), `kv` of {key, value} ("key=value" a line), `json` an object or list as JSON. */
export type OptionKind = 'text' | 'area' | 'number' | 'bool' | 'select' | 'multi' | 'lines' | 'kv' | 'json' | 'secret';

export interface OptionSpec {
  /** The key path inside the options sub-object ('endpoint', 'compress.name'; a filesystem config's 'bucket'). */
  key: string;
  kind: OptionKind;
  /** A Go template (previewed). */
  template?: boolean;
  /** select/multi: the values (numbers or strings as the API takes them). */
  choices?: readonly (string | number)[];
  /** The value of a new object (action, filesystem config). */
  initial?: unknown;
  required?: boolean;
  /** A secret that holds line breaks (a PEM key): a text area. */
  multiline?: boolean;
}

// ---------------------------------------------------------------- key paths

export function getPath(o: unknown, key: string): unknown {
  let v = o;
  for (const k of key.split('.')) v = v && typeof v === 'object' ? (v as Obj)[k] : undefined;
  return v;
}

export function setPath(o: Obj, key: string, value: unknown): void {
  const ks = key.split('.');
  let at = o;
  for (const k of ks.slice(0, -1)) {
    if (!at[k] || typeof at[k] !== 'object') at[k] = {};
    at = at[k] as Obj;
  }
  at[ks.at(-1)!] = value;
}

// ---------------------------------------------------------------- values

/** A secret as the form holds it: whether the server has one (never its value), and a new value typed. */
export interface SecretEdit {
  /** The stored secret as the API read it ({status}), or null when none is set. */
  stored: Obj | null;
  /** A new value ('' keeps the stored one). */
  value: string;
  /** Remove the stored secret. */
  clear: boolean;
}

/** The form's value of each option: strings for text inputs, booleans, string lists for `multi`, SecretEdits. */
export type OptionValues = Record<string, string | boolean | string[] | SecretEdit>;

const isSecretObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && typeof (v as Obj).status === 'string';

/** A secret as the API read it ({status}, never the value) as the form holds it: set or not, nothing typed. */
export function secretEditOf(v: unknown): SecretEdit {
  return { stored: isSecretObj(v) && v.status !== '' ? { status: v.status } : null, value: '', clear: false };
}

/**
 * The secret the API is sent for a form's secret: a new value as Plain, the
 * stored one as read (its status without payload: the server keeps what it
 * has), nothing when it is removed or was never set.
 */
export function secretInputOf(s: SecretEdit | undefined): Obj | undefined {
  if (!s || s.clear) return undefined;
  if (s.value !== '') return { status: 'Plain', payload: s.value };
  return s.stored ?? undefined;
}

const linesOf = (v: unknown) => (Array.isArray(v) ? v.map(String).join('\n') : '');
const kvOf = (v: unknown) => (Array.isArray(v) ? v.map((x) => `${(x as Obj).key ?? ''}=${(x as Obj).value ?? ''}`).join('\n') : '');

/** The form value of one option read from the API's sub-object (the spec's initial value when absent and `fresh`). */
export function formValueOf(spec: OptionSpec, sub: Obj, fresh: boolean): OptionValues[string] {
  let v = getPath(sub, spec.key);
  if (v === undefined && fresh) v = spec.initial;
  switch (spec.kind) {
    case 'bool':
      return v === true;
    case 'multi':
      return Array.isArray(v) ? v.map(String) : [];
    case 'lines':
      return linesOf(v);
    case 'kv':
      return kvOf(v);
    case 'json':
      return v === undefined ? '' : JSON.stringify(v, null, 2);
    case 'secret':
      return secretEditOf(v);
    default:
      return v === undefined || v === null ? '' : String(v);
  }
}

/** A form value refused before it is sent (a JSON field that is not JSON): named as the API names its fields. */
export class FormValueError extends Error {
  override name = 'FormValueError';
}
export const isFormValueError = (e: unknown): e is FormValueError => e instanceof Error && e.name === 'FormValueError';

/** The API's value of one option from its form value (undefined: left out); `label` prefixes a refused JSON's message as the API would ('options.http_config'). */
export function apiValueOf(spec: OptionSpec, v: OptionValues[string] | undefined, label: string): unknown {
  if (spec.kind === 'bool') return v === true;
  if (spec.kind === 'multi') return Array.isArray(v) ? v : [];
  if (spec.kind === 'secret') return secretInputOf(v as SecretEdit | undefined);
  const text = typeof v === 'string' ? v : '';
  switch (spec.kind) {
    case 'number': {
      if (text.trim() === '') return undefined;
      const n = Number(text);
      return Number.isFinite(n) ? n : text; // the API names what is not a number
    }
    case 'select':
      // an empty choice ('': none, the backend's default) is left out
      return typeof spec.choices?.[0] === 'number' ? Number(text) : text === '' ? undefined : text;
    case 'lines':
      return text
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
    case 'kv':
      return text
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => {
          const at = l.indexOf('=');
          return at < 0 ? { key: l.trim(), value: '' } : { key: l.slice(0, at).trim(), value: l.slice(at + 1) };
        });
    case 'json':
      if (text.trim() === '') return undefined;
      try {
        return JSON.parse(text);
      } catch {
        throw new FormValueError(`${label}: "${spec.key}" must be valid JSON`);
      }
    default:
      return text === '' && !spec.required ? undefined : text;
  }
}

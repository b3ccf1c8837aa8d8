/**
 * Template functions: Go's text/template builtins and the Ferry helpers
 * (named like the upstream server's, so existing templates keep working).
 *
 * Each function declares Go-like parameter types; the executor checks
 * arguments against them the way Go's reflection-based call does, so wrong
 * argument types fail with Go's messages.
 */
import { base64, hex } from './bytes.js';
import { basicKind, eq, le, lt, num } from './compare.js';
import { FuncError } from './func-error.js';
import { sprint, sprintf, sprintln } from './sprintf.js';
import { formatFloat } from './strconv.js';
import { timeJSON } from './time.js';
import {
  byteLength,
  compareStrings,
  floatValue,
  GoComplex,
  GoFloat,
  GoInterface,
  GoTime,
  GoUint8,
  indirectInterface,
  intValue,
  isTrue,
  kindOf,
  mapGet,
  mapSize,
  sortedEntries,
  toGoTime,
  typeName,
  utf8Bytes,
  utf8Decode,
} from './values.js';

/**
 * Go parameter types: 'value' is reflect.Value (receives the raw value, nil
 * interfaces included), 'any' is interface{}; 'int' accepts any Go integer.
 */
export type ParamType = 'value' | 'any' | 'string' | 'int' | 'int64' | 'bool' | '[]string' | '[]interface {}';

export interface GoFunc {
  params: ParamType[];
  /** Element type of a trailing variadic parameter. */
  variadic?: ParamType;
  fn: (...args: unknown[]) => unknown;
  /**
   * Its 'value' arguments keep their static type: a field, variable or dot of
   * type `interface {}` arrives as a {@link GoInterface}, as Go's reflect.Value
   * of Kind Interface (the function unwraps it with indirectInterface where Go does).
   */
  staticTypes?: boolean;
}

const fail = (msg: string): never => {
  throw new FuncError(msg);
};

// ---------------------------------------------------------------------------
// Helpers shared with the executor

export function truth(v: unknown): boolean {
  return isTrue(indirectInterface(v));
}

/** Go's evalArgs: like fmt.Sprint, but a missing value prints "<no value>". */
function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args.map((a) => (a === undefined || a === null ? '<no value>' : a)));
}

// ---------------------------------------------------------------------------
// Indexing, slicing, length

/** Go's indexArg: an index must be of an integer kind (an interface holding an int is not). */
function indexArg(index: unknown, cap: number): number {
  if (index instanceof GoInterface) return fail('cannot index slice/array with type interface {}');
  const k = kindOf(index);
  if (k === 'invalid' || k === 'nil') return fail('cannot index slice/array with nil');
  if (k !== 'int') return fail(`cannot index slice/array with type ${typeName(index)}`);
  const x = intValue(index);
  if (x < 0 || x > cap) return fail(`index out of range: ${x}`);
  return x;
}

function index(item: unknown, ...indexes: unknown[]): unknown {
  item = indirectInterface(item);
  if (item === undefined) return fail('index of untyped nil');
  for (let ix of indexes) {
    ix = indirectInterface(ix);
    if (item === null) return fail('index of nil pointer');
    switch (kindOf(item)) {
      case 'slice': {
        const arr = item as unknown[];
        const x = indexArg(ix, arr.length);
        if (x === arr.length) return fail('reflect: slice index out of range');
        item = arr[x] === undefined ? null : arr[x];
        break;
      }
      case 'bytes':
      case 'string': {
        const b = typeof item === 'string' ? utf8Bytes(item) : (item as Uint8Array);
        const x = indexArg(ix, b.length);
        if (x === b.length) return fail(`reflect: ${typeof item === 'string' ? 'string' : 'slice'} index out of range`);
        item = new GoUint8(b[x]!);
        break;
      }
      case 'map': {
        const k = kindOf(ix);
        if (!(item instanceof Map)) {
          if (k === 'invalid') return fail('value is nil; should be of type string');
          if (k !== 'string') return fail(`value has type ${typeName(ix)}; should be string`);
        }
        const v = mapGet(item as object, ix);
        item = v === undefined ? null : v;
        break;
      }
      default:
        return fail(`can't index item of type ${typeName(item)}`);
    }
  }
  return item;
}

function slice(item: unknown, ...indexes: unknown[]): unknown {
  item = indirectInterface(item);
  if (item === undefined) return fail('slice of untyped nil');
  if (indexes.length > 3) return fail(`too many slice indexes: ${indexes.length}`);
  const k = kindOf(item);
  let len: number;
  if (k === 'string') {
    if (indexes.length === 3) return fail('cannot 3-index slice a string');
    len = byteLength(item as string);
  } else if (k === 'slice' || k === 'bytes') {
    len = (item as unknown[]).length;
  } else return fail(`can't slice item of type ${typeName(item)}`);
  const idx = [0, len, len];
  // unlike index, Go's slice does not unwrap interface values: `{{slice .X .One}}` fails on JSON-like data
  indexes.forEach((ix, i) => {
    idx[i] = indexArg(ix, len);
  });
  if (idx[0]! > idx[1]!) return fail(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (indexes.length === 3 && idx[1]! > idx[2]!) return fail(`invalid slice index: ${idx[1]} > ${idx[2]}`);
  if (k === 'string') return utf8Decode(utf8Bytes(item as string).slice(idx[0], idx[1]));
  return (item as unknown[]).slice(idx[0], idx[1]);
}

function length(item: unknown): number {
  if (item === null) return fail('len of nil pointer');
  switch (kindOf(item)) {
    case 'invalid':
      return fail('reflect: call of reflect.Value.Type on zero Value');
    case 'string':
      return byteLength(item as string);
    case 'slice':
    case 'bytes':
      return (item as unknown[]).length;
    case 'map':
      return mapSize(item as object);
    default:
      return fail(`len of type ${typeName(item)}`);
  }
}

function call(fn: unknown, ...args: unknown[]): unknown {
  fn = indirectInterface(fn);
  if (fn === undefined) return fail('call of nil');
  if (typeof fn !== 'function') return fail(`non-function of type ${typeName(fn)}`);
  const result = (fn as (...a: unknown[]) => unknown)(...args.map(indirectInterface));
  return result;
}

// ---------------------------------------------------------------------------
// Escapers

export function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) =>
    c === '\0' ? '\uFFFD' : c === '"' ? '&#34;' : c === "'" ? '&#39;' : c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;',
  );
}

const jsPrintable = /^[\p{L}\p{M}\p{N}\p{P}\p{S}\u0020]$/u;

export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    switch (ch) {
      case '\\':
        out += '\\\\';
        continue;
      case "'":
        out += "\\'";
        continue;
      case '"':
        out += '\\"';
        continue;
      case '<':
        out += '\\u003C';
        continue;
      case '>':
        out += '\\u003E';
        continue;
      case '&':
        out += '\\u0026';
        continue;
      case '=':
        out += '\\u003D';
        continue;
    }
    if (c < 0x20) out += '\\u00' + c.toString(16).toUpperCase().padStart(2, '0');
    else if (c < 0x80 || jsPrintable.test(ch)) out += ch;
    else out += '\\u' + c.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

function percentEncode(s: string, keep: RegExp, spacePlus: boolean): string {
  let out = '';
  for (const b of utf8Bytes(s)) {
    const c = String.fromCharCode(b);
    if (b < 0x80 && keep.test(c)) out += c;
    else if (spacePlus && b === 0x20) out += '+';
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** url.QueryEscape: unreserved characters stay, space becomes '+'. */
export const queryEscape = (s: string): string => percentEncode(s, /[A-Za-z0-9\-_.~]/, true);
/** url.PathEscape: like QueryEscape but '$&+:=@' stay and space becomes %20. */
export const pathEscape = (s: string): string => percentEncode(s, /[A-Za-z0-9\-_.~$&+:=@]/, false);

// ---------------------------------------------------------------------------
// JSON (encoding/json.Marshal)

function jsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = s.charCodeAt(i + 1);
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        out += ch + s[i + 1];
        i++;
      } else out += '\ufffd';
      continue;
    }
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
    }
    if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) {
      out += '\\u' + c.toString(16).padStart(4, '0');
    } else out += ch;
  }
  return out + '"';
}

function jsonFloat(f: number): string {
  if (!Number.isFinite(f)) return fail(`json: unsupported value: ${formatFloat(f, 'g', -1)}`);
  const abs = Math.abs(f);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) {
    return formatFloat(f, 'e', -1).replace(/e-0(\d)$/, 'e-$1');
  }
  return formatFloat(f, 'f', -1);
}

export function toJSON(v: unknown): string {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil':
      return 'null';
    case 'bool':
      return v ? 'true' : 'false';
    case 'int':
      return typeof v === 'number' || typeof v === 'bigint' ? String(v) : String(intValue(v));
    case 'float':
      return jsonFloat(floatValue(v));
    case 'complex':
      return fail(`json: unsupported type: ${typeName(v)}`);
    case 'string':
      return jsonString(v as string);
    case 'bytes':
      return '"' + base64(v as Uint8Array) + '"';
    case 'slice':
      return '[' + (v as unknown[]).map(toJSON).join(',') + ']';
    case 'map': {
      const entries = sortedEntries(v as object).map(([k, x]) => [String(k), x] as const);
      entries.sort((a, b) => compareStrings(a[0], b[0]));
      return '{' + entries.map(([k, x]) => jsonString(k) + ':' + toJSON(x)).join(',') + '}';
    }
    case 'time':
      return '"' + timeJSON(toGoTime(v)) + '"';
    case 'func':
      return fail(`json: unsupported type: ${typeName(v)}`);
    case 'struct': {
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => typeof obj[k] !== 'function');
      return '{' + keys.map((k) => jsonString(k) + ':' + toJSON(obj[k])).join(',') + '}';
    }
  }
}

// ---------------------------------------------------------------------------
// Paths (Go's path package)

/** path.Clean. */
export function pathClean(p: string): string {
  if (p === '') return '.';
  const rooted = p[0] === '/';
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(part);
  }
  const s = (rooted ? '/' : '') + out.join('/');
  return s === '' ? '.' : s;
}

export function pathBase(p: string): string {
  if (p === '') return '.';
  p = p.replace(/\/+$/, '');
  const i = p.lastIndexOf('/');
  if (i >= 0) p = p.slice(i + 1);
  return p === '' ? '/' : p;
}

export function pathDir(p: string): string {
  const i = p.lastIndexOf('/');
  return pathClean(p.slice(0, i + 1));
}

export function pathExt(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i);
  return '';
}

export function pathJoin(elems: string[]): string {
  const nonEmpty = elems.filter((e) => e !== '');
  return nonEmpty.length === 0 ? '' : pathClean(nonEmpty.join('/'));
}

// ---------------------------------------------------------------------------
// humanize

/** go-humanize Bytes: SI units, one decimal below 10 ("1.0 kB"), none above ("83 MB"). */
export function humanizeBytes(n: number): string {
  const sizes = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  if (n < 0) n = n + 2 ** 64; // go-humanize takes a uint64
  if (n < 10) return `${n} B`;
  const e = Math.floor(Math.log(n) / Math.log(1000));
  const suffix = sizes[e]!;
  const val = Math.floor((n / 1000 ** e) * 10 + 0.5) / 10;
  return sprintf(val < 10 ? '%.1f %s' : '%.0f %s', [new GoFloat(val), suffix]);
}

// ---------------------------------------------------------------------------

function strings(v: unknown[]): string[] {
  return v as string[];
}

/** Flattens pathJoin arguments: strings, and slices of strings (the upstream form). */
function joinArgs(args: unknown[]): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (typeof a === 'string') out.push(a);
    else if (Array.isArray(a) && a.every((x) => typeof x === 'string')) out.push(...a);
    else fail(`pathJoin: unsupported argument of type ${a === null || a === undefined ? 'nil' : typeName(a)}`);
  }
  return out;
}

function goEqual(a: unknown, b: unknown): boolean {
  a = indirectInterface(a);
  b = indirectInterface(b);
  const ka = basicKind(a);
  if (ka === 'invalid' || ka !== basicKind(b)) return a === undefined && b === undefined;
  if (ka === 'complex') return (a as GoComplex).re === (b as GoComplex).re && (a as GoComplex).im === (b as GoComplex).im;
  return ka === 'int' || ka === 'uint' || ka === 'float' ? num(a, ka) == num(b, ka) : a === b;
}

function toInt(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

export const builtins: Record<string, GoFunc> = {
  and: { params: ['value'], variadic: 'value', fn: () => undefined }, // special-cased by the executor
  or: { params: ['value'], variadic: 'value', fn: () => undefined }, // special-cased by the executor
  not: { params: ['value'], fn: (a) => !truth(a) },
  call: { params: ['value'], variadic: 'value', fn: call },
  html: { params: [], variadic: 'any', fn: (...a) => htmlEscape(evalArgs(a)) },
  js: { params: [], variadic: 'any', fn: (...a) => jsEscape(evalArgs(a)) },
  urlquery: { params: [], variadic: 'any', fn: (...a) => queryEscape(evalArgs(a)) },
  index: { params: ['value'], variadic: 'value', fn: index },
  slice: { params: ['value'], variadic: 'value', fn: slice, staticTypes: true },
  len: { params: ['value'], fn: length },
  print: { params: [], variadic: 'any', fn: (...a) => sprint(a) },
  printf: { params: ['string'], variadic: 'any', fn: (f, ...a) => sprintf(f as string, a) },
  println: { params: [], variadic: 'any', fn: (...a) => sprintln(a) },
  eq: { params: ['value'], variadic: 'value', fn: eq },
  ne: { params: ['value', 'value'], fn: (a, b) => !eq(a, b) },
  lt: { params: ['value', 'value'], fn: lt },
  le: { params: ['value', 'value'], fn: le },
  gt: { params: ['value', 'value'], fn: (a, b) => !le(a, b) },
  ge: { params: ['value', 'value'], fn: (a, b) => !lt(a, b) },
};

export const helpers: Record<string, GoFunc> = {
  toJson: { params: ['any'], fn: toJSON },
  toJsonUnquoted: {
    params: ['any'],
    fn: (v) => {
      const s = toJSON(v);
      return typeof v === 'string' ? s.slice(1, -1) : s;
    },
  },
  toBase64: { params: ['string'], fn: (s) => base64(utf8Bytes(s as string)) },
  toHex: { params: ['string'], fn: (s) => hex(utf8Bytes(s as string)) },
  urlEscape: { params: ['string'], fn: (s) => queryEscape(s as string) },
  urlPathEscape: { params: ['string'], fn: (s) => pathEscape(s as string) },
  pathBase: { params: ['string'], fn: (s) => pathBase(s as string) },
  pathDir: { params: ['string'], fn: (s) => pathDir(s as string) },
  pathExt: { params: ['string'], fn: (s) => pathExt(s as string) },
  pathJoin: { params: [], variadic: 'any', fn: (...a) => pathJoin(joinArgs(a)) },
  stringSlice: { params: [], variadic: 'string', fn: (...a) => a },
  stringJoin: { params: ['[]string', 'string'], fn: (a, sep) => strings(a as unknown[]).join(sep as string) },
  stringReplace: {
    params: ['string', 'string', 'string'],
    fn: (s, o, n) => goReplaceAll(s as string, o as string, n as string),
  },
  stringContains: { params: ['string', 'string'], fn: (s, sub) => (s as string).includes(sub as string) },
  stringHasPrefix: { params: ['string', 'string'], fn: (s, p) => (s as string).startsWith(p as string) },
  stringHasSuffix: { params: ['string', 'string'], fn: (s, p) => (s as string).endsWith(p as string) },
  stringTrimPrefix: {
    params: ['string', 'string'],
    fn: (s, p) => ((s as string).startsWith(p as string) ? (s as string).slice((p as string).length) : s),
  },
  stringTrimSuffix: {
    params: ['string', 'string'],
    fn: (s, p) => ((p as string) !== '' && (s as string).endsWith(p as string) ? (s as string).slice(0, -(p as string).length) : s),
  },
  stringToLower: { params: ['string'], fn: (s) => (s as string).toLowerCase() },
  stringToUpper: { params: ['string'], fn: (s) => (s as string).toUpperCase() },
  slicesContains: {
    params: ['[]interface {}', 'any'],
    fn: (arr, v) => (arr as unknown[]).some((x) => goEqual(x, v)),
  },
  humanizeBytes: { params: ['int64'], fn: (n) => humanizeBytes(intValue(n)) },
  fromMillis: {
    params: ['int64'],
    fn: (n) => GoTime.fromNanos(toInt(n) * 1000000n),
  },
  fromNanos: { params: ['int64'], fn: (n) => GoTime.fromNanos(toInt(n)) },
};

/** strings.ReplaceAll, including Go's behaviour for an empty old string (insert between runes). */
function goReplaceAll(s: string, old: string, repl: string): string {
  if (old === '') {
    const runes = [...s];
    return repl + runes.map((r) => r + repl).join('');
  }
  return s.split(old).join(repl);
}

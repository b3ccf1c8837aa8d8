/**
 * The Go value model the template engine works on.
 *
 * JS values are read as the Go values a Go server would hold after decoding
 * the same data from JSON into `interface{}`:
 *
 * - `undefined`: no value at all (Go's invalid `reflect.Value`, what a map
 *   miss yields). Prints `<no value>`.
 * - `null`: a nil `interface{}`. Evaluating a field on it is an error
 *   (`nil pointer evaluating interface {}.Name`), as in Go.
 * - a number with an integral value (and a bigint): Go `int`; any other
 *   number, and a {@link GoFloat}: Go `float64`.
 * - {@link GoUint8}: Go uint8 (indexing a string yields one);
 *   {@link GoComplex}: Go complex128 (from complex template constants).
 * - string, boolean: Go string and bool. Lengths, indexes and slices of
 *   strings count UTF-8 bytes like Go. A Go string is bytes and may hold
 *   invalid UTF-8 (`"\xff"`, a slice through a character): each byte that
 *   is not part of a valid UTF-8 sequence is held as the lone surrogate
 *   U+DC80..U+DCFF ("surrogate escape", see {@link utf8Decode}), so it counts
 *   as the one byte it is in Go.
 * - {@link GoInterface}: a value whose static type is `interface {}` (a field
 *   of the data, a range element) as the few builtins that tell it apart
 *   receive it (Go's reflect.Value of Kind Interface).
 * - arrays: `[]interface {}`; `Uint8Array`: `[]uint8`.
 * - plain objects and `Map`s: `map[string]interface {}` (keys sorted like Go).
 * - `Date` and {@link GoTime}: `time.Time`, always in UTC.
 * - functions: Go funcs (usable with `call`).
 * - instances of other classes: Go structs; their prototype methods are Go
 *   methods (`.Obj.Method arg`), their own enumerable properties are fields.
 */
import { concatBytes } from './bytes.js';

/** A Go float64 whose value happens to be integral (JS cannot tell 1.0 from 1). */
export class GoFloat {
  constructor(readonly value: number) {}
}

/** A Go complex128 (only template constants such as `1i` or `1+2i` make these). */
export class GoComplex {
  constructor(
    readonly re: number,
    readonly im: number,
  ) {}
}

/** A Go uint8 (a byte): what indexing a string or a []byte yields. */
export class GoUint8 {
  constructor(readonly value: number) {}
}

/**
 * A reflect.Value of Kind Interface: what Go passes to a builtin's
 * reflect.Value parameter for a field, variable or dot whose static type is
 * `interface {}` (every value of JSON-like data). Only builtins that look at
 * the static type receive these (`slice`'s indexes: Go does not unwrap them,
 * so `{{slice .X .One}}` fails where `{{slice .X 1}}` works); `value` is the
 * dynamic value (`null` or `undefined` for a nil interface).
 */
export class GoInterface {
  constructor(readonly value: unknown) {}
}

/** A Go `time.Time` in UTC with nanosecond precision. */
export class GoTime {
  /** Whole seconds since the Unix epoch and the nanoseconds within that second. */
  constructor(
    readonly sec: number,
    readonly nsec: number,
  ) {}

  static fromDate(d: Date): GoTime {
    const ms = d.getTime();
    const sec = Math.floor(ms / 1000);
    return new GoTime(sec, (ms - sec * 1000) * 1e6);
  }

  static fromNanos(ns: bigint): GoTime {
    let sec = ns / 1000000000n;
    let nsec = ns % 1000000000n;
    if (nsec < 0n) {
      nsec += 1000000000n;
      sec -= 1n;
    }
    return new GoTime(Number(sec), Number(nsec));
  }

  /** A JS Date for the calendar fields (exact to the second). */
  date(): Date {
    return new Date(this.sec * 1000);
  }
}

/** A Go named integer type with a String method (time.Month, time.Weekday). */
export class GoNamedInt {
  constructor(
    readonly value: number,
    readonly goType: string,
    private readonly str: string,
  ) {}

  String(): string {
    return this.str;
  }
}

export type Kind = 'invalid' | 'nil' | 'bool' | 'int' | 'float' | 'complex' | 'string' | 'slice' | 'bytes' | 'map' | 'time' | 'func' | 'struct';

export function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export function kindOf(v: unknown): Kind {
  switch (typeof v) {
    case 'undefined':
      return 'invalid';
    case 'boolean':
      return 'bool';
    case 'number':
      // Go decodes integral JSON numbers that fit an int64 as ints, the others as float64.
      return Number.isInteger(v) && Math.abs(v as number) < 2 ** 63 ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'string':
      return 'string';
    case 'function':
      return 'func';
    case 'symbol':
      return 'string';
    case 'object':
      break;
  }
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'slice';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof GoFloat) return 'float';
  if (v instanceof GoNamedInt || v instanceof GoUint8) return 'int';
  if (v instanceof GoComplex) return 'complex';
  if (v instanceof GoTime || v instanceof Date) return 'time';
  if (v instanceof Map || isPlainObject(v as object)) return 'map';
  return 'struct';
}

/** Numeric value of an int-kind value (number or bigint). */
export function intValue(v: unknown): number {
  if (v instanceof GoNamedInt || v instanceof GoUint8) return v.value;
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

/** Numeric value of a float-kind value. */
export function floatValue(v: unknown): number {
  return v instanceof GoFloat ? v.value : (v as number);
}

export function toGoTime(v: unknown): GoTime {
  return v instanceof GoTime ? v : GoTime.fromDate(v as Date);
}

/** Go's type name of a value, as `%T` and error messages print it. */
export function typeName(v: unknown): string {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil':
      return '<nil>';
    case 'bool':
      return 'bool';
    case 'int':
      return v instanceof GoNamedInt ? v.goType : v instanceof GoUint8 ? 'uint8' : 'int';
    case 'float':
      return 'float64';
    case 'complex':
      return 'complex128';
    case 'string':
      return 'string';
    case 'slice':
      return '[]interface {}';
    case 'bytes':
      return '[]uint8';
    case 'map':
      return 'map[string]interface {}';
    case 'time':
      return 'time.Time';
    case 'func':
      return 'func(...interface {}) interface {}';
    case 'struct': {
      const ctor = (Object.getPrototypeOf(v) as { constructor?: { name?: string } }).constructor;
      return '*' + (ctor?.name || 'struct');
    }
  }
}

/** Go's truth: false for the zero value of a type, nil and empty collections. */
export function isTrue(v: unknown): boolean {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil':
      return false;
    case 'bool':
      return v as boolean;
    case 'int':
      return intValue(v) !== 0;
    case 'float':
      return floatValue(v) !== 0;
    case 'complex':
      return (v as GoComplex).re !== 0 || (v as GoComplex).im !== 0;
    case 'string':
      return (v as string).length > 0;
    case 'slice':
      return (v as unknown[]).length > 0;
    case 'bytes':
      return (v as Uint8Array).length > 0;
    case 'map':
      return mapSize(v as object) > 0;
    case 'time':
    case 'func':
    case 'struct':
      return true;
  }
}

export function mapSize(m: object): number {
  if (m instanceof Map) return m.size;
  let n = 0;
  for (const k of Object.keys(m)) if ((m as Record<string, unknown>)[k] !== undefined) n++;
  return n;
}

/** Map entries sorted like Go's fmtsort (numbers numerically, strings bytewise). */
export function sortedEntries(m: object): [unknown, unknown][] {
  const entries: [unknown, unknown][] =
    m instanceof Map
      ? [...m.entries()]
      : Object.keys(m)
          .filter((k) => (m as Record<string, unknown>)[k] !== undefined)
          .map((k) => [k, (m as Record<string, unknown>)[k]]);
  return entries.sort((a, b) => compareKeys(a[0], b[0]));
}

function compareKeys(a: unknown, b: unknown): number {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if ((ka === 'int' || ka === 'float') && (kb === 'int' || kb === 'float')) {
    const x = ka === 'int' ? intValue(a) : floatValue(a);
    const y = kb === 'int' ? intValue(b) : floatValue(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ka === 'string' && kb === 'string') return compareStrings(a as string, b as string);
  if (ka === 'bool' && kb === 'bool') return a === b ? 0 : a ? 1 : -1;
  if (ka !== kb) return ka < kb ? -1 : 1;
  return 0;
}

/** Compares strings by code point, which is the order of their UTF-8 bytes (Go's order). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}

/** Reads a map entry; `undefined` when the key is missing. */
export function mapGet(m: object, key: unknown): unknown {
  if (m instanceof Map) return m.get(key);
  if (typeof key !== 'string') return undefined;
  return Object.prototype.hasOwnProperty.call(m, key) ? (m as Record<string, unknown>)[key] : undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** The lone surrogate U+DC00+b that holds the byte b (0x80..0xff) of a string that is not valid UTF-8. */
const ESCAPE_BASE = 0xdc00;
/** A lone low surrogate holding a byte: not preceded by a high surrogate. */
const escapedByte = /(?<![\ud800-\udbff])[\udc80-\udcff]/;
const escapedBytes = /(?<![\ud800-\udbff])[\udc80-\udcff]/g;

function isEscapedByte(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 0xdc80 || c > 0xdcff) return false;
  const p = i > 0 ? s.charCodeAt(i - 1) : 0;
  return !(p >= 0xd800 && p <= 0xdbff);
}

/** The bytes of a Go string: its UTF-8, each escaped byte as itself. */
export function utf8Bytes(s: string): Uint8Array {
  if (!escapedByte.test(s)) return encoder.encode(s);
  const parts: Uint8Array[] = [];
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    if (!isEscapedByte(s, i)) continue;
    parts.push(encoder.encode(s.slice(run, i)), Uint8Array.of(s.charCodeAt(i) - ESCAPE_BASE));
    run = i + 1;
  }
  parts.push(encoder.encode(s.slice(run)));
  return concatBytes(parts);
}

/** Length of the valid UTF-8 sequence at b[i] (Go's utf8 rules: no overlong forms, no surrogates), 0 if none. */
function sequenceLength(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (j: number, lo = 0x80, hi = 0xbf) => i + j < b.length && b[i + j]! >= lo && b[i + j]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/**
 * The Go string of these bytes: valid UTF-8 decoded, and each byte outside a
 * valid sequence kept as the lone surrogate U+DC00+byte (Python's "surrogate
 * escape"), so that {@link utf8Bytes} gives the same bytes back and len counts
 * one. The one ambiguity: data that itself holds a lone U+DC80..U+DCFF (JSON
 * can) is read as that byte.
 */
export function utf8Decode(b: Uint8Array): string {
  try {
    return strictDecoder.decode(b);
  } catch {
    let out = '';
    let run = 0;
    for (let i = 0; i < b.length;) {
      const n = sequenceLength(b, i);
      if (n > 0) {
        i += n;
        continue;
      }
      out += decoder.decode(b.subarray(run, i)) + String.fromCharCode(ESCAPE_BASE + b[i]!);
      run = ++i;
    }
    return out + decoder.decode(b.subarray(run));
  }
}

/**
 * The template's output as a JS string: escaped bytes that together make
 * valid UTF-8 (the halves of a character written one after the other) are
 * that character again, as in Go's output; the others become U+FFFD (Go
 * writes the bytes, which a JS string cannot hold).
 */
export function wellFormed(s: string): string {
  if (!escapedByte.test(s)) return s;
  return utf8Decode(utf8Bytes(s)).replace(escapedBytes, '\ufffd');
}

/** Byte length of a string in UTF-8 (Go's len); an escaped byte is one. */
export function byteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else if (c >= 0xdc80 && c <= 0xdcff) n += 1;
    else n += 3;
  }
  return n;
}

/** Number of Unicode code points (Go's utf8.RuneCountInString, which fmt widths count). */
export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** indirectInterface: an interface value becomes the value inside it, and a nil interface (null) no value. */
export function indirectInterface(v: unknown): unknown {
  if (v instanceof GoInterface) v = v.value;
  return v === null ? undefined : v;
}

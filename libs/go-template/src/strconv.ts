/**
 * The parts of Go's strconv the template engine needs: exact float formatting
 * (correctly rounded, ties to even, like strconv.FormatFloat), quoting and
 * unquoting of Go string and character literals.
 */
import { utf8Decode } from './values.js';

interface Digits {
  /** Decimal digits without leading or trailing zeros ('' for zero). */
  d: string;
  /** Position of the decimal point: value = 0.d × 10^dp. */
  dp: number;
}

const view = new DataView(new ArrayBuffer(8));

/** The exact decimal expansion of a finite, non-negative double. */
function exactDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 };
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (biased === 0) {
    exp = -1074;
  } else {
    mant |= 1n << 52n;
    exp = biased - 1075;
  }
  let digits: string;
  let dp: number;
  if (exp >= 0) {
    digits = (mant << BigInt(exp)).toString();
    dp = digits.length;
  } else {
    digits = (mant * 5n ** BigInt(-exp)).toString();
    dp = digits.length + exp;
  }
  return trim({ d: digits, dp });
}

function trim(x: Digits): Digits {
  let end = x.d.length;
  while (end > 0 && x.d[end - 1] === '0') end--;
  let start = 0;
  while (start < end && x.d[start] === '0') start++;
  if (start === end) return { d: '', dp: 0 };
  return { d: x.d.slice(start, end), dp: x.dp - start };
}

/** Rounds to nd significant digits, ties to even (Go's decimal.Round on the exact value). */
function roundDigits(x: Digits, nd: number): Digits {
  if (nd < 0) return { d: '', dp: 0 };
  if (nd >= x.d.length) return x;
  const next = x.d.charCodeAt(nd) - 48;
  let up: boolean;
  if (next > 5) up = true;
  else if (next < 5) up = false;
  else if (nd + 1 < x.d.length)
    up = true; // more nonzero digits follow (digits are trimmed)
  else up = nd > 0 && (x.d.charCodeAt(nd - 1) - 48) % 2 === 1;
  if (!up) return trim({ d: x.d.slice(0, nd), dp: x.dp });
  // Round up: increment the first nd digits.
  const arr = x.d.slice(0, nd).split('');
  let i = nd - 1;
  while (i >= 0 && arr[i] === '9') {
    arr[i] = '0';
    i--;
  }
  if (i < 0) return { d: '1', dp: x.dp + 1 };
  arr[i] = String.fromCharCode(arr[i]!.charCodeAt(0) + 1);
  return trim({ d: arr.join(''), dp: x.dp });
}

/** Shortest digits that read back to the same double (what strconv does with precision -1). */
function shortestDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 };
  const s = x.toExponential(); // shortest round-trip digits
  const e = s.indexOf('e');
  const mant = s.slice(0, e).replace('.', '');
  const exp = parseInt(s.slice(e + 1), 10);
  return trim({ d: mant, dp: exp + 1 });
}

function fmtE(neg: boolean, d: Digits, prec: number, e: string): string {
  let out = neg ? '-' : '';
  out += d.d.length ? d.d[0] : '0';
  if (prec > 0) {
    out += '.';
    const m = Math.min(d.d.length, prec + 1);
    out += d.d.slice(1, m);
    for (let i = Math.max(m, 1); i <= prec; i++) out += '0';
  }
  let exp = d.d.length === 0 ? 0 : d.dp - 1;
  out += e;
  if (exp < 0) {
    out += '-';
    exp = -exp;
  } else out += '+';
  out += exp < 10 ? '0' + exp : String(exp);
  return out;
}

function fmtF(neg: boolean, d: Digits, prec: number): string {
  let out = neg ? '-' : '';
  if (d.dp > 0) {
    const m = Math.min(d.d.length, d.dp);
    out += d.d.slice(0, m);
    for (let i = m; i < d.dp; i++) out += '0';
  } else out += '0';
  if (prec > 0) {
    out += '.';
    for (let i = 0; i < prec; i++) {
      const j = d.dp + i;
      out += j >= 0 && j < d.d.length ? d.d[j] : '0';
    }
  }
  return out;
}

/** strconv.FormatFloat(x, fmt, prec, 64) for fmt in e, E, f, g, G. */
export function formatFloat(x: number, fmt: 'e' | 'E' | 'f' | 'g' | 'G' | 'b' | 'x' | 'X', prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (fmt === 'b' || fmt === 'x' || fmt === 'X') return formatBinary(x, fmt, prec);
  const neg = x < 0 || Object.is(x, -0);
  const abs = Math.abs(x);
  const shortest = prec < 0;
  let digs: Digits;
  if (shortest) {
    digs = shortestDigits(abs);
    if (fmt === 'e' || fmt === 'E') prec = digs.d.length - 1;
    else if (fmt === 'f') prec = Math.max(digs.d.length - digs.dp, 0);
    else prec = digs.d.length;
  } else {
    const exact = exactDigits(abs);
    if (fmt === 'e' || fmt === 'E') digs = roundDigits(exact, prec + 1);
    else if (fmt === 'f') digs = roundDigits(exact, exact.dp + prec);
    else {
      if (prec === 0) prec = 1;
      digs = roundDigits(exact, prec);
    }
  }
  switch (fmt) {
    case 'e':
    case 'E':
      return fmtE(neg, digs, prec, fmt);
    case 'f':
      return fmtF(neg, digs, prec);
    default: {
      let eprec = prec;
      if (eprec > digs.d.length && digs.d.length >= digs.dp) eprec = digs.d.length;
      if (shortest) eprec = 6;
      const exp = digs.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (prec > digs.d.length) prec = digs.d.length;
        return fmtE(neg, digs, prec - 1, fmt === 'g' ? 'e' : 'E');
      }
      if (prec > digs.dp) prec = digs.d.length;
      return fmtF(neg, digs, Math.max(prec - digs.dp, 0));
    }
  }
}

// ---------------------------------------------------------------------------
// Quoting

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isPrint(r: number): boolean {
  if (r === 0x20) return true;
  if (r < 0x20 || r === 0x7f) return false;
  if (r < 0x7f) return true;
  if (r >= 0xd800 && r <= 0xdfff) return false;
  return printable.test(String.fromCodePoint(r));
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function escapeRune(r: number, quote: number, asciiOnly: boolean): string {
  if (r === quote || r === 0x5c) return '\\' + String.fromCharCode(r);
  if (asciiOnly ? r < 0x80 && isPrint(r) : isPrint(r)) return String.fromCodePoint(r);
  switch (r) {
    case 7:
      return '\\a';
    case 8:
      return '\\b';
    case 12:
      return '\\f';
    case 10:
      return '\\n';
    case 13:
      return '\\r';
    case 9:
      return '\\t';
    case 11:
      return '\\v';
  }
  if (r < 0x20 || r === 0x7f) return '\\x' + hex(r, 2);
  if (r >= 0xdc80 && r <= 0xdcff) return '\\x' + hex(r - 0xdc00, 2); // a byte outside valid UTF-8 (utf8Decode)
  if (r >= 0xd800 && r <= 0xdfff) return '\\ufffd'; // lone surrogate: Go sees invalid UTF-8 as U+FFFD
  if (r < 0x10000) return '\\u' + hex(r, 4);
  return '\\U' + hex(r, 8);
}

/** strconv.Quote (and QuoteToASCII with asciiOnly). */
export function quote(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) out += escapeRune(ch.codePointAt(0)!, 0x22, asciiOnly);
  return out + '"';
}

/** strconv.QuoteRune (and QuoteRuneToASCII). */
export function quoteRune(r: number, asciiOnly = false): string {
  if (r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff)) r = 0xfffd;
  return "'" + escapeRune(r, 0x27, asciiOnly) + "'";
}

/** strconv.CanBackquote. */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    if (r === 0x60 || r === 0xfeff) return false;
    if (r < 0x20 && r !== 9) return false;
    if (r === 0x7f) return false;
  }
  return true;
}

export class SyntaxError extends Error {}

/**
 * strconv.Unquote for "..." and `...` literals. Go strings are bytes: \x and
 * octal escapes produce bytes, which are decoded as UTF-8 at the end (a byte
 * outside valid UTF-8 stays one byte: see utf8Decode).
 */
export function unquote(lit: string): string {
  const q = lit[0];
  if (lit.length < 2 || lit[lit.length - 1] !== q) throw new SyntaxError('invalid syntax');
  const body = lit.slice(1, -1);
  if (q === '`') {
    if (body.includes('`')) throw new SyntaxError('invalid syntax');
    return body.replace(/\r/g, '');
  }
  if (q !== '"') throw new SyntaxError('invalid syntax');
  const bytes: number[] = [];
  const enc = new TextEncoder();
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === '"' || c === '\n') throw new SyntaxError('invalid syntax');
    if (c !== '\\') {
      const cp = body.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      bytes.push(...enc.encode(ch));
      i += ch.length;
      continue;
    }
    const [value, isByte, next] = unquoteEscape(body, i + 1, '"');
    if (isByte) bytes.push(value);
    else bytes.push(...enc.encode(String.fromCodePoint(value)));
    i = next;
  }
  return utf8Decode(new Uint8Array(bytes));
}

/** Decodes the escape after a backslash at s[i]; returns [value, isByte, nextIndex]. */
function unquoteEscape(s: string, i: number, q: string): [number, boolean, number] {
  const c = s[i];
  switch (c) {
    case 'a':
      return [7, false, i + 1];
    case 'b':
      return [8, false, i + 1];
    case 'f':
      return [12, false, i + 1];
    case 'n':
      return [10, false, i + 1];
    case 'r':
      return [13, false, i + 1];
    case 't':
      return [9, false, i + 1];
    case 'v':
      return [11, false, i + 1];
    case '\\':
      return [0x5c, false, i + 1];
    case 'x':
    case 'u':
    case 'U': {
      const n = c === 'x' ? 2 : c === 'u' ? 4 : 8;
      const h = s.slice(i + 1, i + 1 + n);
      if (h.length !== n || !/^[0-9a-fA-F]+$/.test(h)) throw new SyntaxError('invalid syntax');
      const v = parseInt(h, 16);
      if (c === 'x') return [v, true, i + 1 + n];
      if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) throw new SyntaxError('invalid syntax');
      return [v, false, i + 1 + n];
    }
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': {
      const o = s.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(o)) throw new SyntaxError('invalid syntax');
      const v = parseInt(o, 8);
      if (v > 255) throw new SyntaxError('invalid syntax');
      return [v, true, i + 3];
    }
    default:
      if (c === q) return [q.charCodeAt(0), false, i + 1];
      throw new SyntaxError('invalid syntax');
  }
}

/** strconv.UnquoteChar on a character literal 'x'; returns the rune. */
export function unquoteChar(lit: string): number {
  const body = lit.slice(1);
  if (body.length === 0) throw new SyntaxError('invalid syntax');
  let r: number;
  let next: number;
  if (body[0] === '\\') {
    const [v, , n] = unquoteEscape(body, 1, "'");
    r = v;
    next = n;
  } else {
    if (body[0] === "'") throw new SyntaxError('invalid syntax');
    r = body.codePointAt(0)!;
    next = String.fromCodePoint(r).length;
  }
  if (body.slice(next) !== "'") throw new MalformedCharError(`malformed character constant: ${lit}`);
  return r;
}

export class MalformedCharError extends Error {}

/**
 * strconv.FormatFloat's 'b' (`4503599627370496p-52`: mantissa and binary
 * exponent) and 'x'/'X' (`0x1.8p+01`: hexadecimal mantissa, binary exponent,
 * shortest unless a precision in hex digits is given, rounded to even).
 */
function formatBinary(x: number, fmt: 'b' | 'x' | 'X', prec: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const neg = bits >> 63n === 1n;
  let exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (exp === 0) exp++;
  else mant |= 1n << 52n;
  exp -= 1023;
  const sign = neg ? '-' : '';
  if (fmt === 'b') {
    exp -= 52;
    return `${sign}${mant}p${exp >= 0 ? '+' : '-'}${Math.abs(exp)}`;
  }
  if (mant === 0n) exp = 0;
  // Put the leading 1 (if any) at bit 60.
  mant <<= 8n;
  while (mant !== 0n && (mant & (1n << 60n)) === 0n) {
    mant <<= 1n;
    exp--;
  }
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4);
    const extra = (mant << shift) & ((1n << 60n) - 1n);
    mant >>= 60n - shift;
    if ((extra | (mant & 1n)) > 1n << 59n) mant++;
    mant <<= 60n - shift;
    if (mant & (1n << 61n)) {
      mant >>= 1n;
      exp++;
    }
  }
  const digits = fmt === 'X' ? '0123456789ABCDEF' : '0123456789abcdef';
  let out = sign + '0' + fmt + String(Number((mant >> 60n) & 1n));
  mant = (mant << 4n) & ((1n << 64n) - 1n);
  if (prec < 0 && mant !== 0n) {
    out += '.';
    while (mant !== 0n) {
      out += digits[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  } else if (prec > 0) {
    out += '.';
    for (let i = 0; i < prec; i++) {
      out += digits[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & ((1n << 64n) - 1n);
    }
  }
  out += fmt === 'X' ? 'P' : 'p';
  out += exp < 0 ? '-' : '+';
  const e = Math.abs(exp);
  return out + (e < 10 ? '0' + e : String(e));
}

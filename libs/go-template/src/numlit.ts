/**
 * Number literals of templates, read the way Go's text/template/parse
 * newNumber reads them with strconv.ParseUint/ParseInt (base 0),
 * strconv.ParseFloat and fmt.Sscan (for complex constants such as `1+2i`).
 * Each reader returns null where strconv reports an error, so the parser
 * can give Go's own message.
 */

/** strconv's underscoreOK: underscores only between digits (or after a base prefix). */
function underscoreOK(text: string): boolean {
  let s = text;
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && /[bBoOxX]/.test(s[1]!)) {
    i = 2;
    saw = '0';
    hex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/** strconv.ParseUint(text, 0, 64) without its range check (no sign allowed); null on bad syntax. */
function parseUnsigned(text: string): bigint | null {
  if (text === '') return null;
  let s = text;
  let base = 10;
  if (s[0] === '0') {
    const p = s.length >= 3 ? s[1]!.toLowerCase() : '';
    base = p === 'b' ? 2 : p === 'x' ? 16 : 8;
    s = s.slice(p === 'b' || p === 'o' || p === 'x' ? 2 : 1);
  }
  let v = 0n;
  let underscores = false;
  for (const c of s) {
    if (c === '_') {
      underscores = true;
      continue;
    }
    const d = parseInt(c, 36);
    if (Number.isNaN(d) || d >= base) return null;
    v = v * BigInt(base) + BigInt(d);
  }
  if (underscores && !underscoreOK(text)) return null;
  return v;
}

export const MAX_UINT64 = (1n << 64n) - 1n;

/** strconv.ParseUint(text, 0, 64); null on any error. */
export function parseUint64(text: string): bigint | null {
  const u = parseUnsigned(text);
  return u !== null && u <= MAX_UINT64 ? u : null;
}

/** strconv.ParseInt(text, 0, 64); null on any error. */
export function parseInt64(text: string): bigint | null {
  let s = text;
  let neg = false;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  const u = parseUnsigned(s);
  if (u === null) return null;
  const v = neg ? -u : u;
  return v >= -(1n << 63n) && v < 1n << 63n ? v : null;
}

/**
 * strconv.ParseFloat(text, 64): the value, or null on a syntax error or when
 * the value is out of range (Go returns ErrRange with ±Inf then).
 */
export function parseFloat64(text: string): number | null {
  const r = readFloat(text);
  return typeof r === 'number' ? r : null;
}

const DECIMAL = /^([+-]?)([0-9_]*)(?:\.([0-9_]*))?(?:[eE]([+-]?)([0-9][0-9_]*))?$/;
const HEX = /^([+-]?)0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?)([0-9][0-9_]*)$/;

/** strconv.ParseFloat: the value, or which error Go reports. */
function readFloat(text: string): number | 'syntax' | 'range' {
  // Go's readFloat: optional sign, digits with underscores and one dot, then an
  // exponent (e for decimal; p, which is required, for hex after 0x).
  const hex = /^[+-]?0[xX]./.test(text);
  const m = (hex ? HEX : DECIMAL).exec(text);
  if (!m) return 'syntax';
  const intPart = m[2]!.replace(/_/g, '');
  const frac = (m[3] ?? '').replace(/_/g, '');
  if (intPart + frac === '') return 'syntax';
  if (text.includes('_') && !underscoreOK(text)) return 'syntax';
  const sign = m[1] === '-' ? -1 : 1;
  const expDigits = (m[5] ?? '0').replace(/_/g, '');
  let v: number;
  if (hex) {
    const mant = BigInt('0x' + (intPart + frac || '0'));
    v = hexValue(mant, (m[4] === '-' ? -1 : 1) * Number(expDigits) - 4 * frac.length);
  } else {
    v = Number(`${intPart || '0'}.${frac || '0'}e${m[4] ?? ''}${expDigits}`);
  }
  if (!Number.isFinite(v)) return 'range';
  return sign * v;
}

/** mant × 2^exp rounded once to the nearest float64 (ties to even). */
function hexValue(mant: bigint, exp: number): number {
  if (mant === 0n) return 0;
  // Reduce to at most 64 significant bits, keeping a sticky bit, then let
  // the exact power-of-two scaling do the one rounding for normal results.
  const bits = mant.toString(2).length;
  if (bits > 64) {
    const drop = BigInt(bits - 64);
    const sticky = mant & ((1n << drop) - 1n) ? 1n : 0n;
    mant = (mant >> drop) | sticky;
    exp += Number(drop);
  }
  const top = mant.toString(2).length + exp; // value < 2^top
  if (top > 1025) return Infinity;
  if (top < -1080) return 0;
  // Split the scaling so that no intermediate overflows or underflows early.
  let v = Number(mant); // rounds to 53 bits: exact when mant < 2^53, else one rounding
  if (mant >= 1n << 53n) {
    // Round to the precision the final result has (subnormals have fewer bits).
    const keep = Math.min(53, Math.max(0, top + 1074));
    const shift = BigInt(mant.toString(2).length - keep);
    if (shift > 0n) {
      const half = 1n << (shift - 1n);
      const rest = mant & ((1n << shift) - 1n);
      let q = mant >> shift;
      if (rest > half || (rest === half && (q & 1n) === 1n)) q += 1n;
      v = Number(q);
      exp += Number(shift);
    }
  }
  return v * 2 ** Math.max(exp, -1022) * 2 ** Math.min(0, exp + 1022);
}

/** fmt.Sscan into a complex128 of a lexer complex token (`1+2i`); the two parts or Go's error text. */
export function scanComplex(text: string): [number, number] | string {
  const floatToken = (s: string, i: number): number => {
    if (s[i] === '+' || s[i] === '-') i++;
    let digits = /[0-9_]/;
    let exp = /[eE]/;
    if (s[i] === '0' && (s[i + 1] === 'x' || s[i + 1] === 'X')) {
      i += 2;
      digits = /[0-9a-fA-F_]/;
      exp = /[pP]/;
    } else if (s[i] === '0') i++;
    while (i < s.length && digits.test(s[i]!)) i++;
    if (s[i] === '.') {
      i++;
      while (i < s.length && digits.test(s[i]!)) i++;
    }
    if (i < s.length && exp.test(s[i]!)) {
      i++;
      if (s[i] === '+' || s[i] === '-') i++;
      while (i < s.length && /[0-9_]/.test(s[i]!)) i++;
    }
    return i;
  };
  const r = floatToken(text, 0);
  if (text[r] !== '+' && text[r] !== '-') return 'syntax error scanning complex number';
  const j = floatToken(text, r);
  if (text[j] !== 'i') return 'syntax error scanning complex number';
  const parts = [text.slice(0, r), text.slice(r, j)];
  const out: number[] = [];
  for (const p of parts) {
    const v = readFloat(p);
    if (typeof v !== 'number') {
      return `strconv.ParseFloat: parsing ${JSON.stringify(p)}: ${v === 'range' ? 'value out of range' : 'invalid syntax'}`;
    }
    out.push(v);
  }
  return [out[0]!, out[1]!];
}

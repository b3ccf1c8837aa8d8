/**
 * Go's fmt package for the template engine's values: the Printer (fmt's pp
 * and fmt types: verbs, flags, widths, precisions, `%!d(string=x)`), Sprint
 * and Sprintln live in sprintf.ts, re-exported here.
 */
import { canBackquote, formatFloat, isPrint, quote, quoteRune } from './strconv.js';
import { timeString } from './time.js';
import { floatValue, GoComplex, GoNamedInt, GoUint8, intValue, kindOf, runeCount, sortedEntries, toGoTime, typeName, utf8Bytes, utf8Decode } from './values.js';

export const ldigits = '0123456789abcdefx';
const udigits = '0123456789ABCDEFX';

/** A value's String() method, if it has one (Go's fmt.Stringer). */
export function stringerOf(v: unknown): (() => string) | undefined {
  const k = kindOf(v);
  if (k === 'time') {
    const t = toGoTime(v);
    return () => timeString(t);
  }
  if (v instanceof GoNamedInt) return () => v.String();
  if (k === 'struct') {
    const m = (v as { String?: unknown }).String;
    if (typeof m === 'function' && !Object.prototype.hasOwnProperty.call(v, 'String')) {
      return () => String((m as () => unknown).call(v));
    }
  }
  return undefined;
}

/** Own enumerable fields of a struct-like value, in declaration order. */
export function structFields(v: object): [string, unknown][] {
  return Object.keys(v)
    .filter((k) => typeof (v as Record<string, unknown>)[k] !== 'function')
    .map((k) => [k, (v as Record<string, unknown>)[k]]);
}

export class Printer {
  buf = '';
  // flags
  plus = false;
  minus = false;
  sharp = false;
  space = false;
  zero = false;
  plusV = false;
  sharpV = false;
  wid = 0;
  widPresent = false;
  prec = 0;
  precPresent = false;
  erroring = false;

  clearFlags(): void {
    this.plus = this.minus = this.sharp = this.space = this.zero = false;
    this.plusV = this.sharpV = false;
    this.wid = this.prec = 0;
    this.widPresent = this.precPresent = false;
  }

  writePadding(n: number): void {
    if (n <= 0) return;
    this.buf += (this.zero ? '0' : ' ').repeat(n);
  }

  pad(s: string): void {
    if (!this.widPresent || this.wid === 0) {
      this.buf += s;
      return;
    }
    const width = this.wid - runeCount(s);
    if (!this.minus) {
      this.writePadding(width);
      this.buf += s;
    } else {
      this.buf += s;
      this.writePadding(width);
    }
  }

  // --- basic formatters (fmt/format.go) ---

  fmtBoolean(v: boolean): void {
    this.pad(v ? 'true' : 'false');
  }

  fmtInteger(u: bigint, base: number, verb: string, digits: string): void {
    const negative = u < 0n;
    if (negative) u = -u;
    let prec = 0;
    if (this.precPresent) {
      prec = this.prec;
      if (prec === 0 && u === 0n) {
        const oldZero = this.zero;
        this.zero = false;
        this.writePadding(this.wid);
        this.zero = oldZero;
        return;
      }
    } else if (this.zero && this.widPresent) {
      prec = this.wid;
      if (negative || this.plus || this.space) prec--;
    }
    let s = u.toString(base);
    if (digits === udigits) s = s.toUpperCase();
    if (s.length < prec) s = '0'.repeat(prec - s.length) + s;
    if (this.sharp) {
      if (base === 2) s = '0b' + s;
      else if (base === 8 && s[0] !== '0') s = '0' + s;
      else if (base === 16) s = '0' + digits[16] + s;
    }
    if (verb === 'O') s = '0o' + s;
    if (negative) s = '-' + s;
    else if (this.plus) s = '+' + s;
    else if (this.space) s = ' ' + s;
    const oldZero = this.zero;
    this.zero = false;
    this.pad(s);
    this.zero = oldZero;
  }

  fmtUnicode(u: bigint): void {
    if (u < 0n) u += 1n << 64n; // Go formats the two's complement bits as a uint64
    let prec = 4;
    if (this.precPresent && this.prec > 4) prec = this.prec;
    let s = 'U+' + u.toString(16).toUpperCase().padStart(prec, '0');
    if (this.sharp && u <= 0x10ffffn && isPrint(Number(u))) {
      s += " '" + String.fromCodePoint(Number(u)) + "'";
    }
    const oldZero = this.zero;
    this.zero = false;
    this.pad(s);
    this.zero = oldZero;
  }

  fmtC(c: bigint): void {
    let r = Number(c);
    if (c > 0x10ffffn || c < 0n || (r >= 0xd800 && r <= 0xdfff)) r = 0xfffd;
    this.pad(String.fromCodePoint(r));
  }

  fmtQc(c: bigint): void {
    const r = c > 0x10ffffn || c < 0n ? 0xfffd : Number(c);
    this.pad(quoteRune(r, this.plus));
  }

  truncateString(s: string): string {
    if (this.precPresent) {
      let n = this.prec;
      let i = 0;
      for (const ch of s) {
        n--;
        if (n < 0) return s.slice(0, i);
        i += ch.length;
      }
    }
    return s;
  }

  fmtS(s: string): void {
    this.pad(this.truncateString(s));
  }

  fmtSbx(b: Uint8Array, digits: string): void {
    let length = b.length;
    if (this.precPresent && this.prec < length) length = this.prec;
    let width = 2 * length;
    if (width > 0) {
      if (this.space) {
        if (this.sharp) width *= 2;
        width += length - 1;
      } else if (this.sharp) width += 2;
    } else {
      if (this.widPresent) this.writePadding(this.wid);
      return;
    }
    if (this.widPresent && this.wid > width && !this.minus) this.writePadding(this.wid - width);
    let out = '';
    if (this.sharp) out += '0' + digits[16];
    for (let i = 0; i < length; i++) {
      if (this.space && i > 0) {
        out += ' ';
        if (this.sharp) out += '0' + digits[16];
      }
      const c = b[i]!;
      out += digits[c >> 4]! + digits[c & 0xf]!;
    }
    this.buf += out;
    if (this.widPresent && this.wid > width && this.minus) this.writePadding(this.wid - width);
  }

  fmtQ(s: string): void {
    s = this.truncateString(s);
    if (this.sharp && canBackquote(s)) {
      this.pad('`' + s + '`');
      return;
    }
    this.pad(quote(s, this.plus));
  }

  fmtFloatBase(v: number, verb: 'e' | 'E' | 'f' | 'g' | 'G' | 'b' | 'x' | 'X', prec: number): void {
    if (this.precPresent) prec = this.prec;
    let num = formatFloat(v, verb, prec);
    if (num[0] !== '-' && num[0] !== '+') num = '+' + num;
    if (this.space && num[0] === '+' && !this.plus) num = ' ' + num.slice(1);
    if (num[1] === 'I' || num[1] === 'N') {
      const oldZero = this.zero;
      this.zero = false;
      if (num[1] === 'N' && !this.space && !this.plus) num = num.slice(1);
      this.pad(num);
      this.zero = oldZero;
      return;
    }
    if (this.sharp && verb !== 'b') {
      // Go counts digits for %#x too (its 'x' of the 0x prefix included), not for %#X.
      let digits = 0;
      if (verb === 'g' || verb === 'G' || verb === 'x') digits = prec === -1 ? 6 : prec;
      let tail = '';
      const e = num.search(verb === 'x' || verb === 'X' ? /[pP]/ : /[eEpP]/);
      if (e >= 0) {
        tail = num.slice(e);
        num = num.slice(0, e);
      }
      let hasPoint = false;
      let sawNonzero = false;
      for (let i = 1; i < num.length; i++) {
        const c = num[i];
        if (c === '.') hasPoint = true;
        else {
          if (c !== '0') sawNonzero = true;
          if (sawNonzero) digits--;
        }
      }
      if (!hasPoint) {
        if (num.length === 2 && num[1] === '0') digits--;
        num += '.';
      }
      while (digits > 0) {
        num += '0';
        digits--;
      }
      num += tail;
    }
    if (this.plus || num[0] !== '+') {
      if (this.zero && this.widPresent && this.wid > num.length) {
        this.buf += num[0];
        this.writePadding(this.wid - num.length);
        this.buf += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  // --- per-type dispatch (fmt/print.go) ---

  fmtBool(v: boolean, verb: string, arg: unknown): void {
    if (verb === 't' || verb === 'v') this.fmtBoolean(v);
    else this.badVerb(verb, arg);
  }

  fmtIntegerVerb(v: bigint, verb: string, arg: unknown): void {
    switch (verb) {
      case 'v':
      case 'd':
        return this.fmtInteger(v, 10, verb, ldigits);
      case 'b':
        return this.fmtInteger(v, 2, verb, ldigits);
      case 'o':
      case 'O':
        return this.fmtInteger(v, 8, verb, ldigits);
      case 'x':
        return this.fmtInteger(v, 16, verb, ldigits);
      case 'X':
        return this.fmtInteger(v, 16, verb, udigits);
      case 'c':
        return this.fmtC(v);
      case 'q':
        return this.fmtQc(v);
      case 'U':
        return this.fmtUnicode(v);
      default:
        return this.badVerb(verb, arg);
    }
  }

  fmtFloat(v: number, verb: string, arg: unknown): void {
    switch (verb) {
      case 'v':
        return this.fmtFloatBase(v, 'g', -1);
      case 'g':
      case 'G':
        return this.fmtFloatBase(v, verb, -1);
      case 'f':
      case 'e':
      case 'E':
        return this.fmtFloatBase(v, verb, 6);
      case 'F':
        return this.fmtFloatBase(v, 'f', 6);
      case 'b':
      case 'x':
      case 'X':
        return this.fmtFloatBase(v, verb, -1);
      default:
        return this.badVerb(verb, arg);
    }
  }

  /** Go's fmtComplex: `(re+imi)`, each part with the float verb; the imaginary part always signed. */
  fmtComplex(v: GoComplex, verb: string, arg: unknown): void {
    if (!'vbgGxXfFeE'.includes(verb)) return this.badVerb(verb, arg);
    const oldPlus = this.plus;
    this.buf += '(';
    this.fmtFloat(v.re, verb, arg);
    this.plus = true;
    this.fmtFloat(v.im, verb, arg);
    this.buf += 'i)';
    this.plus = oldPlus;
  }

  fmtString(v: string, verb: string, arg: unknown): void {
    switch (verb) {
      case 'v':
        if (this.sharpV) return this.fmtQ(v);
        return this.fmtS(v);
      case 's':
        return this.fmtS(v);
      case 'x':
        return this.fmtSbx(utf8Bytes(v), ldigits);
      case 'X':
        return this.fmtSbx(utf8Bytes(v), udigits);
      case 'q':
        return this.fmtQ(v);
      default:
        return this.badVerb(verb, arg);
    }
  }

  fmtBytes(v: Uint8Array, verb: string, arg: unknown, depth: number): void {
    switch (verb) {
      case 'v':
      case 'd': {
        this.buf += '[';
        v.forEach((c, i) => {
          if (i > 0) this.buf += ' ';
          this.fmtInteger(BigInt(c), 10, verb, ldigits);
        });
        this.buf += ']';
        return;
      }
      case 's':
        return this.pad(this.truncateString(utf8Decode(v)));
      case 'x':
        return this.fmtSbx(v, ldigits);
      case 'X':
        return this.fmtSbx(v, udigits);
      case 'q':
        return this.fmtQ(utf8Decode(v));
      default:
        this.printSlice([...v], verb, depth);
        void arg;
    }
  }

  badVerb(verb: string, arg: unknown): void {
    this.erroring = true;
    this.buf += '%!' + verb + '(';
    if (arg === null || arg === undefined) this.buf += '<nil>';
    else {
      this.buf += typeName(arg) + '=';
      this.printArg(arg, 'v', 0);
    }
    this.buf += ')';
    this.erroring = false;
  }

  /** Stringer handling (handleMethods): only for verbs that accept strings. */
  handleMethods(arg: unknown, verb: string): boolean {
    if (this.erroring || this.sharpV) return false;
    if (verb !== 'v' && verb !== 's' && verb !== 'x' && verb !== 'X' && verb !== 'q') return false;
    const str = stringerOf(arg);
    if (!str) return false;
    this.fmtString(str(), verb, arg);
    return true;
  }

  printSlice(items: unknown[], verb: string, depth: number): void {
    if (this.sharpV) {
      this.buf += '[]interface {}{';
      items.forEach((x, i) => {
        if (i > 0) this.buf += ', ';
        this.printArg(x, verb, depth + 1);
      });
      this.buf += '}';
      return;
    }
    this.buf += '[';
    items.forEach((x, i) => {
      if (i > 0) this.buf += ' ';
      this.printArg(x, verb, depth + 1);
    });
    this.buf += ']';
  }

  /** printArg + printValue: formats one value with a verb. depth > 0 inside collections. */
  printArg(arg: unknown, verb: string, depth: number): void {
    const k = kindOf(arg);
    if (k === 'invalid' || k === 'nil') {
      if (depth > 0 || verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb, arg);
      return;
    }
    if (verb === 'T') {
      this.fmtS(typeName(arg));
      return;
    }
    if (arg instanceof GoNamedInt && this.handleMethods(arg, verb)) return;
    switch (k) {
      case 'bool':
        return this.fmtBool(arg as boolean, verb, arg);
      case 'int':
        // %#v of an unsigned integer is Go syntax in hex (0x62).
        if (arg instanceof GoUint8 && verb === 'v' && this.sharpV) {
          this.sharp = true;
          this.fmtInteger(BigInt(arg.value), 16, verb, ldigits);
          this.sharp = false;
          return;
        }
        return this.fmtIntegerVerb(BigInt(typeof arg === 'bigint' ? arg : intValue(arg)), verb, arg);
      case 'float':
        return this.fmtFloat(floatValue(arg), verb, arg);
      case 'complex':
        return this.fmtComplex(arg as GoComplex, verb, arg);
      case 'string':
        return this.fmtString(String(arg), verb, arg);
      case 'bytes':
        return this.fmtBytes(arg as Uint8Array, verb, arg, depth);
      default:
        break;
    }
    if (this.handleMethods(arg, verb)) return;
    switch (k) {
      case 'slice':
        return this.printSlice(arg as unknown[], verb, depth);
      case 'map': {
        const entries = sortedEntries(arg as object);
        this.buf += this.sharpV ? 'map[string]interface {}{' : 'map[';
        entries.forEach(([key, val], i) => {
          if (i > 0) this.buf += this.sharpV ? ', ' : ' ';
          this.printArg(key, verb, depth + 1);
          this.buf += ':';
          this.printArg(val, verb, depth + 1);
        });
        this.buf += this.sharpV ? '}' : ']';
        return;
      }
      case 'time':
        // Only reachable for verbs a Stringer does not serve; Go would print the struct's fields.
        return this.badVerb(verb, timeString(toGoTime(arg)));
      case 'struct': {
        const fields = structFields(arg as object);
        if (depth === 0) this.buf += '&';
        this.buf += '{';
        fields.forEach(([name, val], i) => {
          if (i > 0) this.buf += this.sharpV ? ', ' : ' ';
          if (this.plusV || this.sharpV) this.buf += name + ':';
          this.printArg(val, verb, depth + 1);
        });
        this.buf += '}';
        return;
      }
      case 'func':
        // Go prints the function's address; there is none to print here.
        this.pad('0x0');
        return;
    }
  }
}

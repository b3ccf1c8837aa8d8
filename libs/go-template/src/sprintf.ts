/**
 * fmt.Sprintf's reading of the format string (Go's doPrintf): flags, widths
 * and precisions (also from `*` arguments), explicit argument indexes
 * (`%[2]d`, `%[1]*d`, `%[3]*.[2]*[1]f`) and Go's error strings
 * (`%!d(BADINDEX)`, `%!(BADWIDTH)`, `%!(BADPREC)`, `%!v(MISSING)`,
 * `%!(NOVERB)`, `%!(EXTRA ...)`; EXTRA is not reported once an index is used),
 * and fmt.Sprint / fmt.Sprintln.
 */
import { Printer } from './format.js';
import { GoUint8, intValue, kindOf, typeName } from './values.js';

const TOO_LARGE = 1e6;

/** Go's parsenum: a decimal number in s[start:end]; overflow reads as no number. */
function parseNum(s: string, start: number, end: number): [number, boolean, number] {
  if (start >= end) return [0, false, end];
  let n = 0;
  let isNum = false;
  let i = start;
  for (; i < end && s[i]! >= '0' && s[i]! <= '9'; i++) {
    if (n > TOO_LARGE) return [0, false, end];
    n = n * 10 + (s.charCodeAt(i) - 48);
    isNum = true;
  }
  return [n, isNum, i];
}

/** Go's intFromArg: the argument as a width or precision. */
function intFromArg(args: unknown[], argNum: number): [number, boolean, number] {
  if (argNum >= args.length) return [0, false, argNum];
  const a = args[argNum];
  let n = 0;
  let ok = false;
  if (kindOf(a) === 'int' || a instanceof GoUint8) {
    const v = typeof a === 'bigint' ? Number(a) : intValue(a);
    if (Number.isSafeInteger(v)) {
      n = v;
      ok = true;
    }
  }
  if (n > TOO_LARGE || n < -TOO_LARGE) return [0, false, argNum + 1];
  return [n, ok, argNum + 1];
}

/** Go's parseArgNumber: `[n]` at the start of s; the zero-based index, the width read and whether it parsed. */
function parseArgNumber(s: string): [number, number, boolean] {
  if (s.length < 3) return [0, 1, false];
  for (let i = 1; i < s.length; i++) {
    if (s[i] === ']') {
      const [width, ok, newi] = parseNum(s, 1, i);
      if (!ok || newi !== i) return [0, i + 1, false];
      return [width - 1, i + 1, true];
    }
  }
  return [0, 1, false];
}

class FormatState {
  reordered = false;
  goodArgNum = true;

  /** Go's argNumber: an explicit index at format[i], if any. */
  argNumber(argNum: number, format: string, i: number, numArgs: number): [number, number, boolean] {
    if (format.length <= i || format[i] !== '[') return [argNum, i, false];
    this.reordered = true;
    const [index, wid, ok] = parseArgNumber(format.slice(i));
    if (ok && index >= 0 && index < numArgs) return [index, i + wid, true];
    this.goodArgNum = false;
    return [argNum, i + wid, ok];
  }
}

/** fmt.Sprintf. */
export function sprintf(format: string, args: unknown[]): string {
  const p = new Printer();
  const st = new FormatState();
  const end = format.length;
  let argNum = 0;
  let afterIndex = false;
  let i = 0;
  while (i < end) {
    st.goodArgNum = true;
    const lasti = i;
    while (i < end && format[i] !== '%') i++;
    if (i > lasti) p.buf += format.slice(lasti, i);
    if (i >= end) break;
    i++; // skip %
    p.clearFlags();
    flags: for (; i < end; i++) {
      switch (format[i]) {
        case '#':
          p.sharp = true;
          break;
        case '0':
          p.zero = !p.minus;
          break;
        case '+':
          p.plus = true;
          break;
        case '-':
          p.minus = true;
          p.zero = false;
          break;
        case ' ':
          p.space = true;
          break;
        default:
          break flags;
      }
    }
    [argNum, i, afterIndex] = st.argNumber(argNum, format, i, args.length);
    if (i < end && format[i] === '*') {
      i++;
      [p.wid, p.widPresent, argNum] = intFromArg(args, argNum);
      if (!p.widPresent) p.buf += '%!(BADWIDTH)';
      if (p.wid < 0) {
        p.wid = -p.wid;
        p.minus = true;
        p.zero = false;
      }
      afterIndex = false;
    } else {
      [p.wid, p.widPresent, i] = parseNum(format, i, end);
      if (afterIndex && p.widPresent) st.goodArgNum = false; // "%[3]2d"
    }
    if (i + 1 < end && format[i] === '.') {
      i++;
      if (afterIndex) st.goodArgNum = false; // "%[3].2d"
      [argNum, i, afterIndex] = st.argNumber(argNum, format, i, args.length);
      if (i < end && format[i] === '*') {
        i++;
        [p.prec, p.precPresent, argNum] = intFromArg(args, argNum);
        if (p.prec < 0) {
          p.prec = 0;
          p.precPresent = false;
        }
        if (!p.precPresent) p.buf += '%!(BADPREC)';
        afterIndex = false;
      } else {
        [p.prec, p.precPresent, i] = parseNum(format, i, end);
        if (!p.precPresent) {
          p.prec = 0;
          p.precPresent = true;
        }
      }
    }
    if (!afterIndex) [argNum, i, afterIndex] = st.argNumber(argNum, format, i, args.length);
    if (i >= end) {
      p.buf += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === '%') {
      p.buf += '%';
    } else if (!st.goodArgNum) {
      p.buf += '%!' + verb + '(BADINDEX)';
    } else if (argNum >= args.length) {
      p.buf += '%!' + verb + '(MISSING)';
    } else {
      if (verb === 'v') {
        p.sharpV = p.sharp;
        p.sharp = false;
        p.plusV = p.plus;
        p.plus = false;
      }
      p.printArg(args[argNum], verb, 0);
      argNum++;
    }
  }
  // Go skips the check once an index was used (arguments may be reused or skipped on purpose).
  if (!st.reordered && argNum < args.length) {
    p.clearFlags();
    p.buf += '%!(EXTRA ';
    args.slice(argNum).forEach((arg, j) => {
      if (j > 0) p.buf += ', ';
      if (arg === null || arg === undefined) p.buf += '<nil>';
      else {
        p.buf += typeName(arg) + '=';
        p.printArg(arg, 'v', 0);
      }
    });
    p.buf += ')';
  }
  return p.buf;
}

function isString(v: unknown): boolean {
  return typeof v === 'string';
}

/** fmt.Sprint: spaces between operands when neither side is a string. */
export function sprint(args: unknown[]): string {
  const p = new Printer();
  let prevString = false;
  args.forEach((arg, i) => {
    const s = isString(arg);
    if (i > 0 && !s && !prevString) p.buf += ' ';
    p.printArg(arg, 'v', 0);
    prevString = s;
  });
  return p.buf;
}

/** fmt.Sprintln: spaces between all operands and a trailing newline. */
export function sprintln(args: unknown[]): string {
  const p = new Printer();
  args.forEach((arg, i) => {
    if (i > 0) p.buf += ' ';
    p.printArg(arg, 'v', 0);
  });
  return p.buf + '\n';
}

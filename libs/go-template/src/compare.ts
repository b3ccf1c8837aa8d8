/**
 * Go's comparison builtins (text/template funcs.go: eq, ne, lt, le, gt, ge):
 * basic kinds only for ordering, integers compared across signedness,
 * Go 1.18+ rules for comparing other values, and Go's error wording
 * (`incompatible types for comparison`, `invalid type for comparison`,
 * `non-comparable type ...`).
 */
import { FuncError } from './func-error.js';
import { sprintf } from './sprintf.js';
import { compareStrings, floatValue, GoComplex, GoUint8, indirectInterface, intValue, kindOf, toGoTime, typeName } from './values.js';

const fail = (msg: string): never => {
  throw new FuncError(msg);
};

type BasicKind = 'invalid' | 'bool' | 'int' | 'uint' | 'float' | 'complex' | 'string';
const errBadComparisonType = 'invalid type for comparison';
const errBadComparison = 'incompatible types for comparison';

export function basicKind(v: unknown): BasicKind {
  if (v instanceof GoUint8) return 'uint';
  const k = kindOf(v);
  return k === 'bool' || k === 'int' || k === 'float' || k === 'complex' || k === 'string' ? k : 'invalid';
}

export function num(v: unknown, k: BasicKind): number | bigint {
  if (k === 'float') return floatValue(v);
  return typeof v === 'bigint' ? v : intValue(v);
}

const comparable = (v: unknown): boolean => {
  const k = kindOf(v);
  return k !== 'slice' && k !== 'bytes' && k !== 'map' && k !== 'func';
};

export function eq(arg1: unknown, ...arg2: unknown[]): boolean {
  arg1 = indirectInterface(arg1);
  if (arg2.length === 0) return fail('missing argument for comparison');
  const k1 = basicKind(arg1);
  for (let arg of arg2) {
    arg = indirectInterface(arg);
    const k2 = basicKind(arg);
    let t = false;
    if (k1 !== k2) {
      // Go compares integers regardless of the sign of their types.
      if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) {
        t = num(arg1, 'int') == num(arg, 'int');
      } else if (arg1 !== undefined && arg !== undefined) return fail(errBadComparison);
    } else {
      switch (k1) {
        case 'bool':
        case 'string':
          t = arg1 === arg;
          break;
        case 'complex':
          t = (arg1 as GoComplex).re === (arg as GoComplex).re && (arg1 as GoComplex).im === (arg as GoComplex).im;
          break;
        case 'int':
        case 'uint':
        case 'float':
          t = num(arg1, k1) == num(arg, k1);
          break;
        default: {
          const ka = kindOf(arg1);
          const kb = kindOf(arg);
          if (ka !== kb && ka !== 'invalid' && kb !== 'invalid') {
            return fail(`non-comparable types ${sprintf('%s', [arg1])}: ${typeName(arg1)}, ${typeName(arg)}: ${sprintf('%s', [arg])}`);
          }
          if (arg1 === undefined || arg === undefined) t = arg1 === arg;
          else if (!comparable(arg)) return fail(`non-comparable type ${sprintf('%s', [arg])}: ${typeName(arg)}`);
          else if (ka === 'time') {
            const x = toGoTime(arg1);
            const y = toGoTime(arg);
            t = x.sec === y.sec && x.nsec === y.nsec;
          } else t = arg1 === arg;
        }
      }
    }
    if (t) return true;
  }
  return false;
}

export function lt(arg1: unknown, arg2: unknown): boolean {
  arg1 = indirectInterface(arg1);
  const k1 = basicKind(arg1);
  if (k1 === 'invalid') return fail(errBadComparisonType);
  arg2 = indirectInterface(arg2);
  const k2 = basicKind(arg2);
  if (k2 === 'invalid') return fail(errBadComparisonType);
  if (k1 !== k2) {
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return num(arg1, 'int') < num(arg2, 'int');
    return fail(errBadComparison);
  }
  switch (k1) {
    case 'bool':
    case 'complex':
      return fail(errBadComparisonType);
    case 'string':
      return compareStrings(arg1 as string, arg2 as string) < 0;
    default:
      return num(arg1, k1) < num(arg2, k1);
  }
}

export const le = (a: unknown, b: unknown): boolean => lt(a, b) || eq(a, b);

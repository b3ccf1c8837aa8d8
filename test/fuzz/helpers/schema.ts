/**
 * Invalid values derived from a route's joi schema (`schema.describe()`), so
 * that routes and fields added later are fuzzed without touching this suite.
 * Every value returned here fails the schema it came from whatever the rest
 * of the request holds: a wrong type, a null for a required member (null is
 * an absent member: core/src/util/lenient.ts), a number or string out of its
 * declared bounds. Unknown keys are dropped, never refused: the suite sends
 * them together with a refused value (fuzz.ts). Keys whose validity depends on something else
 * (`when`, alternatives, `any`) are never chosen.
 */
import type { Rng } from './prng.js';
import { hostileString, jsonString } from './values.js';
import { routeSchema } from '@ferry/core/testing';

export interface Desc {
  type: string;
  flags?: { presence?: string; only?: boolean; unknown?: boolean; single?: boolean; empty?: unknown; default?: unknown; error?: unknown };
  keys?: Record<string, Desc>;
  items?: Desc[];
  patterns?: unknown[];
  renames?: unknown[];
  allow?: unknown[];
  truthy?: unknown[];
  falsy?: unknown[];
  rules?: { name: string; args?: Record<string, unknown> }[];
  whens?: unknown[];
  preferences?: { convert?: boolean };
}

export interface Schema {
  describe(): Desc;
}

export function describeOf(s: unknown): Desc | undefined {
  // the server binds each route's schema into a validator that keeps it (core's http/route-validation.ts)
  const schema = routeSchema(s);
  return schema ? (schema.describe() as Desc) : undefined;
}

const ruleArg = (d: Desc, name: string, arg = 'limit'): number | undefined => {
  const v = d.rules?.find((x) => x.name === name)?.args?.[arg];
  return typeof v === 'number' ? v : undefined;
};

/** Whether the description's validity is self-contained (no references, conditions or alternatives). */
export function plain(d: Desc): boolean {
  if (d.whens?.length) return false;
  if (d.rules?.some((x) => x.name === 'custom' && d.type !== 'string' && d.type !== 'object')) return false;
  return ['string', 'number', 'boolean', 'object', 'array', 'date'].includes(d.type);
}

/** The RegExp of a described `pattern` rule ("/source/flags"). */
function regexOf(text: string | undefined): RegExp | undefined {
  const m = text ? /^\/(.*)\/([a-z]*)$/s.exec(text) : null;
  return m ? new RegExp(m[1]!, m[2]) : undefined;
}

/** Whether `null` (a JSON null) is accepted. */
const nullAllowed = (d: Desc) => (d.allow ?? []).includes(null);

/** Unknown keys are refused: no `.unknown()`, no `.pattern()`. */
export function closedObject(d: Desc): boolean {
  return d.type === 'object' && !d.flags?.unknown && !d.patterns?.length && d.keys !== undefined;
}

/** The JSON text of a value this description refuses, or undefined when none is certain. */
export function invalidFor(r: Rng, d: Desc): string | undefined {
  if (!plain(d)) return undefined;
  const allowed = new Set((d.allow ?? []).map((v) => JSON.stringify(v)));
  const ok = (text: string) => !allowed.has(text);
  const c: string[] = [];
  // a null member is an absent one: refused only where the member is required
  if (!nullAllowed(d) && d.flags?.presence === 'required') c.push('null');
  switch (d.type) {
    case 'string': {
      c.push('12345', '-1.5', 'true', '{}', '[]', '[' + jsonString('a') + ']', '{"a":' + jsonString(hostileString(r)) + '}');
      const max = ruleArg(d, 'max');
      if (max !== undefined) {
        const long = 'x'.repeat(max + 1 + r.int(64));
        c.push(jsonString(long), jsonString('\ud800'.repeat(max + 1)), jsonString('é'.repeat(max + 1)));
      }
      if (d.flags?.only) c.push(jsonString('fz-not-one-of-' + r.int(1000)));
      const pattern = d.rules?.find((x) => x.name === 'pattern');
      const re = regexOf((pattern?.args as { regex?: string } | undefined)?.regex);
      if (re && re.source.includes('\\u0000-\\u001f')) {
        // names: what the pattern refuses (control characters, and separators where it says so);
        // lone surrogates are refused at the edge whatever the pattern
        const names = ['fz\u0000name', `fz${String.fromCharCode(r.range(1, 31))}`, 'fz/name', 'fz\\name', '\u0085fz', '\u007ffz'].filter((v) => !re.test(v));
        c.push(...names.map(jsonString), jsonString('fz\ud800'), jsonString('\udfffz'));
      }
      break;
    }
    case 'number': {
      c.push(jsonString('abc'), 'true', '{}', '[]', '[1]', '1e309', '-1e309', jsonString('1e309'), '18446744073709551616', '-18446744073709551617');
      if (!d.flags?.empty) c.push(jsonString(''));
      if (d.rules?.some((x) => x.name === 'integer')) c.push('1.5', jsonString('2.25'));
      const min = ruleArg(d, 'min');
      if (min !== undefined && Number.isSafeInteger(min - 1)) c.push(String(min - 1));
      const max = ruleArg(d, 'max');
      if (max !== undefined && Number.isSafeInteger(max + 1)) c.push(String(max + 1));
      const greater = ruleArg(d, 'greater');
      if (greater !== undefined) c.push(String(greater));
      if (d.flags?.only) {
        const vals = (d.allow ?? []).filter((v): v is number => typeof v === 'number');
        const out = vals.length ? Math.max(...vals) + 1 + r.int(1000) : 987654;
        c.push(String(out), String(-out));
      }
      break;
    }
    case 'boolean': {
      const soft = new Set([...(d.truthy ?? []), ...(d.falsy ?? [])].map((v) => JSON.stringify(v)));
      for (const v of [jsonString('maybe'), '7', '{}', '[]', jsonString('yes please'), '0.5']) if (!soft.has(v)) c.push(v);
      break;
    }
    case 'object':
      c.push(jsonString('str'), '7', '[]', 'true', '[{}]');
      break;
    case 'array': {
      if (!d.flags?.single) c.push(jsonString('str'), '7', '{}', 'true');
      const item = d.items?.length === 1 ? d.items[0]! : undefined;
      if (item) {
        const bad = invalidFor(r, item);
        if (bad !== undefined) c.push(`[${bad}]`);
      }
      const max = ruleArg(d, 'max');
      if (max !== undefined && max < 10_000 && item?.type === 'string') c.push(`[${Array.from({ length: max + 1 }, (_, i) => jsonString('i' + i)).join(',')}]`);
      break;
    }
    case 'date':
      c.push(jsonString('not a date'), '{}', 'true', '[]');
      break;
  }
  const usable = c.filter(ok);
  return usable.length ? r.pick(usable) : undefined;
}

/** Paths to keys inside an object description (nested objects followed), for keys with a certain invalid value. */
export function keyPaths(d: Desc, depth = 3, prefix: string[] = []): string[][] {
  if (d.type !== 'object' || !d.keys || d.whens?.length) return [];
  const out: string[][] = [];
  for (const [k, sub] of Object.entries(d.keys)) {
    if (!plain(sub)) continue;
    out.push([...prefix, k]);
    if (depth > 1 && sub.type === 'object') out.push(...keyPaths(sub, depth - 1, [...prefix, k]));
  }
  return out;
}

export function descAt(d: Desc, path: string[]): Desc | undefined {
  let cur: Desc | undefined = d;
  for (const k of path) cur = cur?.keys?.[k];
  return cur;
}

/** Required keys of an object description. */
export function requiredKeys(d: Desc): string[] {
  return Object.entries(d.keys ?? {})
    .filter(([, s]) => s.flags?.presence === 'required')
    .map(([k]) => k);
}

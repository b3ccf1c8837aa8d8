/**
 * Name patterns of rule conditions (ConditionPattern): shell wildcards as Go's
 * path.Match understands them (`*` and `?` never cross '/', `[a-z]`,
 * `[^a-z]`, `\` escapes), and `**` (any run of characters, '/' included) as
 * doublestar does.
 */
import type { ConditionPattern } from '../sdk/accounts.js';

export type { ConditionPattern } from '../sdk/accounts.js';

const cache = new Map<string, RegExp | null>();

function escapeRe(c: string): string {
  return /[.*+?^${}()|[\]\\/-]/.test(c) ? `\\${c}` : c;
}

/** Compiles a wildcard pattern; null when it is malformed (an unterminated class). */
export function compileWildcard(pattern: string): RegExp | null {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  let re = '';
  let ok = true;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        re += '.*';
        while (pattern[i + 1] === '*') i++;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '\\') {
      i++;
      if (i >= pattern.length) {
        ok = false;
        break;
      }
      re += escapeRe(pattern[i]!);
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        ok = false;
        break;
      }
      let body = pattern.slice(i + 1, end);
      let neg = false;
      if (body.startsWith('^') || body.startsWith('!')) {
        neg = true;
        body = body.slice(1);
      }
      const cls = body.replace(/\\(.)/g, '$1').replace(/[\]\\^]/g, (m) => `\\${m}`);
      re += neg ? `[^/${cls}]` : `[${cls}]`;
      i = end;
    } else re += escapeRe(c);
  }
  let out: RegExp | null = null;
  if (ok) {
    try {
      out = new RegExp(`^${re}$`, 's');
    } catch {
      out = null;
    }
  }
  if (cache.size > 2000) cache.clear();
  cache.set(pattern, out);
  return out;
}

/** True when the pattern is well formed. */
export function isValidWildcard(pattern: string): boolean {
  return compileWildcard(pattern) !== null;
}

/** One pattern against one name, honouring inverse_match. A malformed pattern never matches. */
export function matchPattern(p: ConditionPattern, name: string): boolean {
  const re = compileWildcard(p.pattern);
  if (!re) return false;
  const m = re.test(name);
  return p.inverse_match ? !m : m;
}

/**
 * A name against a list of patterns. No patterns: everything matches. A
 * plain pattern that matches is enough; inverse patterns must all hold
 * (`names: [{pattern: "tmp*", inverse_match: true}]` is "not tmp*").
 */
export function matchPatterns(name: string, patterns: ConditionPattern[] | undefined): boolean {
  if (!patterns?.length) return true;
  let matches = false;
  for (const p of patterns) {
    if (p.inverse_match) {
      if (matchPattern(p, name)) matches = true;
      else return false;
    } else if (matchPattern(p, name)) return true;
  }
  return matches;
}

/** Several names (a user's groups) against patterns: some name must match; an inverse pattern must hold for every name. */
export function matchAnyPatterns(names: string[], patterns: ConditionPattern[] | undefined): boolean {
  if (!patterns?.length) return true;
  let matches = false;
  for (const n of names) {
    for (const p of patterns) {
      if (p.inverse_match) {
        if (matchPattern(p, n)) matches = true;
        else return false;
      } else if (matchPattern(p, n)) return true;
    }
  }
  return matches;
}

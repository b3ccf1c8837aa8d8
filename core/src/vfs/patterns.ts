import { baseName, isSubPath, parentPath } from '../fs/path.js';

/** A BaseUserFilters.file_patterns entry. */
export interface PatternsFilter {
  path: string;
  allowed_patterns?: string[];
  denied_patterns?: string[];
  /** 0: denied names are visible but refused; 1: denied names are hidden (treated as missing). */
  deny_policy?: number;
}

export const DENY_POLICY_DEFAULT = 0;
export const DENY_POLICY_HIDE = 1;

/** Converts a shell pattern (`*`, `?`, `[a-z]`, `[^x]` / `[!x]`, `\x`) into an anchored RegExp. */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i]!);
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) {
        re += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, close);
      let neg = '';
      if (body.startsWith('^') || body.startsWith('!')) {
        neg = '^';
        body = body.slice(1);
      }
      re += `[${neg}${body.replace(/[\]\\]/g, '\\$&')}]`;
      i = close;
    } else re += escapeRe(c);
  }
  return new RegExp(`^${re}$`, 's');
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function normKey(k: string): string {
  const segs = k
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  return '/' + segs.join('/');
}

interface CompiledFilter {
  path: string;
  allowed: RegExp[];
  denied: RegExp[];
  policy: number;
}

export interface PatternVerdict {
  allowed: boolean;
  /** The filter's deny policy (meaningful when not allowed). */
  policy: number;
}

/**
 * File name filters per directory. The filter of a path is the one configured
 * for its directory or the nearest ancestor; its patterns are matched,
 * case-insensitively, against the base name: a denied match refuses, then an
 * allowed match accepts, and a filter with allowed patterns refuses every
 * other name. Names with no filter are allowed.
 */
export class PatternFilters {
  private readonly filters: CompiledFilter[];

  constructor(list: PatternsFilter[] | undefined) {
    this.filters = (list ?? [])
      .map((f) => ({
        path: normKey(f.path ?? '/'),
        allowed: (f.allowed_patterns ?? []).map((p) => globToRegExp(p.toLowerCase())),
        denied: (f.denied_patterns ?? []).map((p) => globToRegExp(p.toLowerCase())),
        policy: f.deny_policy ?? DENY_POLICY_DEFAULT,
      }))
      .sort((a, b) => b.path.length - a.path.length);
  }

  get empty(): boolean {
    return this.filters.length === 0;
  }

  check(vpath: string): PatternVerdict {
    if (vpath === '/' || this.filters.length === 0) return { allowed: true, policy: DENY_POLICY_DEFAULT };
    const dir = parentPath(vpath);
    const f = this.filters.find((x) => isSubPath(x.path, dir));
    if (!f) return { allowed: true, policy: DENY_POLICY_DEFAULT };
    const name = baseName(vpath).toLowerCase();
    if (f.denied.some((r) => r.test(name))) return { allowed: false, policy: f.policy };
    if (f.allowed.some((r) => r.test(name))) return { allowed: true, policy: f.policy };
    return { allowed: f.allowed.length === 0, policy: f.policy };
  }

  /** True when the name is denied with the hide policy (left out of listings, treated as missing). */
  isHidden(vpath: string): boolean {
    const v = this.check(vpath);
    return !v.allowed && v.policy === DENY_POLICY_HIDE;
  }
}

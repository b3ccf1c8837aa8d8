import { FsError, FsErrorCode, isFsError } from '@ferry/core';
import type { FsRun } from './ops.js';
import { MetaCondition, type MetadataCheckConfig, type MetadataCondition } from './schema.js';

/** `*` any run of characters, `?` one character; everything else literal; the whole value must match. */
export function globMatch(pattern: string, value: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[\\s\\S]*')
    .replace(/\?/g, '[\\s\\S]');
  return new RegExp(`^${re}$`).test(value);
}

function metaProblem(c: MetadataCondition, meta: Record<string, string>): string | null {
  const has = Object.hasOwn(meta, c.key);
  const v = meta[c.key];
  switch (c.condition) {
    case MetaCondition.Present:
      return has ? null : `metadata "${c.key}" is absent`;
    case MetaCondition.Absent:
      return has ? `metadata "${c.key}" is present` : null;
    case MetaCondition.NotEquals:
      return has && v === c.value ? `metadata "${c.key}" is "${c.value}"` : null;
    case MetaCondition.Matches:
      if (!has) return `metadata "${c.key}" is absent`;
      return globMatch(c.value, v!) ? null : `metadata "${c.key}" ("${v}") does not match "${c.value}"`;
    default:
      if (!has) return `metadata "${c.key}" is absent`;
      return v === c.value ? null : `metadata "${c.key}" is "${v}", not "${c.value}"`;
  }
}

/**
 * 8: checks each file against every condition set (size and age bounds,
 * inclusive; user metadata conditions); the action fails naming each
 * condition that does not hold, so stop_on_failure and failure actions can
 * react. A missing path, a directory, or metadata conditions on a backend
 * without user metadata fail too.
 */
export async function metadataCheck(r: FsRun, cfg: MetadataCheckConfig, now = Date.now()): Promise<void> {
  const failures: string[] = [];
  for (const p of cfg.paths) {
    const vp = r.files.path(p);
    const info = await r.files.statOrNull(vp, { signal: r.signal });
    if (!info) {
      failures.push(`${vp}: does not exist`);
      continue;
    }
    if (info.isDir) {
      failures.push(`${vp}: is a directory`);
      continue;
    }
    const problems: string[] = [];
    if (cfg.min_size >= 0 && info.size < cfg.min_size) problems.push(`size ${info.size} is below min_size ${cfg.min_size}`);
    if (cfg.max_size >= 0 && info.size > cfg.max_size) problems.push(`size ${info.size} is above max_size ${cfg.max_size}`);
    const age = Math.floor((now - info.mtime.getTime()) / 1000);
    if (cfg.min_age >= 0 && age < cfg.min_age) problems.push(`modified ${age}s ago, less than min_age ${cfg.min_age}s`);
    if (cfg.max_age >= 0 && age > cfg.max_age) problems.push(`modified ${age}s ago, more than max_age ${cfg.max_age}s`);
    if (cfg.metadata.length) {
      let meta: Record<string, string> | undefined;
      try {
        meta = await r.files.metadata(vp, { signal: r.signal });
      } catch (err) {
        if (!isFsError(err, FsErrorCode.NotSupported)) throw err;
        problems.push('the storage backend has no user metadata');
      }
      if (meta)
        for (const c of cfg.metadata) {
          const m = metaProblem(c, meta);
          if (m) problems.push(m);
        }
    }
    if (problems.length) failures.push(`${vp}: ${problems.join(', ')}`);
  }
  if (failures.length) throw new FsError(FsErrorCode.Invalid, `metadata check failed: ${failures.join('; ')}`);
}

import { isSubPath, parentPath } from '../fs/path.js';

/** The user permissions the file API checks (a subset of USER_PERMISSIONS). */
export type FilePermission =
  | 'list'
  | 'download'
  | 'upload'
  | 'overwrite'
  | 'delete'
  | 'delete_files'
  | 'delete_dirs'
  | 'rename'
  | 'rename_files'
  | 'rename_dirs'
  | 'create_dirs'
  | 'chtimes'
  | 'copy';

/** Normalises a configured permission key ('/a/b/', 'a\\b') the way virtual paths are normalised, without throwing. */
function normKey(k: string): string {
  const segs = k
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  return '/' + segs.join('/');
}

/**
 * Per-path user permissions. The permissions of a virtual path are those of
 * the deepest configured path that is the path itself or one of its
 * ancestors ('/' being the last resort); no match means no permission.
 */
export class PermissionSet {
  private readonly entries: { path: string; perms: Set<string> }[];

  constructor(permissions: Record<string, string[]>) {
    this.entries = Object.entries(permissions ?? {})
      .map(([p, perms]) => ({ path: normKey(p), perms: new Set(perms) }))
      // deepest first, so the first match wins
      .sort((a, b) => b.path.length - a.path.length);
  }

  /** The permissions in force for a normalised virtual path. */
  forPath(vpath: string): Set<string> {
    for (const e of this.entries) if (isSubPath(e.path, vpath)) return e.perms;
    return new Set();
  }

  /** True when `vpath` grants `*` or any of `perms`. */
  has(vpath: string, ...perms: FilePermission[]): boolean {
    const set = this.forPath(vpath);
    return set.has('*') || perms.some((p) => set.has(p));
  }

  /** Permission on the directory holding `vpath` (what file operations check). */
  hasInParent(vpath: string, ...perms: FilePermission[]): boolean {
    return this.has(parentPath(vpath), ...perms);
  }

  /** Configured paths strictly below `vpath` (recursive operations must respect them too). */
  pathsBelow(vpath: string): string[] {
    return this.entries.filter((e) => e.path !== vpath && isSubPath(vpath, e.path)).map((e) => e.path);
  }
}

/** What an anonymous account (`filters.is_anonymous`) keeps of its permissions: listing and downloading. */
const ANONYMOUS_PERMISSIONS = ['list', 'download'];

/**
 * The permissions of an anonymous account: each path's reduced to list and
 * download ('*' gives both), whatever else it grants. Every write (upload,
 * overwrite, mkdir, rename, delete, chtimes, copy) is then refused with the
 * usual permission error.
 */
export function anonymousPermissions(permissions: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(permissions ?? {}).map(([p, perms]) => [
      p,
      perms.includes('*') ? [...ANONYMOUS_PERMISSIONS] : perms.filter((x) => ANONYMOUS_PERMISSIONS.includes(x)),
    ]),
  );
}

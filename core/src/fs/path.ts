import path from 'node:path';
import { FsError, FsErrorCode } from './fs-error.js';

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
/** Percent-encoded dot, slash or backslash left in an already decoded path: a double-encoding attempt. */
const ENCODED_SPECIAL = /%(2e|2f|5c|25)/i;

/**
 * Normalises a client-supplied virtual path: both '/' and '\' separate
 * segments, the result is absolute POSIX ('/a/b'), without '.', empty or
 * trailing segments. Any '..' segment, control character or left-over
 * percent-encoded separator or dot is refused: Ferry never "resolves" such a
 * path, so no spelling of it can reach outside the root.
 */
export function normalizeVirtualPath(input: string | undefined | null): string {
  const raw = (input ?? '').trim();
  if (CONTROL_CHARS.test(raw)) {
    throw new FsError(FsErrorCode.Invalid, 'path contains control characters', { path: raw });
  }
  if (ENCODED_SPECIAL.test(raw)) {
    throw new FsError(FsErrorCode.Escape, 'path contains an encoded dot, separator or percent sign', { path: raw });
  }
  const segments: string[] = [];
  for (const seg of raw.replace(/\\/g, '/').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..' || /^\.{2,}$/.test(seg.trim())) {
      throw new FsError(FsErrorCode.Escape, "path must not contain '..' segments", { path: raw });
    }
    segments.push(seg);
  }
  return '/' + segments.join('/');
}

/** Joins a normalised virtual directory and a child name, validating the name. */
export function joinVirtualPath(dir: string, name: string): string {
  return normalizeVirtualPath(`${dir}/${name}`);
}

/** Parent of a normalised path ('/' for '/' and top-level entries). */
export function parentPath(p: string): string {
  return path.posix.dirname(p);
}

/** Base name of a normalised path ('' for '/'). */
export function baseName(p: string): string {
  return p === '/' ? '' : path.posix.basename(p);
}

/** True when `child` is `parent` or lies beneath it (both normalised). */
export function isSubPath(parent: string, child: string): boolean {
  if (parent === '/') return child.startsWith('/');
  return child === parent || child.startsWith(parent + '/');
}

/**
 * Maps a normalised backend path onto a local root directory and checks the
 * result stays inside it. Backends that touch the local disk use it for every
 * access (symlink checks are the backend's job: see fs-local).
 */
export function confineLocal(root: string, p: string): string {
  const absRoot = path.resolve(root);
  const target = path.resolve(absRoot, '.' + normalizeVirtualPath(p));
  if (target !== absRoot && !target.startsWith(absRoot + path.sep)) {
    throw new FsError(FsErrorCode.Escape, 'path escapes the root', { path: p });
  }
  return target;
}

/**
 * Joins an object-store key prefix and a normalised path into a key with no
 * leading slash ('prefix/a/b'). The result always stays under the prefix.
 */
export function prefixedKey(prefix: string, p: string): string {
  const norm = normalizeVirtualPath(p).slice(1);
  const pre = normalizePrefix(prefix);
  return pre + norm;
}

/** Normalises a key prefix to '' or 'a/b/' (no leading slash, one trailing slash). */
export function normalizePrefix(prefix: string | undefined): string {
  const p = normalizeVirtualPath(prefix ?? '').slice(1);
  return p === '' ? '' : p + '/';
}

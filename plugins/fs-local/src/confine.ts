import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { FsError, FsErrorCode, confineLocal, fsErrorFromNode, hasNodeCode, normalizeVirtualPath } from '@ferry/core';
import { HIDDEN_TMP_PREFIX, isReservedName } from './temp-area.js';

/**
 * How the last path component is treated:
 * - 'follow': resolve it too (stat, read, write, list, copy, chtimes act on
 *   what a symlink points to, and refuse when that is outside the root);
 * - 'entry': leave it as is (remove, rename and mkdir act on the directory
 *   entry itself, so removing a symlink removes the link, never its target).
 */
export type ResolveMode = 'follow' | 'entry';

function isInside(realRoot: string, real: string): boolean {
  if (realRoot === path.parse(realRoot).root) return true;
  return real === realRoot || real.startsWith(realRoot + path.sep);
}

/**
 * Keeps every access under one local root, symlinks included.
 *
 * 1. `confineLocal` from @ferry/core normalises the virtual path and refuses
 *    '..', encoded dots and separators, control characters; the result is a
 *    lexical path under the root.
 * 2. The real path of the deepest existing ancestor (of the path itself in
 *    'follow' mode, of its parent in 'entry' mode) is resolved with
 *    realpath(3); if it is outside the real root the call fails with ESCAPE.
 *    Missing components are appended to that real path, so nothing created
 *    later can be reached through a symlink that was not checked.
 * 3. A dangling symlink on the way (whose target is missing) is refused with
 *    ESCAPE: following it would create its target wherever it points.
 * 4. A path with a segment in the reserved `.ferry-tmp-` namespace (the
 *    hidden copies beside a destination, see temp-area.ts) is refused with
 *    PERMISSION: users can neither create nor address such entries.
 *
 * This is defence in depth against links planted in a home directory by
 * other means (a shared folder, an admin's shell); a concurrent swap of a
 * checked directory for a link (TOCTOU) is out of its scope.
 */
export class LocalRoot {
  /** The root as configured, made absolute. */
  readonly root: string;
  private real?: Promise<string>;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** realpath of the root, resolved once. */
  realRoot(): Promise<string> {
    this.real ??= realpath(this.root).catch((err: unknown) => {
      this.real = undefined;
      throw fsErrorFromNode(err, '/');
    });
    return this.real;
  }

  /** True when an already resolved real path lies under the real root. */
  async contains(real: string): Promise<boolean> {
    return isInside(await this.realRoot(), real);
  }

  /** Maps a virtual path to a checked local path (see the class comment). */
  async resolve(p: string, mode: ResolveMode): Promise<string> {
    refuseReserved(p);
    const lexical = confineLocal(this.root, p);
    const realRoot = await this.realRoot();
    const tail: string[] = [];
    let cur = lexical;
    if (mode === 'entry' && cur !== this.root) {
      tail.push(path.basename(cur));
      cur = path.dirname(cur);
    }
    for (;;) {
      let real: string;
      try {
        real = cur === this.root ? realRoot : await realpath(cur);
      } catch (err) {
        if (!hasNodeCode(err, 'ENOENT', 'ENOTDIR')) throw fsErrorFromNode(err, p);
        if (await isDanglingLink(cur)) {
          throw new FsError(FsErrorCode.Escape, `${p}: refusing to follow a dangling symbolic link`, { path: p });
        }
        tail.unshift(path.basename(cur));
        cur = path.dirname(cur);
        continue;
      }
      if (!isInside(realRoot, real)) {
        throw new FsError(FsErrorCode.Escape, `${p}: resolves outside the root through a symbolic link`, { path: p });
      }
      return tail.length ? path.join(real, ...tail) : real;
    }
  }
}

/** Refuses a path that names an entry in the reserved `.ferry-tmp-` namespace. */
export function refuseReserved(p: string): void {
  const vpath = normalizeVirtualPath(p);
  if (vpath.split('/').some(isReservedName)) {
    throw new FsError(FsErrorCode.Permission, `${vpath}: names starting with "${HIDDEN_TMP_PREFIX}" are reserved for Ferry's uploads in progress`, {
      path: vpath,
    });
  }
}

async function isDanglingLink(p: string): Promise<boolean> {
  try {
    return (await lstat(p)).isSymbolicLink();
  } catch {
    return false;
  }
}

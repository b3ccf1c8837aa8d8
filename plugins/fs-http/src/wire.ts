import { randomBytes } from 'node:crypto';
import { baseName, FsError, FsErrorCode, joinVirtualPath, parentPath, type FileInfo } from '@ferry/core';

/** FileInfo as the httpfs protocol sends it (every field unchecked). */
export interface WireFileInfo {
  name?: unknown;
  size?: unknown;
  /** A Go fs.FileMode: permission bits plus type bits in the high bits. */
  mode?: unknown;
  last_modified?: unknown;
}

/** Go's fs.ModeDir and fs.ModeSymlink. */
export const GO_MODE_DIR = 0x80000000;
export const GO_MODE_SYMLINK = 0x08000000;

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

/**
 * Reads a wire mode. The protocol's `mode` is a Go FileMode (directory bit
 * 1<<31); a server that sends a POSIX st_mode instead (S_IFDIR in bits 12-15,
 * which Go leaves unused) is understood too.
 */
export function fromWireMode(raw: number): { isDir: boolean; mode: number } {
  const m = raw >>> 0;
  const perm = m & 0o777;
  const posixType = m & S_IFMT;
  if ((m & GO_MODE_DIR) !== 0 || posixType === S_IFDIR) return { isDir: true, mode: S_IFDIR | perm };
  if ((m & GO_MODE_SYMLINK) !== 0 || posixType === S_IFLNK) return { isDir: false, mode: S_IFLNK | perm };
  return { isDir: false, mode: S_IFREG | perm };
}

function malformed(path: string, what: string): FsError {
  return new FsError(FsErrorCode.Unavailable, `${path}: httpfs server sent a malformed FileInfo (${what})`, { path });
}

/** Converts a wire FileInfo about `path` (the name is taken from the path). */
export function toFileInfo(w: WireFileInfo, path: string): FileInfo {
  if (typeof w !== 'object' || w === null) throw malformed(path, 'not an object');
  const size = typeof w.size === 'number' && Number.isSafeInteger(w.size) && w.size >= 0 ? w.size : undefined;
  if (size === undefined) throw malformed(path, 'size');
  if (typeof w.mode !== 'number' || !Number.isInteger(w.mode)) throw malformed(path, 'mode');
  const mtime = typeof w.last_modified === 'string' ? new Date(w.last_modified) : new Date(NaN);
  if (Number.isNaN(mtime.getTime())) throw malformed(path, 'last_modified');
  const { isDir, mode } = fromWireMode(w.mode);
  return { name: baseName(path), path, isDir, size: isDir ? 0 : size, mtime, mode };
}

/**
 * The Ferry path of a listed entry, or undefined when the name cannot be
 * addressed through Ferry ('', '.', '..', separators, control characters,
 * encoded separators): such entries are skipped, never followed, so a
 * misbehaving server cannot steer a path outside the listed directory.
 */
export function childPath(dir: string, name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '' || name.includes('/') || name.includes('\\')) return undefined;
  try {
    const p = joinVirtualPath(dir, name);
    return parentPath(p) === dir && baseName(p) === name ? p : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Uploads go to a hidden sibling with this name and are renamed over the
 * destination once complete (see README, "Atomic uploads").
 */
export const TEMP_NAME = /^\.ferry-upload-[0-9a-f]{16}\.part$/;

export function tempPathFor(path: string): string {
  return joinVirtualPath(parentPath(path), `.ferry-upload-${randomBytes(8).toString('hex')}.part`);
}

import { FsError, FsErrorCode } from '../fs/fs-error.js';

/** Node.js error codes and the FsError code each one maps to. */
const NODE_CODES: Record<string, FsErrorCode> = {
  ENOENT: FsErrorCode.NotFound,
  EEXIST: FsErrorCode.Exists,
  EACCES: FsErrorCode.Permission,
  EPERM: FsErrorCode.Permission,
  EROFS: FsErrorCode.Permission,
  ENOTDIR: FsErrorCode.NotDirectory,
  EISDIR: FsErrorCode.IsDirectory,
  ENOTEMPTY: FsErrorCode.NotEmpty,
  EXDEV: FsErrorCode.CrossDevice,
  ENOSPC: FsErrorCode.Quota,
  EDQUOT: FsErrorCode.Quota,
  EFBIG: FsErrorCode.Quota,
  EINVAL: FsErrorCode.Invalid,
  ENAMETOOLONG: FsErrorCode.Invalid,
  ELOOP: FsErrorCode.Invalid,
  ABORT_ERR: FsErrorCode.Aborted,
  EMFILE: FsErrorCode.Unavailable,
  ENFILE: FsErrorCode.Unavailable,
  EBUSY: FsErrorCode.Unavailable,
  EAGAIN: FsErrorCode.Unavailable,
  EIO: FsErrorCode.Unavailable,
};

const DESCRIPTIONS: Partial<Record<FsErrorCode, string>> = {
  NOT_FOUND: 'no such file or directory',
  EXISTS: 'already exists',
  PERMISSION: 'permission denied',
  NOT_DIR: 'not a directory',
  IS_DIR: 'is a directory',
  NOT_EMPTY: 'directory not empty',
  CROSS_DEVICE: 'cross-device operation',
  QUOTA: 'no space left or quota exceeded',
  INVALID: 'invalid argument',
  ABORTED: 'operation aborted',
  UNAVAILABLE: 'resource temporarily unavailable',
};

/**
 * Maps an error raised by `node:fs` (or an AbortError) to an FsError about
 * `path`, keeping the original as `cause`. FsErrors pass through unchanged and
 * errors with no known mapping are returned as they are, so callers can always
 * `throw fsErrorFromNode(err, path)`.
 *
 * `overrides` changes the mapping for one call site, e.g. `{ EEXIST: 'NOT_EMPTY' }`
 * for rmdir, where some systems report a non-empty directory as EEXIST.
 */
export function fsErrorFromNode(err: unknown, path: string, overrides: Partial<Record<string, FsErrorCode>> = {}): Error {
  if (err instanceof FsError) return err;
  const e = err as NodeJS.ErrnoException | undefined;
  const nodeCode = e?.name === 'AbortError' ? 'ABORT_ERR' : e?.code;
  const code = nodeCode ? (overrides[nodeCode] ?? NODE_CODES[nodeCode]) : undefined;
  if (!code) return err instanceof Error ? err : new Error(String(err));
  return new FsError(code, `${path}: ${DESCRIPTIONS[code] ?? code.toLowerCase()}`, { path, cause: err });
}

/** True when `err` is a Node.js error with the given errno code (e.g. 'ENOENT'). */
export function hasNodeCode(err: unknown, ...codes: string[]): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && codes.includes(code);
}

import { FsError, FsErrorCode, isFsError } from '@ferry/core';

const HTTP_TO_CODE: Record<number, FsErrorCode> = {
  400: FsErrorCode.Invalid,
  401: FsErrorCode.Permission,
  403: FsErrorCode.Permission,
  404: FsErrorCode.NotFound,
  409: FsErrorCode.Exists,
  412: FsErrorCode.Exists, // ifGenerationMatch=0 on an existing object
  429: FsErrorCode.Unavailable,
  500: FsErrorCode.Unavailable,
  502: FsErrorCode.Unavailable,
  503: FsErrorCode.Unavailable,
  504: FsErrorCode.Unavailable,
};

const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

interface ApiErrorLike {
  code?: unknown;
  status?: unknown;
  name?: unknown;
  message?: unknown;
  response?: { status?: unknown };
}

/** HTTP status of a @google-cloud/storage (ApiError / GaxiosError) error. */
export function httpStatus(err: unknown): number | undefined {
  const e = err as ApiErrorLike | null;
  for (const v of [e?.code, e?.status, e?.response?.status]) {
    if (typeof v === 'number' && v >= 100 && v < 600) return v;
    if (typeof v === 'string' && /^\d{3}$/.test(v)) return Number(v);
  }
  return undefined;
}

export const isNotFound = (err: unknown): boolean => httpStatus(err) === 404;

/**
 * Maps a Cloud Storage error to an FsError about `path` (the Fs path, never
 * the key, which would reveal the prefix). Unknown errors keep their message.
 */
export function mapGcsError(err: unknown, op: string, path: string): Error {
  if (isFsError(err)) return err;
  const e = (err ?? {}) as ApiErrorLike;
  const detail = String(e.message ?? err);
  if (e.name === 'AbortError' || (/aborted/i.test(detail) && e.name !== 'ApiError')) return FsError.aborted(path);
  const status = httpStatus(err);
  const code = status === undefined ? undefined : HTTP_TO_CODE[status];
  if (code === FsErrorCode.NotFound) return FsError.notFound(path, err);
  if (code === FsErrorCode.Exists) return FsError.exists(path, err);
  if (code) return new FsError(code, `gcs: ${op} ${path}: ${detail}`, { path, cause: err });
  if ((typeof e.code === 'string' && NET_CODES.has(e.code)) || /socket hang up|network|timeout/i.test(detail)) {
    return new FsError(FsErrorCode.Unavailable, `gcs: ${op} ${path}: ${detail}`, { path, cause: err });
  }
  if (/invalid_grant|unauthorized_client|Could not load the default credentials|invalid_client/i.test(detail)) {
    return new FsError(FsErrorCode.Permission, `gcs: credentials refused: ${detail}`, { path, cause: err });
  }
  return new Error(`gcs: ${op} ${path}: ${detail}`, { cause: err });
}

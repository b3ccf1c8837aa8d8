import { FsError, FsErrorCode } from '@ferry/core';

/**
 * What an httpfs server may put in the ApiResponse `error` field of a 409 (or
 * any error): errno names, as the reference server sends them. A server that
 * sends nothing there still gets the status-based mapping below.
 */
const ERRNO_CODES: Record<string, FsErrorCode> = {
  ENOENT: FsErrorCode.NotFound,
  EEXIST: FsErrorCode.Exists,
  ENOTEMPTY: FsErrorCode.NotEmpty,
  ENOTDIR: FsErrorCode.NotDirectory,
  EISDIR: FsErrorCode.IsDirectory,
  EXDEV: FsErrorCode.CrossDevice,
  EACCES: FsErrorCode.Permission,
  EPERM: FsErrorCode.Permission,
  ENOSPC: FsErrorCode.Quota,
  EDQUOT: FsErrorCode.Quota,
  EFBIG: FsErrorCode.Quota,
  EINVAL: FsErrorCode.Invalid,
};

/**
 * HTTP status → FsError code. The httpfs reference defines 401/403 as
 * permission denied, 404 as not found, 501 as unsupported and every other
 * code as a generic error; Ferry refines the generic part.
 */
export function codeForStatus(status: number, errno?: string): FsErrorCode {
  if (status === 401 || status === 403) return FsErrorCode.Permission;
  if (status === 404) return FsErrorCode.NotFound;
  if (status === 501) return FsErrorCode.NotSupported;
  if (status === 413 || status === 507) return FsErrorCode.Quota;
  if (status === 409) return (errno && ERRNO_CODES[errno]) || FsErrorCode.Exists;
  if (status === 400 || status === 405 || status === 422) {
    return errno === 'ENOENT' ? FsErrorCode.NotFound : FsErrorCode.Invalid;
  }
  return FsErrorCode.Unavailable; // 408, 429, 5xx, unexpected 3xx
}

/** Builds the FsError for a non-2xx answer; the server's message is kept, trimmed. */
export function errorFromResponse(status: number, body: { message?: unknown; error?: unknown }, path: string): FsError {
  const errno = typeof body.error === 'string' ? body.error : undefined;
  const code = codeForStatus(status, errno);
  const said = typeof body.message === 'string' && body.message !== '' ? body.message : undefined;
  const detail = said ? sanitize(said) : `HTTP ${status}`;
  return new FsError(code, `${path}: ${detail} (httpfs ${status}${errno ? ` ${sanitize(errno)}` : ''})`, { path });
}

function sanitize(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 200);
}

interface TransportError {
  name?: string;
  code?: string;
  message?: string;
}

/**
 * Maps an error thrown while talking to the server (undici or socket
 * errors) to an FsError: ABORTED when the caller's signal fired, otherwise
 * UNAVAILABLE with the transport error as cause.
 */
export function transportError(err: unknown, path: string, how: { aborted: boolean; timedOutMs?: number }): FsError {
  if (err instanceof FsError) return err;
  if (how.aborted) return new FsError(FsErrorCode.Aborted, `${path}: operation aborted`, { path, cause: err });
  const e = (err ?? {}) as TransportError;
  if (how.timedOutMs !== undefined) {
    return new FsError(FsErrorCode.Unavailable, `${path}: httpfs server did not answer within ${how.timedOutMs} ms`, {
      path,
      cause: err,
    });
  }
  const what = e.code ?? e.name ?? 'error';
  const tls = /CERT|SELF_SIGNED|TLS|SSL/i.test(`${e.code ?? ''} ${e.message ?? ''}`)
    ? ' (TLS verification failed: use a trusted certificate, or skip_tls_verify for test servers)'
    : '';
  return new FsError(FsErrorCode.Unavailable, `${path}: httpfs server unreachable: ${what}${tls}`, { path, cause: err });
}

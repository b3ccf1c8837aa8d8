import { FsError, FsErrorCode } from '@ferry/core';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'REQUEST_SEND_ERROR',
]);

interface RestLikeError {
  name?: string;
  code?: string;
  statusCode?: number;
  message?: string;
  details?: { errorCode?: string };
}

function codeOf(e: RestLikeError): string {
  return e.details?.errorCode ?? e.code ?? '';
}

export function isNotFound(err: unknown): boolean {
  const e = (err ?? {}) as RestLikeError;
  if (codeOf(e) === 'ContainerNotFound') return false;
  return e.statusCode === 404 || codeOf(e) === 'BlobNotFound';
}

export function isInvalidRange(err: unknown): boolean {
  const e = (err ?? {}) as RestLikeError;
  return e.statusCode === 416 || codeOf(e) === 'InvalidRange';
}

/** Maps an @azure/storage-blob (RestError) or network error to an FsError. */
export function mapAzError(err: unknown, path: string, container: string): FsError {
  if (err instanceof FsError) return err;
  const e = (err ?? {}) as RestLikeError;
  const code = codeOf(e);
  const status = e.statusCode;
  if (e.name === 'AbortError' || e.code === 'ABORT_ERR') return FsError.aborted(path);
  if (code === 'ContainerNotFound') {
    return new FsError(FsErrorCode.Unavailable, `Azure container "${container}" does not exist (ContainerNotFound)`, {
      path,
      cause: err,
    });
  }
  if (isNotFound(err)) return FsError.notFound(path, err);
  if (status === 403 || status === 401 || /^Authoriz|^Authentic|^InsufficientAccountPermissions/.test(code)) {
    return new FsError(FsErrorCode.Permission, `${path}: access denied by Azure (${code || status})`, {
      path,
      cause: err,
    });
  }
  if (code === 'BlobAlreadyExists' || status === 412 || code === 'ConditionNotMet') return FsError.exists(path, err);
  if (isInvalidRange(err)) {
    return new FsError(FsErrorCode.Invalid, `${path}: requested range not satisfiable`, { path, cause: err });
  }
  if (NETWORK_CODES.has(e.code ?? '') || (status !== undefined && status >= 500) || e.name === 'TimeoutError') {
    return new FsError(FsErrorCode.Unavailable, `Azure Blob unavailable: ${e.message || e.code}`, { path, cause: err });
  }
  if (status !== undefined && status >= 400) {
    return new FsError(FsErrorCode.Invalid, `${path}: Azure refused the request (${code || status}): ${e.message ?? ''}`, {
      path,
      cause: err,
    });
  }
  return new FsError(FsErrorCode.Unavailable, `Azure Blob error: ${e.message ?? String(err)}`, { path, cause: err });
}

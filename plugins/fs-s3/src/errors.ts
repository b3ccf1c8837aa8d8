import { FsError, FsErrorCode } from '@ferry/core';

/** Node/undici error codes meaning the server could not be reached or dropped the connection. */
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
  'UND_ERR_SOCKET',
]);

interface AwsLikeError {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { statusCode?: number };
}

function statusOf(e: AwsLikeError): number | undefined {
  return e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
}

/** True for the answers an S3 server gives when an object (or upload) does not exist. */
export function isNotFound(err: unknown): boolean {
  const e = err as AwsLikeError;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'NoSuchBucket' || e.Code === 'NoSuchBucket') return false;
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || statusOf(e) === 404;
}

export function isInvalidRange(err: unknown): boolean {
  const e = err as AwsLikeError;
  return e?.name === 'InvalidRange' || statusOf(e) === 416;
}

/**
 * Maps an AWS SDK (or network) error to an FsError. `path` is the Ferry path
 * the operation was about; `bucket` names the bucket in NoSuchBucket errors.
 */
export function mapS3Error(err: unknown, path: string, bucket: string): FsError {
  if (err instanceof FsError) return err;
  const e = (err ?? {}) as AwsLikeError;
  const name = e.name ?? '';
  const status = statusOf(e);
  if (name === 'AbortError' || e.code === 'ABORT_ERR') return FsError.aborted(path);
  if (name === 'NoSuchBucket' || e.Code === 'NoSuchBucket') {
    return new FsError(FsErrorCode.Unavailable, `S3 bucket "${bucket}" does not exist (NoSuchBucket)`, {
      path,
      cause: err,
    });
  }
  if (isNotFound(err)) return FsError.notFound(path, err);
  if (status === 403 || ['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken'].includes(name)) {
    return new FsError(FsErrorCode.Permission, `${path}: access denied by S3 (${name || status})`, { path, cause: err });
  }
  if (name === 'EntityTooLarge' || name === 'QuotaExceeded') {
    return new FsError(FsErrorCode.Quota, `${path}: ${e.message ?? name}`, { path, cause: err });
  }
  if (isInvalidRange(err)) {
    return new FsError(FsErrorCode.Invalid, `${path}: requested range not satisfiable`, { path, cause: err });
  }
  if (
    NETWORK_CODES.has(e.code ?? '') ||
    name === 'TimeoutError' ||
    name === 'RequestTimeout' ||
    (status !== undefined && status >= 500) ||
    (status === undefined && typeof e.code === 'string' && e.code.startsWith('E'))
  ) {
    return new FsError(FsErrorCode.Unavailable, `S3 unavailable: ${e.message || e.code || name}`, { path, cause: err });
  }
  if (status === 412 || name === 'PreconditionFailed') return FsError.exists(path, err);
  if (status !== undefined && status >= 400) {
    return new FsError(FsErrorCode.Invalid, `${path}: S3 refused the request (${name || status}): ${e.message ?? ''}`, {
      path,
      cause: err,
    });
  }
  return new FsError(FsErrorCode.Unavailable, `S3 error: ${e.message ?? String(err)}`, { path, cause: err });
}

import { FsError, FsErrorCode, isFsError } from '@ferry/core';

/** SFTP status codes (draft-ietf-secsh-filexfer; OpenSSH speaks v3, later codes come from other servers). */
export const SftpStatus = {
  Eof: 1,
  NoSuchFile: 2,
  PermissionDenied: 3,
  Failure: 4,
  NoConnection: 6,
  ConnectionLost: 7,
  OpUnsupported: 8,
  FileAlreadyExists: 11,
  NoSpaceOnFilesystem: 14,
  QuotaExceeded: 15,
  DirNotEmpty: 18,
  NotADirectory: 19,
  FileIsADirectory: 24,
} as const;

const STATUS_TO_CODE: Record<number, FsErrorCode> = {
  [SftpStatus.NoSuchFile]: FsErrorCode.NotFound,
  [SftpStatus.PermissionDenied]: FsErrorCode.Permission,
  [SftpStatus.NoConnection]: FsErrorCode.Unavailable,
  [SftpStatus.ConnectionLost]: FsErrorCode.Unavailable,
  [SftpStatus.OpUnsupported]: FsErrorCode.NotSupported,
  [SftpStatus.FileAlreadyExists]: FsErrorCode.Exists,
  [SftpStatus.NoSpaceOnFilesystem]: FsErrorCode.Quota,
  [SftpStatus.QuotaExceeded]: FsErrorCode.Quota,
  [SftpStatus.DirNotEmpty]: FsErrorCode.NotEmpty,
  [SftpStatus.NotADirectory]: FsErrorCode.NotDirectory,
  [SftpStatus.FileIsADirectory]: FsErrorCode.IsDirectory,
};

const NET_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

interface NativeError {
  code?: unknown;
  level?: unknown;
  message?: unknown;
}

/** The numeric SFTP status of an ssh2 error, if it carries one. */
export function sftpStatus(err: unknown): number | undefined {
  const code = (err as NativeError | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * True for errors that mean the SSH connection (not the request) failed: the
 * caller may retry an idempotent operation on a fresh connection.
 */
export function isConnectionError(err: unknown): boolean {
  if (isFsError(err)) return err.code === FsErrorCode.Unavailable;
  const e = err as NativeError | null;
  if (!e) return false;
  const status = sftpStatus(e);
  if (status === SftpStatus.NoConnection || status === SftpStatus.ConnectionLost) return true;
  if (typeof e.code === 'string' && NET_UNAVAILABLE.has(e.code)) return true;
  const msg = String(e.message ?? '');
  return /No response from server|Not connected|No SFTP connection|Unexpected (end|close)|Channel (not open|closed)|connection (lost|closed)/i.test(msg);
}

/** Maps an error raised while connecting (TCP, handshake, authentication). */
export function connectError(err: unknown, endpoint: string, username: string): FsError {
  if (isFsError(err)) return err;
  const e = (err ?? {}) as NativeError;
  const msg = String(e.message ?? err);
  if (e.level === 'client-authentication' || /authentication methods failed/i.test(msg)) {
    return new FsError(FsErrorCode.Permission, `sftp: authentication failed for user "${username}" at ${endpoint} (check password / private key)`, {
      cause: err,
    });
  }
  if (/key.*(passphrase|encrypted)|Cannot parse privateKey|Unsupported key format/i.test(msg)) {
    return new FsError(FsErrorCode.Invalid, `sftp: cannot use the private key: ${msg}`, { cause: err });
  }
  if (e.level === 'client-timeout' || /timed out/i.test(msg)) {
    return new FsError(FsErrorCode.Unavailable, `sftp: connection to ${endpoint} timed out`, { cause: err });
  }
  return new FsError(FsErrorCode.Unavailable, `sftp: cannot connect to ${endpoint}: ${msg.replace(/^\w+: /, '')}`, {
    cause: err,
  });
}

/**
 * Maps an SFTP request error to an FsError. `path` is the Fs-relative path the
 * caller asked about (never the remote one, which would reveal the prefix).
 */
export function mapSftpError(err: unknown, op: string, path: string): Error {
  if (isFsError(err)) return err;
  if ((err as Error | null)?.name === 'AbortError') return FsError.aborted(path);
  const status = sftpStatus(err);
  const fsCode = status === undefined ? undefined : STATUS_TO_CODE[status];
  const detail = String((err as NativeError | null)?.message ?? err);
  if (fsCode === FsErrorCode.NotFound) return FsError.notFound(path, err);
  if (fsCode === FsErrorCode.NotSupported) return new FsError(fsCode, `sftp: ${op} is not supported by the server`, { path, cause: err });
  if (fsCode) return new FsError(fsCode, `sftp: ${op} ${path}: ${detail}`, { path, cause: err });
  if (isConnectionError(err)) {
    return new FsError(FsErrorCode.Unavailable, `sftp: connection lost during ${op} ${path}: ${detail}`, { path, cause: err });
  }
  return new Error(`sftp: ${op} ${path}: ${detail}`, { cause: err });
}

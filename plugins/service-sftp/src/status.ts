import { DomainError, ErrorKind, FsError, FsErrorCode } from '@ferry/core';
import ssh2 from './ssh2-module.js';

export const STATUS = ssh2.utils.sftp.STATUS_CODE;

/** An SFTP status answer: its code and the message the client shows. */
export interface SftpStatus {
  code: number;
  message: string;
}

/** A refusal the SFTP layer decides itself (bad handle, unsupported request...). */
export class SftpStatusError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SftpStatusError';
  }
}

/** Maps the errors of file sessions (FsError, domain errors) to SFTP v3 statuses, with their message. */
export function statusOf(err: unknown): SftpStatus {
  if (err instanceof SftpStatusError) return { code: err.code, message: err.message };
  if (err instanceof FsError) {
    switch (err.code) {
      case FsErrorCode.NotFound:
        return { code: STATUS.NO_SUCH_FILE, message: err.message };
      case FsErrorCode.Permission:
      case FsErrorCode.Escape:
        return { code: STATUS.PERMISSION_DENIED, message: err.message };
      case FsErrorCode.NotSupported:
        return { code: STATUS.OP_UNSUPPORTED, message: err.message };
      default:
        return { code: STATUS.FAILURE, message: err.message };
    }
  }
  if (err instanceof DomainError) {
    if (err.kind === ErrorKind.NotFound) return { code: STATUS.NO_SUCH_FILE, message: err.message };
    if (err.kind === ErrorKind.Forbidden || err.kind === ErrorKind.Unauthorized) return { code: STATUS.PERMISSION_DENIED, message: err.message };
    return { code: STATUS.FAILURE, message: err.message };
  }
  // an unexpected error: its message may name server internals
  return { code: STATUS.FAILURE, message: 'internal error' };
}

import { DomainError, ErrorKind, FsError, FsErrorCode } from '@ferry/core';

/** An FTP refusal decided by the service itself: its reply code and text. */
export class FtpReply extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'FtpReply';
  }
}

/** Maps the errors of file sessions (FsError, domain errors) to an FTP reply line. */
export function replyOf(err: unknown): string {
  if (err instanceof FtpReply) return `${err.code} ${err.message}`;
  const text = (m: string) => m.replace(/[\r\n]+/g, ' ');
  if (err instanceof FsError) {
    switch (err.code) {
      case FsErrorCode.Quota:
        return `552 ${text(err.message)}`;
      case FsErrorCode.Invalid:
        return `553 ${text(err.message)}`;
      case FsErrorCode.NotSupported:
        return `504 ${text(err.message)}`;
      case FsErrorCode.Aborted:
        return '426 Transfer aborted.';
      case FsErrorCode.Unavailable:
        return `451 ${text(err.message)}`;
      default:
        return `550 ${text(err.message)}`;
    }
  }
  if (err instanceof DomainError) {
    if (err.kind === ErrorKind.TooManyRequests) return `421 ${text(err.message)}`;
    return `550 ${text(err.message)}`;
  }
  // an unexpected error: its message may name server internals
  return '451 Local error in processing.';
}

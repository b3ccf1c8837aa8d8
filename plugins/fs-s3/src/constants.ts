/**
 * SDK-free constants of the provider: the package entry imports them without
 * loading @aws-sdk/*, which only the `@ferry/fs-s3/lib` half needs.
 */
import type { FsCapabilities } from '@ferry/core';

export const S3_CAPABILITIES: FsCapabilities = Object.freeze({
  rangeRead: true,
  atomicRename: false,
  serverSideCopy: true,
  realDirectories: false,
  settableMtime: false,
  atomicUpload: false,
  // writeAtOffset and truncate left out (false): objects are written whole
});

/** Object metadata key holding the modification time (ms since the epoch). */
export const MTIME_META = 'ferry-mtime';
export const FILE_MODE = 0o100644;
export const DIR_MODE = 0o040755;

/** Network time limits of the S3 (and STS) clients, in ms. */
export interface S3Timeouts {
  /** TCP (and TLS) connection establishment. */
  connectTimeoutMs: number;
  /**
   * Socket inactivity: a request (or a response body) that moves no byte for this
   * long fails. A long transfer that keeps moving is never cut.
   */
  idleTimeoutMs: number;
}

export const DEFAULT_S3_TIMEOUTS: Readonly<S3Timeouts> = Object.freeze({ connectTimeoutMs: 10_000, idleTimeoutMs: 120_000 });

/** A role session name from a username: 2-64 chars of [\w+=,.@-]. */
export function roleSessionName(username: string): string {
  const clean = `ferry-${username}`.replace(/[^\w+=,.@-]/g, '_');
  return clean.slice(0, 64);
}

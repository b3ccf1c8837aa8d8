/**
 * SDK-free parts of the provider: the package entry imports them without
 * loading ssh2 / ssh2-sftp-client, which only the `@ferry/fs-sftp/lib` half needs.
 */
import { createHash } from 'node:crypto';
import type { FsCapabilities } from '@ferry/core';

export const SFTP_CAPABILITIES: FsCapabilities = {
  rangeRead: true,
  atomicRename: true,
  serverSideCopy: false,
  realDirectories: true,
  settableMtime: true,
  atomicUpload: true,
  writeAtOffset: true, // the file opened without truncation, written in place (sftp-write-at.ts)
  truncate: true, // setstat with a size
};

/** SHA256 fingerprint of an SSH public key blob, as `ssh-keygen -l` prints it. */
export function fingerprintOf(keyBlob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '');
}

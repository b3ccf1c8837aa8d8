/**
 * SDK-free constants of the provider: the package entry imports them without
 * loading undici, which only the `@ferry/fs-http/lib` half (and the first
 * connection pool) needs.
 */
import type { FsCapabilities } from '@ferry/core';

export const HTTP_CAPABILITIES: FsCapabilities = Object.freeze({
  rangeRead: true,
  atomicRename: true,
  serverSideCopy: false,
  realDirectories: true,
  settableMtime: true,
  atomicUpload: true,
  writeAtOffset: false, // the protocol writes a file whole
  truncate: true, // PATCH ?op=truncate
});

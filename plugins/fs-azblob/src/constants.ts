/**
 * SDK-free constants of the provider: the package entry imports them without
 * loading @azure/storage-blob, which only the `@ferry/fs-azblob/lib` half needs.
 */
import type { FsCapabilities } from '@ferry/core';

export const AZBLOB_CAPABILITIES: FsCapabilities = Object.freeze({
  rangeRead: true,
  atomicRename: false,
  serverSideCopy: true,
  realDirectories: false,
  settableMtime: false,
  atomicUpload: false,
  // writeAtOffset and truncate left out (false): objects are written whole
});

/** Blob metadata key holding the modification time (ms since the epoch). */
export const MTIME_META = 'ferry_mtime';
export const FILE_MODE = 0o100644;
export const DIR_MODE = 0o040755;

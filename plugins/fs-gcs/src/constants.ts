/**
 * SDK-free constants of the provider: the package entry imports them without
 * loading @google-cloud/storage, which only the `@ferry/fs-gcs/lib` half needs.
 */
import type { FsCapabilities } from '@ferry/core';

export const GCS_CAPABILITIES: FsCapabilities = Object.freeze({
  rangeRead: true,
  atomicRename: false, // copy + delete
  serverSideCopy: true,
  realDirectories: false, // flat key space; "dir/" marker objects
  settableMtime: true, // custom metadata
  atomicUpload: false, // objects appear complete, but beforePublish is not supported
  // writeAtOffset and truncate left out (false): objects are written whole
});

/** Custom metadata key holding the modification time (ms since the epoch) set by Ferry. */
export const MTIME_META = 'ferry-mtime';

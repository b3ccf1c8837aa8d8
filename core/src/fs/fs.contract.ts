import type { Readable, Writable } from 'node:stream';

/**
 * What a backend can do, declared (never probed). The core and the
 * conformance suite read these flags to choose strategies and to skip checks
 * that do not apply.
 */
export interface FsCapabilities {
  /** openRead honours start/end without reading the bytes before start. */
  rangeRead: boolean;
  /** rename() is atomic and may replace an existing file. */
  atomicRename: boolean;
  /** copy() is implemented server side (no bytes flow through Ferry). */
  serverSideCopy: boolean;
  /** Directories exist as real objects (false for flat key spaces that emulate them). */
  realDirectories: boolean;
  /** chtimes() is implemented. */
  settableMtime: boolean;
  /**
   * Uploads are written to a temporary location and published only when
   * complete, and WriteOptions.beforePublish is honoured.
   */
  atomicUpload: boolean;
  /**
   * writeAt() is implemented: an existing file is written from a byte offset
   * on (a resumed or appended upload), the bytes before the offset kept.
   * Optional: a backend that leaves it out cannot (treated as false).
   */
  writeAtOffset?: boolean;
  /** truncate() is implemented: a file's size is set in place. Optional: left out is false. */
  truncate?: boolean;
}

/** A file or directory as a backend reports it. Sizes are plaintext sizes. */
export interface FileInfo {
  /** Base name, no separators. */
  name: string;
  /** Path relative to the Fs root, POSIX style, starting with '/'. */
  path: string;
  isDir: boolean;
  size: number;
  /** Last modification time. */
  mtime: Date;
  /** Unix mode bits (including the directory bit 0o040000 for directories). */
  mode: number;
  /** Opaque entity tag, when the backend has one. */
  etag?: string;
}

export interface OpOptions {
  /** Aborts the operation (client disconnect, connection closed by an admin, timeout). */
  signal?: AbortSignal;
  /**
   * The operation is one of a batch (the files of one multipart request):
   * a backend may keep what it opened for one of them (local backends: the
   * checked descriptor of the parent directory) and use it for the others
   * until the batch is closed. Backends may ignore it.
   */
  batch?: FsBatch;
}

/**
 * Resources shared by the operations of one batch, closed together when the
 * batch is closed (by whoever created it, once every operation that used it
 * is over, published or discarded).
 */
export interface FsBatch {
  /** True once closed: nothing is held any more, operations take their usual path. */
  readonly closed: boolean;
  /**
   * What `open` gives for `key` of `owner` (a backend instance), opened once
   * per batch and handed to every operation that asks; `close` runs when the
   * batch is closed. An `open` that fails is not kept (the next caller opens
   * again).
   */
  hold<T>(owner: object, key: string, open: () => Promise<T>, close: (value: T) => Promise<void>): Promise<T>;
  /**
   * Records that `path` of `owner` is a directory as of now: a backend that
   * opened it as one for the batch (local backends: the parent directory
   * they hold). Later steps of the batch's operations ask isDirectory()
   * instead of the backend (an upload's check of its parent).
   */
  noteDirectory(owner: object, path: string): void;
  /** True when noteDirectory() recorded `path` of `owner` in this batch (and the batch is still open). */
  isDirectory(owner: object, path: string): boolean;
}

export interface ListOptions extends OpOptions {
  /** Entries per page yielded by list(); backends may yield fewer. Default 1000. */
  pageSize?: number;
}

export interface ReadOptions extends OpOptions {
  /** First byte to read, inclusive. */
  start?: number;
  /** Last byte to read, inclusive. */
  end?: number;
  /**
   * Buffers to read into, reused once the consumer gave them back (an HTTP
   * download: the chunk was written to the socket). A backend that reads
   * blocks itself may read into `take()` buffers and push views of them;
   * others ignore it (their chunks are then their own).
   */
  buffers?: ReadBuffers;
}

/** A whole-file read and the file's metadata, from one backend request (Fs.openReadWithInfo). */
export interface ReadWithInfo {
  info: FileInfo;
  stream: Readable;
}

/**
 * One file of Fs.readSmallFiles: its bytes and metadata (what stat() reports),
 * the error reading it met (NOT_FOUND, IS_DIRECTORY, INVALID for a file that
 * is not a regular one, ...), or undefined: read it the usual way (openRead
 * after stat; a link to follow, a file larger than asked for).
 */
export type SmallFileRead = { data: Buffer; info: FileInfo } | { error: Error } | undefined;

/** Read buffers lent for one read (ReadOptions.buffers, vfs/read-buffers.ts). */
export interface ReadBuffers {
  /** Bytes per buffer now: the read size to use (may grow along a long transfer; a taken buffer's length is what to read). */
  readonly size: number;
  /** A buffer to read into, of about `size` bytes (may wait until the consumer gave one back). */
  take(): Buffer | Promise<Buffer>;
}

export interface WriteOptions extends OpOptions {
  /** Expected total size when known (lets cloud backends pick part sizes). */
  size?: number;
  contentType?: string;
  /** Modification time to set once the write completes, where supported. */
  mtime?: Date;
  /** When false, writing onto an existing file fails with EXISTS. Default true. */
  overwrite?: boolean;
  /**
   * Atomic uploads only (capabilities.atomicUpload): called once every byte
   * is stored at the temporary location and before the file becomes visible.
   * Throwing rejects the upload: the backend removes the temporary data and
   * `done` rejects with the thrown error.
   */
  beforePublish?: (pending: PendingUpload) => Promise<void>;
}

/** A fully written upload that is not visible yet. */
export interface PendingUpload {
  size: number;
  /** Reads the pending bytes (plaintext). */
  openRead(): Promise<Readable>;
}

export interface WriteResult {
  /** Bytes written (plaintext). */
  size: number;
  etag?: string;
  /**
   * Optional: what publishing replaced at the destination, looked at by the
   * backend just before it published (a regular file's size as usedSpace()
   * counts it, or `existed: false`). The core counts the quota with it rather
   * than with what it saw when the upload started, so a file removed or
   * replaced meanwhile, by another node too, is counted right.
   */
  replaced?: { size: number; existed: boolean };
}

/**
 * A write in progress. Bytes go into `stream`; the write is complete only
 * when `done` resolves (cloud backends finish multipart uploads after the last
 * byte arrives). `abort()` cancels the write and removes whatever it left; a
 * write that is aborted or fails never leaves a partial file visible.
 */
export interface WriteHandle {
  stream: Writable;
  done: Promise<WriteResult>;
  abort(reason?: unknown): Promise<void>;
  /**
   * Optional: takes the whole content from a file of the server's own
   * temporary storage (a completed resumable upload) by moving it rather
   * than having it streamed, before anything was written. True: the file
   * is the handle's now (moved into its temporary storage, or published
   * from where it is; removed should the write fail) and the caller ends
   * `stream` to publish it. False: the
   * handle cannot take it (another storage, stored bytes that differ from
   * the plain ones) and nothing changed: the caller streams the bytes.
   */
  adopt?(file: string): Promise<boolean>;
}

export interface RemoveOptions extends OpOptions {
  /** Remove a directory and everything under it. Without it a non-empty directory fails with NOT_EMPTY. */
  recursive?: boolean;
}

export interface MkdirOptions extends OpOptions {
  /** Create missing parents, and do not fail when the directory exists. */
  recursive?: boolean;
}

export interface RenameOptions extends OpOptions {
  /** Called after each object moved when a backend renames a directory object by object. */
  onProgress?: (moved: number) => void;
}

export interface UsedSpace {
  size: number;
  files: number;
}

/**
 * One storage backend instance bound to one root (a user's home or a virtual
 * folder). Paths given to every method are already normalised by the core:
 * POSIX style, absolute ('/' is the root), no '.' or '..' segments. A backend
 * must still keep every access under its own root (defence in depth).
 *
 * Data always flows as streams: no method may buffer a whole file.
 */
export interface Fs {
  readonly capabilities: FsCapabilities;
  stat(path: string, o?: OpOptions): Promise<FileInfo>;
  /** Lists a directory in pages. Fails with NOT_FOUND / NOT_DIR. Order within and across pages is unspecified. */
  list(path: string, o?: ListOptions): AsyncIterable<FileInfo[]>;
  openRead(path: string, o?: ReadOptions): Promise<Readable>;
  /**
   * Opens a whole file for reading and reports its metadata from the same
   * request: one round trip to remote storage where stat() then openRead()
   * take two (the core uses it for downloads without a range or a
   * condition). `info` is what stat() reports (same size, mtime and etag);
   * rejects as openRead() does (NOT_FOUND, IS_DIRECTORY, ABORTED).
   * Resolves undefined (nothing left open) when the backend prefers stat()
   * then openRead() for this file: a local disk answers a small file here
   * (one open instead of a stat and an open) and leaves larger ones to
   * openRead(), which reads them into the download's recycled buffers.
   * Optional.
   */
  openReadWithInfo?(path: string, o?: OpOptions): Promise<ReadWithInfo | undefined>;
  /**
   * Reads the regular files `names` of the directory `dir`, each whole when
   * it holds at most `max` bytes (a small, bounded read: the files of a
   * zip), in one call for all of them: a local disk reads them off the
   * event loop in one go, not with a round trip per system call. A result
   * per name, in order (see SmallFileRead); with `o.batch`, through the
   * directory the batch holds. Optional: a backend without it is read file
   * by file with openRead(), as is any file it answers undefined for.
   */
  readSmallFiles?(dir: string, names: readonly string[], max: number, o?: OpOptions): Promise<SmallFileRead[]>;
  openWrite(path: string, o?: WriteOptions): Promise<WriteHandle>;
  /**
   * Writes into the existing regular file `path` from byte `offset` on
   * (0 <= offset <= its size; beyond it fails with INVALID): the bytes
   * before `offset` are kept, the bytes written replace those at their
   * place, and the file grows when the write goes past its end (bytes past
   * the written range are kept: truncate() first to cut them). Present only
   * when capabilities.writeAtOffset; the core never calls it otherwise.
   *
   * Not atomic: the file is visible and changes as the bytes arrive, so
   * WriteOptions.beforePublish and overwrite are ignored (the file exists by
   * definition) and `done` reports the bytes written by this call. `abort()`
   * stops the write and keeps what was written so far (a resumable upload
   * resumes from the file's size). Fails with NOT_FOUND for a missing file,
   * IS_DIR for a directory.
   */
  writeAt?(path: string, offset: number, o?: WriteOptions): Promise<WriteHandle>;
  /**
   * Sets the size of the existing regular file `path` in place: cut to
   * `size`, or extended with zero bytes. Present only when
   * capabilities.truncate. Fails with NOT_FOUND / IS_DIR.
   */
  truncate?(path: string, size: number, o?: OpOptions): Promise<void>;
  /** Renames a file or directory; replaces an existing destination file. */
  rename(from: string, to: string, o?: RenameOptions): Promise<void>;
  remove(path: string, o?: RemoveOptions): Promise<void>;
  /**
   * remove(), adding each file it removes to `removed` as usedSpace() counts
   * them: the caller learns what went (even when a recursive removal fails
   * midway) without walking the tree first, and a file's size as it was when
   * it went rather than when the caller last looked. Optional: without it the
   * core counts with usedSpace() or stat() before remove().
   */
  removeCounted?(path: string, removed: UsedSpace, o?: RemoveOptions): Promise<void>;
  mkdir(path: string, o?: MkdirOptions): Promise<void>;
  /** Server-side copy of a file; present only when capabilities.serverSideCopy. */
  copy?(from: string, to: string, o?: OpOptions): Promise<void>;
  /** Sets the modification time; present only when capabilities.settableMtime. */
  chtimes?(path: string, mtime: Date, o?: OpOptions): Promise<void>;
  /**
   * Moves `from` of another mount's Fs to `to` in this one without streaming the bytes
   * through Ferry (server-side rename, or copy + delete inside one bucket). The core
   * calls it only on the destination Fs, and only when both mounts use the same provider
   * and the provider's {@link FsProviderDef.sameResource} says they reach the same
   * remote storage. Replaces an existing destination file, like rename().
   * Throws an FsError with code NOT_SUPPORTED when this pair cannot be handled server
   * side after all (the core then streams the data).
   */
  renameFrom?(source: Fs, from: string, to: string, o?: RenameOptions): Promise<void>;
  /**
   * Copies the file `from` of another mount's Fs to `to` in this one server side; same
   * conditions and NOT_SUPPORTED fallback as renameFrom().
   */
  copyFrom?(source: Fs, from: string, to: string, o?: OpOptions): Promise<void>;
  /**
   * The user metadata / extended attributes of a file as the backend keeps them
   * (object metadata of cloud stores), keys in lower case; present only where
   * the backend has such metadata.
   */
  metadata?(path: string, o?: OpOptions): Promise<Record<string, string>>;
  /** Walks the tree under path (default '/') and totals files and bytes, yielding to the event loop as it goes. */
  usedSpace(path?: string, o?: OpOptions): Promise<UsedSpace>;
  /** Releases connections and other resources. */
  close(): Promise<void>;
}

/** What the core knows about the owner of an Fs instance when it creates one. */
export interface FsScope {
  username: string;
  /**
   * Local root for backends that need one (home_dir or a folder's mapped_path),
   * already interpolated.
   */
  root?: string;
  /** Data directory of this Ferry node (for temporary files). */
  dataDir: string;
  /** Connection the Fs serves, for logs. */
  connectionId?: string;
  /**
   * The account's `filters.disable_fs_checks`: the backend neither checks nor
   * creates its root when the Fs is made (a missing local home directory or
   * mapped path is not created; operations then fail as on any missing path).
   */
  skipRootCheck?: boolean;
  /** Where the backend logs what it leaves out or refuses (e.g. a link leading outside a local root). */
  logger?: FsLogger;
}

/** The part of Ferry's logger (pino) a backend may use. */
export interface FsLogger {
  warn(obj: object, msg: string): void;
}

import type { Readable } from 'node:stream';
import type { FileInfo, FsCapabilities, OpOptions, ReadOptions } from '../fs/fs.contract.js';

// A user's files for server-side work (PluginHost.files; core's vfs/user-files.ts).

export interface UserFileWriteOptions extends OpOptions {
  /** Expected size when known (reserved up front, lets cloud backends pick part sizes). */
  size?: number;
  mtime?: Date;
  /** When false, an existing file at the path fails the write with EXISTS. Default true. */
  overwrite?: boolean;
}

/**
 * A user's virtual tree (home and virtual folders, any backend) for server
 * side work such as event actions: every path is a virtual path confined to
 * the user's tree ('..' refused), but the user's permissions, file patterns
 * and web client restrictions are not applied, no filesystem event is
 * published and no hook runs (an action cannot trigger itself). Writes are
 * counted against the user's (or the virtual folder's) storage quota, chunk
 * by chunk, and never leave a partial file visible when they fail. Mount
 * points of virtual folders cannot be removed, renamed or overwritten.
 * close() releases the backends.
 */
export interface UserFiles {
  readonly username: string;
  /** The normalised virtual path of a path given by configuration (throws ESCAPE / INVALID). */
  path(input: string): string;
  stat(vpath: string, o?: OpOptions): Promise<FileInfo>;
  /** stat, null for a missing path. */
  statOrNull(vpath: string, o?: OpOptions): Promise<FileInfo | null>;
  /** Lists a directory in pages (FileInfo.path is the virtual path). */
  list(vpath: string, o?: OpOptions): AsyncGenerator<FileInfo[]>;
  openRead(vpath: string, o?: ReadOptions): Promise<Readable>;
  /** Stores a stream at vpath (parents must exist where directories are real); resolves with the bytes stored. */
  write(vpath: string, source: Readable, o?: UserFileWriteOptions): Promise<{ size: number }>;
  /** Creates a directory; `parents` creates missing parents and accepts an existing directory. */
  mkdir(vpath: string, o?: OpOptions & { parents?: boolean }): Promise<void>;
  /** Removes a file, or a directory and everything under it; the quota is credited. */
  remove(vpath: string, o?: OpOptions): Promise<void>;
  /** Renames a file or directory, also across virtual folders; replaces an existing destination file. */
  rename(src: string, dst: string, o?: OpOptions): Promise<void>;
  /** Copies a file or directory tree (server side when the backend can); replaces an existing destination file. */
  copy(src: string, dst: string, o?: OpOptions): Promise<void>;
  /** Sets a file's modification time (NOT_SUPPORTED where the backend cannot). */
  chtimes(vpath: string, mtime: Date, o?: OpOptions): Promise<void>;
  /** The backend's user metadata / extended attributes of a file (NOT_SUPPORTED where the backend has none). */
  metadata(vpath: string, o?: OpOptions): Promise<Record<string, string>>;
  /** Capabilities of the backend holding vpath. */
  capabilities(vpath: string): Promise<FsCapabilities>;
  close(): Promise<void>;
}

/** Opens a user's files (PluginHost.files). */
export interface UserFilesAccess {
  /** Fails with NOT_FOUND when the user does not exist. */
  open(username: string): Promise<UserFiles>;
}

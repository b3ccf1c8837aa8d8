import type { Readable, Writable } from 'node:stream';
import type { FileInfo } from '../fs/fs.contract.js';
import type { Protocol } from './protocols.js';

/**
 * What a front-end (the REST API, an SFTP, FTP or WebDAV service) holds to
 * work on a logged-in user's files: the user's virtual tree (home and
 * virtual folders) with every rule of the account applied (permissions,
 * file patterns, quotas, bandwidth, transfer limits, filesystem events and
 * hooks). Paths are virtual paths: give them through path() first (both
 * separators, no '..'). Every refusal is an FsError (fs-error.ts) or a
 * domain error, never a protocol answer: a front-end maps them to its own.
 */

/** The account a session works for, as a front-end may show it. */
export interface FileSessionUser {
  readonly username: string;
  /** The local home directory of the account (informative: paths are virtual). */
  readonly homeDir: string;
}

/** The file permissions an account grants (FilePermission of the API). */
export type SessionPermission =
  | '*'
  | 'list'
  | 'download'
  | 'upload'
  | 'overwrite'
  | 'create_dirs'
  | 'rename'
  | 'rename_files'
  | 'rename_dirs'
  | 'delete'
  | 'delete_files'
  | 'delete_dirs'
  | 'create_symlinks'
  | 'chmod'
  | 'chown'
  | 'chtimes'
  | 'copy';

export interface SessionOpOptions {
  /**
   * Aborts this operation only (a front-end's request or channel went away);
   * the session's own signal (the client gone, the connection closed by an
   * administrator) aborts every operation anyway.
   */
  signal?: AbortSignal;
}

export interface SessionReadOptions extends SessionOpOptions {
  /** First byte, inclusive. */
  start?: number;
  /** Last byte, inclusive (default: the end of the file). */
  end?: number;
  /**
   * Reads into buffers lent by the process's bounded pool and given back
   * once the destination took their bytes: the download is then written
   * with {@link SessionRead.writeTo} (when it offers one), never piped. A
   * long download reads in larger buffers and makes no garbage per chunk
   * (the REST API's downloads do the same).
   */
  recycle?: boolean;
}

/** A download in progress. */
export interface SessionRead {
  /** The file as checked when the download began. */
  info: FileInfo;
  /** The bytes (metered, throttled): destroy it to stop the download. */
  stream: Readable;
  /** Settles once the download is over (consumed, failed or destroyed) and its event published; never rejects. */
  done: Promise<void>;
  /**
   * With `recycle` (and no bandwidth limit): writes the bytes to `dest` (a
   * socket, an HTTP response) and ends it, giving each read buffer back once
   * `dest` took it; an error of the download destroys `dest`, `dest` closing
   * first stops the download. Use it instead of piping `stream`.
   */
  writeTo?: (dest: Writable) => void;
}

export interface SessionWriteOptions extends SessionOpOptions {
  /**
   * Writes into the existing file from this byte on (a resumed or appended
   * upload; at most the file's size): the bytes before it are kept. Needs
   * the backend's writeAtOffset capability (FsError NOT_SUPPORTED
   * otherwise) and the overwrite permission. Not atomic: the file changes in
   * place as bytes arrive, and a failed or aborted write keeps the bytes
   * written (the quota counts them). Absent: the whole file is replaced
   * (an upload, atomic where the backend can); so is offset 0 with
   * `truncate`, or on a missing file.
   */
  offset?: number;
  /**
   * With an offset: cut the file at the offset before writing (the file
   * then ends where the write ends; needs the truncate capability). Without
   * it, bytes past the written range are kept. Ignored for whole uploads.
   */
  truncate?: boolean;
  /** Expected number of bytes to write, when known (quotas reserve it up front). */
  size?: number;
  /** Modification time to set once written. */
  mtime?: Date;
  /** Creates the missing parent directories. */
  mkdirParents?: boolean;
  /**
   * Stores the upload's quota and transfer counters with those of the
   * session's other deferred uploads, within 100 ms of its end (and before
   * quota() answers, and at close()), instead of in a database commit of its
   * own before `done` resolves: for front-ends whose clients send many files
   * one after the other (SFTP). Quotas are enforced as before (the session
   * counts what is not stored yet); the stored counters lag that long; a
   * crash in between loses the transfer counters of those uploads (the
   * storage counters are rescanned at start-up, as for any upload the crash
   * cut).
   */
  deferCounters?: boolean;
  /**
   * Resolves as soon as the checks that need no storage pass (write access,
   * the file patterns, and both the upload and the overwrite permission of
   * the parent: whether the file exists is not known yet), before the
   * backend is asked anything; the bytes written meanwhile wait in
   * `stream`. A refusal that needs the storage (a missing parent, a
   * directory in the file's place, the quota, a pre-upload rule) then
   * rejects `done`, and nothing is stored. When those checks do not pass
   * (or with an offset), openWrite waits as without it, and rejects with
   * the refusal. For front-ends whose protocol answers a file's open before
   * its data (SFTP: a `put -r` waits for each OPEN), and which report a
   * failure of `done` to the client (SFTP: at the next WRITE or the CLOSE).
   */
  early?: boolean;
}

/** A write in progress: bytes go into `stream`; complete once `done` resolves. */
export interface SessionWrite {
  stream: Writable;
  /** The file's size once written and published (its upload event sent). */
  done: Promise<{ size: number }>;
  /** Stops the write (a whole upload leaves nothing; a write at an offset keeps what was written). */
  abort(reason?: unknown): void;
}

/** One limit of a storage quota and what is used of it. */
export interface QuotaFigure {
  /** The limit (0: none). */
  limit: number;
  /** What the stored usage counters hold now (uploads in progress not included). */
  used: number;
}

/**
 * The storage quota a path counts against: the user's, or that of the
 * virtual folder holding the path when the folder has its own.
 */
export interface SessionQuota {
  /** Bytes. */
  size: QuotaFigure;
  files: QuotaFigure;
}

/** One user's files through one front-end connection. close() when the front-end is done with it. */
export interface FileSession {
  readonly account: FileSessionUser;
  readonly protocol: Protocol;
  /** The connection the session counts on (GET /api/v2/connections). */
  readonly connectionId: string;
  /** Fires when the session must stop (client gone, connection closed by an administrator). */
  readonly signal: AbortSignal;
  /**
   * Fires `signal` with `reason`: the front-end's client went away, and
   * every operation of the session stops. close() is still to be called.
   */
  abort(reason: unknown): void;
  /** Parses a client path into a virtual path (throws INVALID / ESCAPE). */
  path(input: string | undefined | null): string;
  /**
   * The directory the session starts in (a front-end's initial working
   * directory, what relative paths resolve against): the account's
   * effective `filters.start_directory`, or '/' when it is unset, missing or
   * not a directory (logged). Only a starting point: it confines nothing.
   */
  startDirectory(o?: SessionOpOptions): Promise<string>;
  /** True when the permissions of directory `dir` include '*' or one of `perms`. */
  hasPermission(dir: string, ...perms: SessionPermission[]): boolean;
  /** A file's or directory's metadata (needs list or download permission on its parent; hidden names are NOT_FOUND). */
  stat(path: string, o?: SessionOpOptions): Promise<FileInfo>;
  /** Lists a directory in pages (hidden names left out); the first page is fetched before returning. */
  list(path: string, o?: SessionOpOptions): Promise<AsyncIterable<FileInfo[]>>;
  /** Opens a file for download, optionally a byte range. */
  openRead(path: string, o?: SessionReadOptions): Promise<SessionRead>;
  /** Opens a file for upload (or a write at an offset); resolves once every check passed and the backend is ready. */
  openWrite(path: string, o?: SessionWriteOptions): Promise<SessionWrite>;
  /** Sets a file's size in place (overwrite permission; the backend's truncate capability). */
  truncate(path: string, size: number, o?: SessionOpOptions): Promise<void>;
  /** Creates a directory (and its missing parents with `parents`). */
  mkdir(path: string, parents?: boolean, o?: SessionOpOptions): Promise<void>;
  /** Removes a file (not a directory: IS_DIR). */
  removeFile(path: string, o?: SessionOpOptions): Promise<void>;
  /** Removes a directory and everything in it (not a file: NOT_DIR). */
  removeDir(path: string, o?: SessionOpOptions): Promise<void>;
  /** Renames or moves a file or directory, also across virtual folders. */
  rename(from: string, to: string, o?: SessionOpOptions): Promise<void>;
  /** Copies a file or a directory tree. */
  copy(from: string, to: string, o?: SessionOpOptions): Promise<void>;
  /**
   * True when copy() of the file `from` to `to` would be done by the storage
   * itself (its backend's server-side copy, or a copy between two mounts of
   * the same remote storage), false when the bytes would be streamed through
   * Ferry. Checks no permission: copy() does.
   */
  copiesOnServer(from: string, to: string): Promise<boolean>;
  /** The storage quota `path` counts against, with the stored usage (no permission needed: it is the account's own figure). */
  quota(path: string, o?: SessionOpOptions): Promise<SessionQuota>;
  /** Sets a file's modification time (NOT_SUPPORTED where the backend cannot). */
  setMtime(path: string, mtime: Date, o?: SessionOpOptions): Promise<void>;
  /** Releases the backends and the session's place on its connection; idempotent. */
  close(): Promise<void>;
}

/** What a front-end gives to open a session for a user it authenticated. */
export interface OpenFileSession {
  username: string;
  /** The client's address (the account's allow list and limits are checked on it). */
  ip: string;
  /** The front-end's protocol: connections, events and the account's denied_protocols name it. */
  protocol: Protocol;
  /** Identifies the client session: concurrent operations with the same key share one connection. */
  sessionKey: string;
  /** The client's software, as the connection list shows it. */
  clientVersion?: string;
  /** What the client is doing, as the connection list shows it. */
  command?: string;
  /** The SSH command whose file work the session does (`sha256sum`, `scp`...): its filesystem events carry it as `ssh_cmd`. */
  sshCommand?: string;
  /** Fires when the client is gone: every operation of the session stops. */
  signal?: AbortSignal;
}

/** Opens file sessions (the account's status, expiration, allow list and denied protocols are checked again). */
export interface FileSessionOpener {
  open(o: OpenFileSession): Promise<FileSession>;
}

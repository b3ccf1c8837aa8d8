/**
 * Public shares for front-ends (`ServiceHost.shares`): an external party
 * opens a user's share with the share's own checks, and works on the
 * owner's files through a file session of the owner confined to the shared
 * paths. A leaf module: it imports only the other SDK contracts.
 */
import type { FileInfo } from '../fs/fs.contract.js';
import type { FileSession } from './file-session.js';
import type { Protocol } from './protocols.js';

export interface OpenShareRequest {
  /** The share's id (as the URL names it). */
  id: string;
  /** The client's address (the share's allow_from and the owner's allow list are checked on it). */
  ip: string;
  /** The front-end's protocol: log events, defender scores, the session's connection and filesystem events name it. */
  protocol: Protocol;
  /**
   * The client's Basic credentials: `password` is the share password (any
   * user name), or, for an email-restricted share, `username` an allowed
   * address and `password` one of its one-time codes. Absent: none sent.
   */
  credential?: { username?: string; password: string };
  /** The client's software, as the connection list shows it. */
  clientVersion?: string;
  /** What the client is doing, as the connection list shows it. */
  command?: string;
  /** Fires when the client is gone. */
  signal?: AbortSignal;
}

/**
 * An open share (read access): its files seen from the share's root. A
 * share of exactly one directory has that directory as its root; a share of
 * a file or of several paths has a made-up root collection whose members
 * are the shared paths by their names (when two have the same name, the
 * first in the share's order is the one reached).
 */
export interface ShareSession {
  readonly id: string;
  readonly name: string;
  /** The owner's file session (every rule of the owner's account applies); paths given to it come from resolve(). */
  readonly files: FileSession;
  /**
   * The owner's virtual path of a path inside the share ('/' or '' is the
   * share's root); null for the made-up root. Throws FsError INVALID or
   * ESCAPE for a bad path, NOT_FOUND for a member the root does not have.
   */
  resolve(rel: string): string | null;
  /** The path inside the share ('/...') of an owner's path resolve() gave or one below it ('/' stands for the made-up root). */
  relative(vpath: string): string;
  /** The members of the made-up root (their `path` is the owner's virtual path); [] for a share of one directory. */
  rootMembers(): Promise<FileInfo[]>;
  /** Takes one use of the share (one per file downloaded, as the REST API's downloads do); FsError PERMISSION when none is left. */
  consume(): Promise<void>;
  /** Closes the file session; idempotent. */
  close(): Promise<void>;
}

/**
 * Opens shares for reading. Refusals are domain errors (core/src/errors.ts)
 * with the REST share routes' messages: NOT_FOUND for an unknown share,
 * UNAUTHORIZED for missing or wrong credentials (a wrong password scores the
 * host in the defender), FORBIDDEN for an address not allowed, a share
 * without read scope, expired, used up, or whose owner may no longer share.
 */
export interface ServiceShares {
  open(request: OpenShareRequest): Promise<ShareSession>;
}

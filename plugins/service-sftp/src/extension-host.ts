import type { FileSession } from '@ferry/core';
import type { SFTPWrapper } from 'ssh2';
import type { Handle } from './handles.js';

/** What the extended requests reach of their SFTP session (sftp-session.ts). */
export interface ExtensionHost {
  readonly sftp: SFTPWrapper;
  /** The user's file session (use it inside run/onHandle: it is open then). */
  readonly session: FileSession;
  /** The virtual path of a client path (relative ones against the start directory). */
  path(input: string): string;
  /** The session's start directory (what relative paths resolve against). */
  readonly startDirectory: string;
  /** The handle a client handle names, if open. */
  handle(h: Buffer): Handle | undefined;
  /** Puts another handle in place of an open one (copy-data). */
  replace(h: Buffer, handle: Handle): void;
  /** Runs `op` once the session is open; a failure is answered as a status. */
  run(id: number, op: () => Promise<void>): void;
  /** Runs `op` after the requests on the same handle (an unknown handle is answered). */
  onHandle(id: number, h: Buffer, op: (handle: Handle) => Promise<void>): void;
  /** RENAME, replacing an existing target or not. */
  rename(from: string, to: string, replace: boolean): Promise<void>;
}

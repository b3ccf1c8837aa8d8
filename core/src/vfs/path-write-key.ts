import type { Resolved } from './vfs.js';

/** The key of a stored path for PathWrites (quota-tracker.ts): the folder's or the user's storage, and the path in it. */
export function pathWriteKey(userId: number, r: Resolved): string {
  return `${r.mount.folder ? `f:${r.mount.folder.folder_id}` : `u:${userId}`}\0${r.fsPath}`;
}

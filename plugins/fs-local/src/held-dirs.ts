import { closeSync, readlinkSync } from 'node:fs';

/**
 * Directory descriptors kept open for a short while after their operation,
 * so the next operation in the same directory (the next file of an SFTP
 * `put -r`, of a folder's uploads over HTTP, WebDAV or FTP) skips the open:
 * on this kind of machine a round trip through the thread pool costs
 * 100-130 us of wall time under load, the largest step of a small file's
 * stat (docs/performance-history.md).
 *
 * A kept descriptor is handed out again only after the check the fast path
 * of LocalRoot.walk() makes for a new one: the link `/proc/self/fd/N` still
 * reads as the link-free path asked for. The kernel computes that link from
 * the directory's entries as they are now, so a directory renamed, removed,
 * or moved out of the root (or a component of its path swapped for a link,
 * which moves the directory itself away) reads differently and its
 * descriptor is dropped. What is handed out is then exactly what opening
 * the path again would give. Only directories opened by a link-free path
 * are kept (the path asked for is their real path).
 *
 * Descriptors are closed HELD_DIR_IDLE_MS after their last use, never
 * while a handle still uses one (a descriptor number may be reused once
 * closed); at most MAX_HELD are kept in the process.
 */

/** How long a directory's descriptor is kept after its last use. */
export const HELD_DIR_IDLE_MS = 2000;
/** Descriptors kept at most, across every local root of the process. */
const MAX_HELD = 64;

interface Held {
  fd: number;
  /** The directory's real path, as /proc/self/fd/N read when it was opened. */
  real: string;
  /** Handles using the descriptor now. */
  users: number;
  lastUse: number;
  /** No longer handed out: closed once its last user is done. */
  dropped: boolean;
}

const held = new Map<string, Held>();
let sweeper: NodeJS.Timeout | undefined;

function close(h: Held): void {
  try {
    closeSync(h.fd);
  } catch {
    // already closed: nothing to release
  }
}

function drop(h: Held): void {
  if (held.get(h.real) === h) held.delete(h.real);
  h.dropped = true;
  if (h.users === 0) close(h);
  if (held.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

function release(h: Held): void {
  h.users--;
  h.lastUse = Date.now();
  if (h.dropped && h.users === 0) close(h);
}

/** What a caller gets: the descriptor, and what to call once done with it (once). */
export interface HeldDir {
  fd: number;
  release(): void;
}

/**
 * The kept descriptor of the directory whose real path is `real`, checked
 * to be there still; undefined when none is kept (or it moved: dropped).
 */
export function takeHeldDir(real: string): HeldDir | undefined {
  const h = held.get(real);
  if (!h) return undefined;
  let now: string | undefined;
  try {
    now = readlinkSync(`/proc/self/fd/${h.fd}`);
  } catch {
    now = undefined;
  }
  if (now !== real) {
    drop(h);
    return undefined;
  }
  h.users++;
  h.lastUse = Date.now();
  return { fd: h.fd, release: () => release(h) };
}

/**
 * Keeps `fd`, just opened and checked at its real path `real`, for the
 * next operations; returns what its user calls once done with it instead
 * of closing it, or undefined when it is not kept (the user closes it).
 */
export function keepHeldDir(real: string, fd: number): (() => void) | undefined {
  if (held.has(real)) return undefined;
  if (held.size >= MAX_HELD && !dropIdlest()) return undefined;
  const h: Held = { fd, real, users: 1, lastUse: Date.now(), dropped: false };
  held.set(real, h);
  sweeper ??= setInterval(sweep, HELD_DIR_IDLE_MS / 2).unref();
  return () => release(h);
}

/** Drops the unused descriptor used longest ago; false when every one is in use. */
function dropIdlest(): boolean {
  let idlest: Held | undefined;
  for (const h of held.values()) if (h.users === 0 && (!idlest || h.lastUse < idlest.lastUse)) idlest = h;
  if (idlest) drop(idlest);
  return idlest !== undefined;
}

function sweep(): void {
  const before = Date.now() - HELD_DIR_IDLE_MS;
  for (const h of [...held.values()]) if (h.users === 0 && h.lastUse <= before) drop(h);
}

/**
 * Closes every kept descriptor no handle is using now (the others are
 * closed once their users are done): for a process about to check that
 * nothing of a tree is left open, and for tests.
 */
export function closeHeldDirs(): void {
  for (const h of [...held.values()]) drop(h);
}

/** How many descriptors are kept (for tests). */
export function heldDirCount(): number {
  return held.size;
}

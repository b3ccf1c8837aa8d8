import { randomUUID } from 'node:crypto';
import { lstat, mkdir, opendir, rm, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Folder under the node's data directory where uploads in progress are written. */
export const UPLOADS_TMP_DIR = 'uploads-tmp';

export function uploadsTmpDir(dataDir: string): string {
  return path.join(dataDir, UPLOADS_TMP_DIR);
}

/**
 * Empties `<dataDir>/uploads-tmp` (creating it if needed, mode 0700). Run
 * when the plugin registers, before any upload can start: whatever is there
 * was left by a process that died mid-upload. Returns how many entries were
 * removed.
 */
export async function cleanUploadsTmp(dataDir: string): Promise<number> {
  const dir = uploadsTmpDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let removed = 0;
  for await (const entry of await opendir(dir)) {
    await rm(path.join(dir, entry.name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/**
 * Prefix of the hidden files written beside a destination: the copy made
 * when the temp area is on another device than the destination (upload
 * publication) and every server-side copy. Names starting with it (in any
 * case, for case-insensitive filesystems) are reserved: listings and quota
 * scans skip them and no user path may use them.
 */
export const HIDDEN_TMP_PREFIX = '.ferry-tmp-';

/** The exact form Ferry creates (`.ferry-tmp-<uuid>`): the only names a sweep ever removes. */
const HIDDEN_TMP_NAME = /^\.ferry-tmp-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * How long a hidden file must have gone without a write (its ctime, which
 * no client can set) before a sweep treats it as left by a crash. A live
 * copy writes continuously, so this only needs to outlast a stall; it also
 * protects the hidden files of another node sharing the same storage.
 */
export const HIDDEN_TMP_STALE_MS = 15 * 60 * 1000;

/** True for a name in the reserved `.ferry-tmp-` namespace (case-insensitive). */
export function isReservedName(name: string): boolean {
  return name.length >= HIDDEN_TMP_PREFIX.length && name.slice(0, HIDDEN_TMP_PREFIX.length).toLowerCase() === HIDDEN_TMP_PREFIX;
}

/**
 * Hidden files this process is writing right now, by name (each name holds a
 * fresh UUID, and the directory may be named through different descriptors):
 * a sweep never touches them.
 */
const live = new Set<string>();

export interface HiddenTmp {
  /** Absolute path of the hidden file, in `dir`. */
  path: string;
  /** Forgets the file (call once it was renamed or removed). */
  release(): void;
}

/** A fresh hidden file name in `dir`, registered as live until released. */
export function claimHiddenTmp(dir: string): HiddenTmp {
  const name = `${HIDDEN_TMP_PREFIX}${randomUUID()}`;
  live.add(name);
  return { path: path.join(dir, name), release: () => void live.delete(name) };
}

/**
 * Removes the hidden files among `names` (entries of the local directory
 * `dir`) that were left by a crash: Ferry's own name form, a regular file,
 * not being written by this process, unchanged for `maxAgeMs`. Work is
 * bounded by the names given (those a listing or scan met anyway); errors
 * are ignored, a later sweep tries again. Returns how many were removed.
 */
export async function sweepHiddenTmp(dir: string, names: Iterable<string>, maxAgeMs = HIDDEN_TMP_STALE_MS): Promise<number> {
  let removed = 0;
  for (const name of names) {
    if (!HIDDEN_TMP_NAME.test(name)) continue;
    const full = path.join(dir, name);
    if (live.has(name)) continue;
    try {
      const st = await lstat(full);
      if (!st.isFile() || Date.now() - st.ctimeMs < maxAgeMs || live.has(name)) continue;
      await unlink(full);
      removed++;
    } catch {
      // gone already, or not ours to remove: leave it to a later sweep
    }
  }
  return removed;
}

import { randomUUID } from 'node:crypto';
import { lstat, mkdir, opendir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessTag, processTag, processTagAlive } from '@ferry/core';

/** Folder under the node's data directory where uploads in progress are written. */
export const UPLOADS_TMP_DIR = 'uploads-tmp';

export function uploadsTmpDir(dataDir: string): string {
  return path.join(dataDir, UPLOADS_TMP_DIR);
}

/**
 * This process's own folder in the temp area, `<dataDir>/uploads-tmp/<pid>-<start time>`
 * (see processTag): uploads in progress are written there, with the records
 * of the hidden copies being written beside their destinations. Another
 * process sharing the data directory (a second node, a command run while the
 * server runs) can tell it from the folder of a process that died.
 */
export function processUploadsTmpDir(dataDir: string): string {
  return path.join(uploadsTmpDir(dataDir), processTag());
}

/** Suffix of the record of a hidden copy in the temp area (its content: the hidden file's absolute path). */
const HIDDEN_RECORD_SUFFIX = '.hidden';

/**
 * Removes what a process that died mid-upload left: the hidden copies its
 * records name (beside their destinations, on the destination's device),
 * then its temp folder with the uploads in progress. Returns how many files
 * were removed.
 */
async function recoverDeadTmp(dir: string): Promise<number> {
  let removed = 0;
  for await (const entry of await opendir(dir)) {
    if (!entry.name.endsWith(HIDDEN_RECORD_SUFFIX)) {
      if (entry.isFile()) removed++;
      continue;
    }
    const hidden = await readFile(path.join(dir, entry.name), 'utf8').catch(() => '');
    if (!path.isAbsolute(hidden)) continue;
    removed += await sweepHiddenTmp(path.dirname(hidden), [path.basename(hidden)], 0);
  }
  await rm(dir, { recursive: true, force: true });
  return removed;
}

/**
 * Start-up recovery of `<dataDir>/uploads-tmp` (created if needed, mode
 * 0700), run when the plugin registers, before any upload can start: the
 * folders of processes that are gone (see processUploadsTmpDir) are removed
 * at once with the hidden copies they record; the folders of live processes
 * (this one, another node on the same data directory) are left alone. Loose
 * entries (left by versions without per-process folders) are removed.
 * Returns how many files were removed.
 */
export async function cleanUploadsTmp(dataDir: string): Promise<number> {
  const dir = uploadsTmpDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let removed = 0;
  for await (const entry of await opendir(dir)) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && isProcessTag(entry.name)) {
      if (processTagAlive(entry.name)) continue;
      removed += await recoverDeadTmp(full).catch(() => 0);
      continue;
    }
    await rm(full, { recursive: true, force: true });
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
  /**
   * Records the hidden file in this process's temp folder (`tmpDir`), under
   * its real path (`realDir`: the directory named without descriptors), so a
   * restart after a crash removes it at once. Call before creating the file.
   */
  record(tmpDir: string, realDir: string): Promise<void>;
  /** Forgets the file and its record (call once it was renamed or removed). */
  release(): void;
}

/** A fresh hidden file name in `dir`, registered as live until released. */
export function claimHiddenTmp(dir: string): HiddenTmp {
  const name = `${HIDDEN_TMP_PREFIX}${randomUUID()}`;
  live.add(name);
  let recordPath: string | undefined;
  return {
    path: path.join(dir, name),
    record: async (tmpDir, realDir) => {
      recordPath = path.join(tmpDir, `${name}${HIDDEN_RECORD_SUFFIX}`);
      await writeFile(recordPath, path.join(realDir, name), { flag: 'wx', mode: 0o600 });
    },
    release: () => {
      live.delete(name);
      if (recordPath) void unlink(recordPath).catch(() => undefined);
      recordPath = undefined;
    },
  };
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

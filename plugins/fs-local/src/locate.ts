import type { Stats } from 'node:fs';
import { FsError, FsErrorCode, baseName, fsErrorFromNode, hasNodeCode, parentPath, type FsBatch } from '@ferry/core';
import type { DirHandle, LocalRoot, Located, ResolveMode } from './confine.js';
import { lstatEntry, lstatEntryOrNull } from './entry-stat.js';

/** Times an operation locates its path again when the entry turned into a link while being opened. */
const RELOCATE_ATTEMPTS = 3;

/** `.catch()` handler that maps a Node error about `vpath` and rethrows it. */
export function rethrowFor(vpath: string, overrides?: Partial<Record<string, FsErrorCode>>): (err: unknown) => never {
  return (err) => {
    throw fsErrorFromNode(err, vpath, overrides);
  };
}

/**
 * The lstat of a located entry (the directory itself for the root): what
 * `follow` mode already read, or read now. A missing entry rejects with
 * ENOENT, as lstat does.
 */
export async function statLocated(loc: Located): Promise<Stats> {
  if (!loc.name) return loc.dir.stat();
  if (loc.entryStat) return loc.entryStat;
  if (loc.entryStat === null) throw Object.assign(new Error(`ENOENT: no such file or directory, lstat '${loc.target}'`), { code: 'ENOENT' });
  return lstatEntry(loc.target);
}

/** The lstat of `target`, or undefined when there is no entry there. */
export async function lstatOrUndefined(target: string, vpath: string): Promise<Stats | undefined> {
  try {
    return lstatEntryOrNull(target) ?? undefined;
  } catch (err) {
    throw fsErrorFromNode(err, vpath);
  }
}

/**
 * Path resolution of one LocalFs on top of its {@link LocalRoot}: in a batch
 * (the files of one multipart request or one zip), through the parent
 * directory descriptor the batch holds; and the retry when an entry turns
 * into a symbolic link between locating and opening it.
 */
export class Locator {
  /**
   * In a batch, what stat() learnt of an entry through the batch's held
   * parent descriptor, by virtual path, taken once by the write of that
   * path (an upload stats its destination, then opens it for writing): the
   * write looks at the same entry through the same descriptor, so it does
   * not ask the kernel again. What it checks with it (not a directory, and
   * overwrite: false) is enforced again when the file is placed (a rename
   * onto a directory fails, link() refuses an existing file), so an entry
   * changed in between is still refused. Entries go when taken, or with
   * their batch.
   */
  private readonly batchStats = new WeakMap<FsBatch, Map<string, Stats | null>>();

  constructor(
    readonly confine: LocalRoot,
    /** What a batch's held directories are kept for (the LocalFs). */
    private readonly owner: object,
  ) {}

  /**
   * locate(), or, in a batch (the files of one multipart request), the entry
   * located in its parent directory opened and checked once for the whole
   * batch and held until the batch is closed: the same descriptor an
   * operation would open and check itself, kept for the request, as an
   * upload keeps its parent for its whole duration (docs/confinement.md).
   * The Located's directory is then a view its user's close() leaves open.
   * A link as the entry, or a parent that cannot be opened, takes the usual
   * path (which checks the link, or gives the precise error).
   * `memo`: 'record' keeps what was learnt of the entry for the batch's
   * next write of the path, 'take' uses it (see batchStats).
   */
  async locateFor(vpath: string, mode: ResolveMode, batch: FsBatch | undefined, memo?: 'record' | 'take'): Promise<Located> {
    if (batch && !batch.closed && vpath !== '/') {
      const parent = parentPath(vpath);
      const dir = await batch
        .hold(
          this.owner,
          parent,
          // kept for the next operations in the directory when this one is an upload's or a stat's (see openDir)
          () => this.confine.openDir(parent, false, memo !== undefined),
          (d) => d.close(),
        )
        .catch(() => undefined);
      // (a batch is closed only once its operations are over; one closed meanwhile holds nothing)
      if (dir && !batch.closed) {
        // opened as a directory (O_DIRECTORY) and checked: the upload's look at its parent needs no other
        batch.noteDirectory(this.owner, parent);
        let seen = this.batchStats.get(batch);
        const known = memo === 'take' ? seen?.get(vpath) : undefined;
        if (memo === 'take') seen?.delete(vpath);
        const loc = await this.confine.locateIn(dir.shared(), baseName(vpath), mode, vpath, known);
        if (loc && memo === 'record' && loc.entryStat !== undefined) {
          if (!seen) this.batchStats.set(batch, (seen = new Map()));
          seen.set(vpath, loc.entryStat);
        }
        if (loc) return loc;
      }
    }
    return this.confine.locate(vpath, mode);
  }

  /**
   * The directory `vpath`, opened and checked as locate() does: in a batch,
   * the descriptor the batch holds (the parent of the files located through
   * it), as a view its close() leaves open; otherwise opened for the caller,
   * who closes it.
   */
  async dirFor(vpath: string, batch: FsBatch | undefined): Promise<DirHandle> {
    if (batch && !batch.closed) {
      const dir = await batch
        .hold(
          this.owner,
          vpath,
          () => this.confine.openDir(vpath),
          (d) => d.close(),
        )
        .catch(() => undefined);
      if (dir && !batch.closed) return dir.shared();
    }
    return this.confine.openDir(vpath);
  }

  /**
   * Runs `op` on the located path; when the entry turned into a symbolic
   * link between locating and using it (ELOOP from an O_NOFOLLOW open),
   * locates it again, a few times, then refuses with ESCAPE. In a batch the
   * first attempt locates through the batch's held parent (see locateFor),
   * the others the usual way.
   */
  async withLocated<T>(vpath: string, mode: ResolveMode, op: (loc: Located) => Promise<T>, batch?: FsBatch): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const loc = attempt === 0 && batch ? await this.locateFor(vpath, mode, batch) : await this.confine.locate(vpath, mode);
      try {
        return await op(loc);
      } catch (err) {
        if (!hasNodeCode(err, 'ELOOP')) throw err;
        if (attempt >= RELOCATE_ATTEMPTS) {
          throw new FsError(FsErrorCode.Escape, `${vpath}: kept changing into a symbolic link while being opened`, { path: vpath });
        }
      } finally {
        await loc.dir.close();
      }
    }
  }
}

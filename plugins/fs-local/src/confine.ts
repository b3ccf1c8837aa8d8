import { closeSync, constants, existsSync, open as fsOpen, readlinkSync, type Stats } from 'node:fs';
import { lstat, mkdir, readlink, realpath, stat, utimes } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { FsError, FsErrorCode, fsErrorFromNode, hasNodeCode, normalizeVirtualPath } from '@ferry/core';
import { lstatEntryOrNull } from './entry-stat.js';
import { keepHeldDir, takeHeldDir } from './held-dirs.js';
import { HIDDEN_TMP_PREFIX, isReservedName } from './temp-area.js';

/**
 * How the last path component is treated:
 * - 'follow': when it is a symbolic link whose target stays inside the root,
 *   the operation acts on the target (stat, read, write, list, copy, chtimes);
 * - 'entry': the directory entry itself (remove, rename and mkdir act on the
 *   entry, so removing a symlink removes the link, never its target).
 */
export type ResolveMode = 'follow' | 'entry';

/** Flags for opening one directory component: never through a symlink. */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Symbolic links followed in one resolution before it is refused, as the kernel's limit. */
const MAX_LINK_HOPS = 40;
/** Where Linux exposes a process's open descriptors as links to the opened objects. */
const PROC_FD = '/proc/self/fd';

const openFd = promisify(fsOpen);

/*
 * Two calls are made synchronously, on the event loop: closing a directory
 * descriptor and reading the link of a descriptor in /proc. Neither touches
 * a disk (a directory has nothing to flush; /proc answers from the kernel's
 * memory), so each costs the system call alone, where a round trip to the
 * thread pool costs a thread switch on each side (three of a listing's
 * five).
 */

/** Closes a directory descriptor (never fails). */
function closeDirFd(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed: nothing to release
  }
}

/**
 * An open directory inside the root. `entry(name)` names a child through the
 * descriptor (`/proc/self/fd/N/name`): the kernel resolves `/proc/self/fd/N`
 * to the directory that was opened, whatever has been renamed or swapped for
 * a link since, and looks `name` up in it, as openat(2) would. Such a path is
 * valid only until close(): the descriptor number may be reused afterwards.
 *
 * The root itself needs no descriptor: its path is the operator's, and a
 * child lookup `root/name` is one name in it, exactly what a descriptor
 * would give. Plain numeric descriptors (not FileHandle objects) keep the
 * per-operation cost to the system calls themselves.
 */
export class DirHandle {
  private closed = false;

  constructor(
    /** The descriptor, or undefined for the root (see above). */
    private readonly fd: number | undefined,
    /** Physical components from the root to this directory (no links, no '..'). */
    readonly comps: readonly string[],
    private readonly rootPath: string,
    /** False for a view of a descriptor someone else closes (see shared()). */
    private readonly owned = true,
    /** For a descriptor kept for later operations (held-dirs.ts): what close() calls instead of closing it. */
    private readonly release?: () => void,
  ) {}

  /**
   * The same descriptor, for an operation that must not close it: its
   * close() does nothing. The owner keeps the descriptor open until every
   * such view is done with it (an FsBatch holds the parent directory of a
   * request's uploads this way).
   */
  shared(): DirHandle {
    return new DirHandle(this.fd, this.comps, this.rootPath, false);
  }

  /**
   * The directory's path from the filesystem root, without descriptors: what
   * it was when located (a rename since then is not followed). Only for
   * records that outlive the process (see temp-area.ts), never to open it.
   */
  get realPath(): string {
    return path.join(this.rootPath, ...this.comps);
  }

  /** The directory itself, as a path valid while the handle is open. */
  get path(): string {
    return this.fd === undefined ? this.rootPath : `${PROC_FD}/${this.fd}`;
  }

  /** A child entry of the directory (one name, never followed by the lookup itself). */
  entry(name: string): string {
    return `${this.path}/${name}`;
  }

  /** stat of the directory itself. */
  stat(): Promise<Stats> {
    return stat(this.path);
  }

  /** Sets the directory's own times. */
  utimes(atime: Date, mtime: Date): Promise<void> {
    return utimes(this.path, atime, mtime);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.fd === undefined || !this.owned) return;
    if (this.release) this.release();
    else closeDirFd(this.fd);
  }
}

/** Where a virtual path lives: an open parent directory and a name in it ('' for the directory itself). */
export interface Located {
  dir: DirHandle;
  name: string;
  /** The entry as a path, valid while `dir` is open. */
  readonly target: string;
  /** Physical components from the root to the entry. */
  readonly comps: readonly string[];
  /**
   * What `follow` mode learnt of the final entry while locating it: its
   * lstat (not a link) or `null` (no such entry). Undefined in `entry` mode
   * and for the root. Callers use it rather than asking again: the entry is
   * read through the same descriptor either way.
   */
  readonly entryStat?: Stats | null;
}

function located(dir: DirHandle, name: string, entryStat?: Stats | null): Located {
  return {
    dir,
    name,
    entryStat,
    get target() {
      return name ? dir.entry(name) : dir.path;
    },
    get comps() {
      return name ? [...dir.comps, name] : dir.comps;
    },
  };
}

let procChecked = false;

/** Race-free confinement needs Linux's /proc/self/fd; checked once, with a clear error. */
function requireProcFd(): void {
  if (procChecked) return;
  if (!existsSync(PROC_FD)) {
    throw new FsError(
      FsErrorCode.Unavailable,
      `local storage needs ${PROC_FD} (Linux with /proc mounted) to confine paths to the root against concurrent changes`,
    );
  }
  procChecked = true;
}

/**
 * Keeps every access under one local root, against symbolic links planted
 * in the tree and against concurrent changes of the tree (a directory
 * swapped for a link between a check and its use).
 *
 * Node has no openat(2), so Ferry walks a path one component at a time, on
 * descriptors: the root is opened, then each directory component is opened
 * through its parent's descriptor (`/proc/self/fd/N/name`) with O_NOFOLLOW.
 * Every lookup is a single name in a directory already known to be inside
 * the root, so no path the kernel resolves can pass through a link Ferry did
 * not read itself. The operation then acts on `entry(name)` of the final
 * parent descriptor (open, rename, unlink, mkdir, ...), never on a path
 * re-resolved from the root.
 *
 * Most directories are reached by a fast path with the same result: the
 * whole directory path is opened in one call (the kernel follows links),
 * then the descriptor's real location is read from `/proc/self/fd/N` and
 * the descriptor is kept only when that is inside the real root. Whatever
 * is swapped afterwards, the descriptor stays where it was checked. The
 * component walk runs when that open fails (a missing component, a file on
 * the way, or directories to create) and gives the precise answer.
 *
 * Symbolic links met on the way are read (readlink) and followed by Ferry
 * only when their target stays inside the root: the target is resolved
 * against the physical components of the link's directory ('..' above the
 * root, an absolute target outside the root, or a target in the reserved
 * `.ferry-tmp-` namespace is refused with ESCAPE); the walk then starts
 * again from the root on the resulting components, up to 40 links (ELOOP,
 * refused as INVALID).
 *
 * Also refused: any segment in the reserved `.ferry-tmp-` namespace
 * (PERMISSION), and '..', encoded separators and control characters
 * (`normalizeVirtualPath` in @ferry/core).
 */
export class LocalRoot {
  /** The root as configured, made absolute. */
  readonly root: string;
  private real?: Promise<string>;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** realpath of the root, resolved once (absolute link targets are compared with it). */
  realRoot(): Promise<string> {
    this.real ??= realpath(this.root).catch((err: unknown) => {
      this.real = undefined;
      throw fsErrorFromNode(err, '/');
    });
    return this.real;
  }

  /** The root directory itself (no descriptor needed: see DirHandle). */
  async openRoot(): Promise<DirHandle> {
    requireProcFd();
    return new DirHandle(undefined, [], this.root);
  }

  /**
   * Locates a virtual path (see the class comment). The caller closes
   * `located.dir` once the operation is over.
   */
  async locate(p: string, mode: ResolveMode): Promise<Located> {
    const vpath = normalizeVirtualPath(p);
    refuseReserved(vpath);
    return this.locateComps(vpath === '/' ? [] : vpath.slice(1).split('/'), mode, vpath);
  }

  /** Like locate(), for physical components already known (e.g. an entry found by a listing). */
  async locateComps(comps: readonly string[], mode: ResolveMode, vpath: string): Promise<Located> {
    let pending = [...comps];
    for (let hops = 0; ;) {
      const dir = await this.walk(pending.slice(0, -1), vpath, false, hops, true);
      hops = dir.hops;
      const name = pending[pending.length - 1] ?? '';
      if (!name || mode === 'entry') return located(dir.dir, name);
      let target: string;
      try {
        const st = lstatEntryOrNull(dir.dir.entry(name));
        if (st === null) return located(dir.dir, name, null);
        if (!st.isSymbolicLink()) return located(dir.dir, name, st);
        target = await readlink(dir.dir.entry(name));
      } catch (err) {
        if (hasNodeCode(err, 'ENOENT')) return located(dir.dir, name, null);
        await dir.dir.close();
        throw fsErrorFromNode(err, vpath);
      }
      await dir.dir.close();
      if (++hops > MAX_LINK_HOPS) throw tooManyLinks(vpath);
      pending = await this.splice(dir.dir.comps, target, [], vpath);
    }
  }

  /**
   * Locates the entry `name` of a directory already open and verified (a
   * held parent, see FsBatch): the same answer locate() gives for the path
   * of that entry, without opening the parent again. In `follow` mode an
   * entry that is a symbolic link is not resolved here: undefined, and the
   * caller locates the whole path (the link is checked as always).
   * `known`: the lstat of that entry read earlier through this same
   * descriptor (or null: it was missing), used instead of asking again.
   */
  async locateIn(dir: DirHandle, name: string, mode: ResolveMode, vpath: string, known?: Stats | null): Promise<Located | undefined> {
    if (!name || name === '.' || name === '..' || name.includes('/')) return undefined;
    refuseReserved(vpath);
    if (mode === 'entry') return located(dir, name);
    if (known !== undefined) return known?.isSymbolicLink() ? undefined : located(dir, name, known);
    try {
      const st = lstatEntryOrNull(dir.entry(name));
      if (st === null) return located(dir, name, null);
      return st.isSymbolicLink() ? undefined : located(dir, name, st);
    } catch (err) {
      throw fsErrorFromNode(err, vpath);
    }
  }

  /**
   * Opens the directory at `comps`, one component at a time (see the class
   * comment); with `create`, missing directories are made on the way. With
   * `keep`, a descriptor newly opened may be kept for the next operations
   * in the directory (held-dirs.ts): for the parent of the files an upload
   * or a stat looks at, not for a directory opened for itself (a listing, a
   * zip's walk), whose next use is unlikely. A descriptor kept earlier is
   * used either way.
   */
  async openDir(p: string, create = false, keep = false): Promise<DirHandle> {
    const vpath = normalizeVirtualPath(p);
    refuseReserved(vpath);
    return (await this.walk(vpath === '/' ? [] : vpath.slice(1).split('/'), vpath, create, 0, keep)).dir;
  }

  /**
   * Opens a child directory of an open directory without following a link:
   * undefined when the entry is gone or is no longer a directory (a
   * concurrent change), so tree walks skip it.
   */
  async openChild(parent: DirHandle, name: string): Promise<DirHandle | undefined> {
    try {
      return new DirHandle(await openFd(parent.entry(name), DIR_FLAGS), [...parent.comps, name], this.root);
    } catch (err) {
      if (hasNodeCode(err, 'ENOENT', 'ENOTDIR', 'ELOOP')) return undefined;
      throw err;
    }
  }

  private async walk(comps: string[], vpath: string, create: boolean, hops: number, keep = false): Promise<{ dir: DirHandle; hops: number }> {
    requireProcFd();
    const fast = comps.length > 0 ? await this.openVerified(comps, vpath, keep) : undefined;
    if (fast) return { dir: fast, hops };
    restart: for (;;) {
      let cur = await this.openRoot();
      try {
        for (let i = 0; i < comps.length; i++) {
          const name = comps[i]!;
          const entry = cur.entry(name);
          let fd: number;
          try {
            fd = await openFd(entry, DIR_FLAGS);
          } catch (err) {
            if (hasNodeCode(err, 'ENOENT') && create) {
              await mkdir(entry).catch((e: unknown) => {
                if (!hasNodeCode(e, 'EEXIST')) throw e;
              });
              i--;
              continue;
            }
            if (!hasNodeCode(err, 'ENOTDIR', 'ELOOP')) throw err;
            const st = await lstat(entry).catch(() => undefined);
            if (!st?.isSymbolicLink()) {
              // A file where a directory is needed; or the entry changed under us: try again from the root.
              if (st === undefined || st.isDirectory()) {
                if (++hops > MAX_LINK_HOPS) throw tooManyLinks(vpath);
                await cur.close();
                continue restart;
              }
              throw new FsError(FsErrorCode.NotDirectory, `${vpath}: ${name} is not a directory`, { path: vpath });
            }
            const target = await readlink(entry);
            if (++hops > MAX_LINK_HOPS) throw tooManyLinks(vpath);
            comps = await this.splice(cur.comps, target, comps.slice(i + 1), vpath);
            await cur.close();
            continue restart;
          }
          const next = new DirHandle(fd, [...cur.comps, name], this.root);
          await cur.close();
          cur = next;
        }
        return { dir: cur, hops };
      } catch (err) {
        await cur.close();
        throw err instanceof FsError ? err : fsErrorFromNode(err, vpath);
      }
    }
  }

  /**
   * The fast path of walk(): opens the directory in one call, letting the
   * kernel follow links, then reads where the descriptor really is
   * (readlink of `/proc/self/fd/N`, which cannot change for that
   * descriptor) and keeps it only when that is inside the real root (when
   * it is the path asked for, link-free, the root is its own realpath: see
   * the code). The
   * result is the same as the component walk's: a descriptor of a directory
   * inside the root, reached through links whose targets are inside. Returns
   * undefined when the path does not open as a directory (missing, a file on
   * the way): the component walk then gives the precise error or creates.
   */
  private async openVerified(comps: string[], vpath: string, keep: boolean): Promise<DirHandle | undefined> {
    const asked = `${this.root}/${comps.join('/')}`;
    // a descriptor of this very directory kept from an earlier operation, checked as below (held-dirs.ts)
    const kept = takeHeldDir(asked);
    if (kept) {
      if (!comps.some(isReservedName)) return new DirHandle(kept.fd, [...comps], this.root, true, kept.release);
      kept.release();
      throw escapes(vpath);
    }
    let fd: number;
    try {
      fd = await openFd(asked, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch {
      return undefined;
    }
    try {
      const real = readlinkSync(`${PROC_FD}/${fd}`);
      const physical = await this.verifiedComps(comps, real, vpath);
      // kept for the next operations only when opened by its real path, which the next check compares with
      return new DirHandle(fd, physical, this.root, true, keep && real === asked ? keepHeldDir(real, fd) : undefined);
    } catch (err) {
      closeDirFd(fd);
      throw err instanceof FsError ? err : fsErrorFromNode(err, vpath);
    }
  }

  /**
   * The physical components of a directory opened by the path `comps` (links
   * on the way followed by the kernel) whose descriptor reads as `real` in
   * /proc: ESCAPE when that is outside the root or in the reserved namespace.
   */
  async verifiedComps(comps: readonly string[], real: string, vpath: string): Promise<string[]> {
    // Opened where it was asked, link-free: a real path has no link in it, so neither has its prefix,
    // the configured root, which is then its own realpath (no need to ask for it).
    const physical = real === `${this.root}/${comps.join('/')}` ? [...comps] : await this.physicalOf(real);
    if (!physical || physical.some(isReservedName)) throw escapes(vpath);
    return physical;
  }

  /** The physical components from the real root to the real path `real`; undefined when it is outside. */
  private async physicalOf(real: string): Promise<string[] | undefined> {
    const realRoot = await this.realRoot();
    const prefix = realRoot === '/' ? '/' : realRoot + '/';
    const rel = real === realRoot ? '' : real.startsWith(prefix) ? real.slice(prefix.length) : undefined;
    return rel === undefined ? undefined : rel === '' ? [] : rel.split('/');
  }

  /**
   * The physical components a link in the directory `base` leads to, with
   * `rest` appended; ESCAPE when the target leaves the root.
   */
  private async splice(base: readonly string[], target: string, rest: string[], vpath: string): Promise<string[]> {
    let out: string[];
    let relative = target;
    if (path.isAbsolute(target)) {
      const realRoot = await this.realRoot();
      const within = [realRoot, this.root].map((r) => (target === r ? '' : target.startsWith(r === '/' ? r : r + '/') ? target.slice(r.length) : undefined));
      const inside = within.find((w) => w !== undefined);
      if (inside === undefined) throw escapes(vpath);
      out = [];
      relative = inside;
    } else {
      out = [...base];
    }
    for (const seg of relative.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (out.length === 0) throw escapes(vpath);
        out.pop();
        continue;
      }
      if (isReservedName(seg)) throw escapes(vpath);
      out.push(seg);
    }
    return [...out, ...rest];
  }
}

function escapes(vpath: string): FsError {
  return new FsError(FsErrorCode.Escape, `${vpath}: resolves outside the root through a symbolic link`, { path: vpath });
}

function tooManyLinks(vpath: string): FsError {
  return new FsError(FsErrorCode.Invalid, `${vpath}: too many levels of symbolic links`, { path: vpath });
}

/** Refuses a path that names an entry in the reserved `.ferry-tmp-` namespace. */
export function refuseReserved(p: string): void {
  const vpath = normalizeVirtualPath(p);
  if (vpath.split('/').some(isReservedName)) {
    throw new FsError(FsErrorCode.Permission, `${vpath}: names starting with "${HIDDEN_TMP_PREFIX}" are reserved for Ferry's uploads in progress`, {
      path: vpath,
    });
  }
}

import { constants, type Dir, type Dirent, type Stats } from 'node:fs';
import { copyFile, lstat, mkdir, open, opendir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  FsError,
  FsErrorCode,
  baseName,
  destroyOnAbort,
  emptyReadable,
  fsErrorFromNode,
  hasNodeCode,
  isFsError,
  isSubPath,
  normalizeVirtualPath,
  parentPath,
  resolveReadRange,
  throwIfFsAborted,
  type FileInfo,
  type FsBatch,
  type FsLogger,
  type Fs,
  type FsCapabilities,
  type ListOptions,
  type MkdirOptions,
  type OpOptions,
  type ReadOptions,
  type RemoveOptions,
  type RenameOptions,
  type UsedSpace,
  type WriteHandle,
  type WriteOptions,
} from '@ferry/core';
import { AtomicUpload, type WriteEncoder } from './atomic-upload.js';
import { LentBufferFileReader } from './file-reader.js';
import { localTruncate, localWriteAt } from './local-write-at.js';
import { LocalRoot, type DirHandle, type Located, type ResolveMode } from './confine.js';
import { HIDDEN_TMP_STALE_MS, claimHiddenTmp, isReservedName, sweepHiddenTmp } from './temp-area.js';

export const DEFAULT_BUFFER_SIZE = 64 * 1024;

export const LOCAL_CAPABILITIES: FsCapabilities = Object.freeze({
  rangeRead: true,
  atomicRename: true,
  serverSideCopy: true,
  realDirectories: true,
  settableMtime: true,
  atomicUpload: true,
  writeAtOffset: true,
  truncate: true,
});

export interface LocalFsOptions {
  /** Directory this Fs is confined to (home_dir or a folder's mapped_path). Must exist. */
  root: string;
  /** Where uploads in progress are written; normally `<dataDir>/uploads-tmp`. */
  tempDir: string;
  /** Read stream buffer in bytes (default 64 KiB). */
  readBufferSize?: number;
  /** Write buffer in bytes (default 64 KiB). */
  writeBufferSize?: number;
  /**
   * Age (ms without a write) after which a hidden `.ferry-tmp-*` file met by
   * a listing, a quota scan or a directory removal is removed as a crash
   * leftover (default 15 minutes; see temp-area.ts).
   */
  hiddenTmpMaxAgeMs?: number;
  /** Where refused entries (links leading outside the root) are logged. */
  logger?: FsLogger;
}

/** An open regular file, after the confinement checks (the caller closes `fh`). */
export interface OpenedFile {
  fh: FileHandle;
  /** Size on disk. */
  size: number;
  /** Normalised virtual path. */
  vpath: string;
}

/**
 * The lstat of a located entry (the directory itself for the root): what
 * `follow` mode already read, or read now. A missing entry rejects with
 * ENOENT, as lstat does.
 */
async function statLocated(loc: Located): Promise<Stats> {
  if (!loc.name) return loc.dir.stat();
  if (loc.entryStat) return loc.entryStat;
  if (loc.entryStat === null) throw Object.assign(new Error(`ENOENT: no such file or directory, lstat '${loc.target}'`), { code: 'ENOENT' });
  return lstat(loc.target);
}

async function lstatOrUndefined(target: string, vpath: string): Promise<Stats | undefined> {
  return lstat(target).catch((err: unknown) => {
    if (hasNodeCode(err, 'ENOENT')) return undefined;
    throw fsErrorFromNode(err, vpath);
  });
}

const childPath = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);
const LIST_STAT_CONCURRENCY = 64;
const YIELD_EVERY = 512;
/** Times an operation locates its path again when the entry turned into a link while being opened. */
const RELOCATE_ATTEMPTS = 3;

/**
 * Provider 0: files on the local disk under one root. Every access goes
 * through {@link LocalRoot} (lexical confinement plus symlink checks); writes
 * are atomic (temp file in `tempDir`, then rename). Subclasses (fs-crypt)
 * change what is stored through `openRead`/`openWrite` and report sizes via
 * {@link LocalFs.reportedSize}; everything else works on the stored files.
 */
export class LocalFs implements Fs {
  readonly capabilities: FsCapabilities = LOCAL_CAPABILITIES;
  protected readonly confine: LocalRoot;
  protected readonly readBufferSize: number;
  protected readonly writeBufferSize: number;
  /** No write buffer size configured: upload queues adapt (see atomic-upload.ts). */
  protected readonly adaptiveWrites: boolean;
  private readonly tempDir: string;
  private tempReady?: Promise<void>;
  private readonly hiddenTmpMaxAgeMs: number;
  private readonly logger?: FsLogger;
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

  constructor(opts: LocalFsOptions) {
    this.confine = new LocalRoot(opts.root);
    this.tempDir = path.resolve(opts.tempDir);
    this.readBufferSize = opts.readBufferSize || DEFAULT_BUFFER_SIZE;
    this.writeBufferSize = opts.writeBufferSize || DEFAULT_BUFFER_SIZE;
    this.adaptiveWrites = !opts.writeBufferSize;
    this.hiddenTmpMaxAgeMs = opts.hiddenTmpMaxAgeMs ?? HIDDEN_TMP_STALE_MS;
    this.logger = opts.logger;
  }

  /** The root directory, absolute. */
  get root(): string {
    return this.confine.root;
  }

  /** Size reported for a regular file stored with `rawSize` bytes (stat, list, usedSpace). */
  protected reportedSize(rawSize: number): number {
    return rawSize;
  }

  protected toInfo(vpath: string, st: Stats): FileInfo {
    const isDir = st.isDirectory();
    return {
      name: baseName(vpath),
      path: vpath,
      isDir,
      size: isDir ? 0 : st.isFile() ? this.reportedSize(st.size) : st.size,
      mtime: st.mtime,
      mode: st.mode,
    };
  }

  async stat(p: string, o: OpOptions = {}): Promise<FileInfo> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    const loc = await this.locateFor(vpath, 'follow', o.batch, 'record');
    try {
      // (a missing entry is common here: every new upload stats its destination first)
      if (loc.entryStat === null) throw FsError.notFound(vpath);
      return this.toInfo(vpath, await statLocated(loc));
    } catch (err) {
      throw fsErrorFromNode(err, vpath);
    } finally {
      await loc.dir.close();
    }
  }

  async *list(p: string, o: ListOptions = {}): AsyncIterable<FileInfo[]> {
    const vpath = normalizeVirtualPath(p);
    const pageSize = Math.max(1, Math.floor(o.pageSize ?? 1000));
    throwIfFsAborted(o.signal, vpath);
    const handle = await this.confine.openDir(vpath);
    try {
      const dir: Dir = await opendir(handle.path, { bufferSize: Math.min(pageSize, 1024) }).catch(this.rethrow(vpath));
      try {
        let batch: Dirent[] = [];
        let reserved: string[] = [];
        for (;;) {
          throwIfFsAborted(o.signal, vpath);
          const entry = await dir.read().catch(this.rethrow(vpath));
          // Entries in the reserved namespace are never listed; leftovers among them are swept.
          if (entry && isReservedName(entry.name)) reserved.push(entry.name);
          else if (entry) batch.push(entry);
          if (batch.length === pageSize || (!entry && batch.length > 0)) {
            const page = await this.pageOf(handle, vpath, batch);
            batch = [];
            if (page.length) yield page;
          }
          if (reserved.length >= LIST_STAT_CONCURRENCY || (!entry && reserved.length > 0)) {
            await this.sweep(handle.path, reserved);
            reserved = [];
          }
          if (!entry) break;
        }
      } finally {
        await dir.close().catch(() => undefined);
      }
    } finally {
      await handle.close();
    }
  }

  /**
   * FileInfo for a page of entries. A symlink is reported as its target when
   * that stays inside the root; a link leading outside, dangling or looping
   * is left out of the listing (and logged), as zips and scans leave it out.
   */
  private async pageOf(dir: DirHandle, vdir: string, entries: Dirent[]): Promise<FileInfo[]> {
    const out: (FileInfo | undefined)[] = [];
    for (let i = 0; i < entries.length; i += LIST_STAT_CONCURRENCY) {
      const slice = entries.slice(i, i + LIST_STAT_CONCURRENCY);
      out.push(
        ...(await Promise.all(
          slice.map(async (d) => {
            const vpath = childPath(vdir, d.name);
            const st = await lstat(dir.entry(d.name)).catch(() => undefined);
            if (!st?.isSymbolicLink()) return st && this.toInfo(vpath, st);
            const target = await this.followLink(dir, d.name, vpath);
            return target && this.toInfo(vpath, target);
          }),
        )),
      );
    }
    return out.filter((i): i is FileInfo => i !== undefined);
  }

  /** Removes crash leftovers among the reserved `names` of the directory `dir` (never fails). */
  private async sweep(dir: string, names: string[]): Promise<void> {
    await sweepHiddenTmp(dir, names, this.hiddenTmpMaxAgeMs).catch(() => undefined);
  }

  /** Stats what the link `name` of `dir` leads to, when that is inside the root; undefined (logged) otherwise. */
  private async followLink(dir: DirHandle, name: string, vpath: string): Promise<Stats | undefined> {
    let loc: Located | undefined;
    try {
      loc = await this.confine.locateComps([...dir.comps, name], 'follow', vpath);
      return await statLocated(loc);
    } catch (err) {
      this.logger?.warn({ path: vpath, reason: err instanceof Error ? err.message : String(err) }, 'symbolic link left out of a listing');
      return undefined;
    } finally {
      await loc?.dir.close();
    }
  }

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
  private async locateFor(vpath: string, mode: ResolveMode, batch: FsBatch | undefined, memo?: 'record' | 'take'): Promise<Located> {
    if (batch && !batch.closed && vpath !== '/') {
      const parent = parentPath(vpath);
      const dir = await batch
        .hold(
          this,
          parent,
          () => this.confine.openDir(parent),
          (d) => d.close(),
        )
        .catch(() => undefined);
      // (a batch is closed only once its operations are over; one closed meanwhile holds nothing)
      if (dir && !batch.closed) {
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
   * Runs `op` on the located path; when the entry turned into a symbolic
   * link between locating and using it (ELOOP from an O_NOFOLLOW open),
   * locates it again, a few times, then refuses with ESCAPE. In a batch the
   * first attempt locates through the batch's held parent (see locateFor),
   * the others the usual way.
   */
  private async withLocated<T>(vpath: string, mode: ResolveMode, op: (loc: Located) => Promise<T>, batch?: FsBatch): Promise<T> {
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

  /**
   * Opens a regular file for reading after the confinement checks; the final
   * open goes through the parent's descriptor with O_NOFOLLOW (a link swapped
   * in meanwhile is never followed) and O_NONBLOCK (a FIFO planted in the
   * tree cannot hang a worker thread).
   */
  /** Opens a regular file for reading (in a batch, through its held parent: the files of one zip). */
  protected async openFile(p: string, signal?: AbortSignal, batch?: FsBatch): Promise<OpenedFile> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(signal, vpath);
    const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    const fh = await this.withLocated(
      vpath,
      'follow',
      async (loc) => {
        if (!loc.name) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
        return open(loc.target, flags).catch((err: unknown) => {
          if (hasNodeCode(err, 'ELOOP')) throw err;
          throw fsErrorFromNode(err, vpath);
        });
      },
      batch,
    );
    try {
      const st = await fh.stat();
      if (st.isDirectory()) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
      if (!st.isFile()) throw new FsError(FsErrorCode.Invalid, `${vpath}: not a regular file`, { path: vpath });
      throwIfFsAborted(signal, vpath);
      return { fh, size: st.size, vpath };
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw fsErrorFromNode(err, vpath);
    }
  }

  async openRead(p: string, o: ReadOptions = {}): Promise<Readable> {
    const { fh, size, vpath } = await this.openFile(p, o.signal, o.batch);
    let range;
    try {
      range = resolveReadRange(o, size, vpath);
    } catch (err) {
      await fh.close();
      throw err;
    }
    if (!range) {
      await fh.close();
      return emptyReadable();
    }
    const stream = o.buffers
      ? new LentBufferFileReader(fh, range.start, range.end, o.buffers)
      : fh.createReadStream({ start: range.start, end: range.end, highWaterMark: this.readBufferSize });
    return destroyOnAbort(stream, o.signal, vpath);
  }

  async openWrite(p: string, o: WriteOptions = {}): Promise<WriteHandle> {
    return this.openEncodedWrite(p, o);
  }

  /**
   * openWrite() with an optional encoder that turns written bytes into stored
   * bytes inside the upload writer. `done` reports the bytes written;
   * beforePublish's `pending` describes the stored bytes. The destination's
   * parent stays open (a descriptor) until the upload is published or
   * discarded, and publication renames into that descriptor.
   */
  protected async openEncodedWrite(p: string, o: WriteOptions, encoder?: WriteEncoder): Promise<WriteHandle> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    if (vpath === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path: vpath });
    const loc = await this.locateFor(vpath, 'follow', o.batch, 'take');
    let handedOver = false;
    try {
      if (!loc.name) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
      const existing = loc.entryStat === undefined ? await lstatOrUndefined(loc.target, vpath) : (loc.entryStat ?? undefined);
      if (existing?.isDirectory()) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
      if (existing && o.overwrite === false) throw FsError.exists(vpath);
      await this.ensureTempDir(vpath);
      const upload = await AtomicUpload.open(
        {
          vpath,
          dest: loc.target,
          destDir: loc.dir.realPath,
          release: () => loc.dir.close(),
          tmpDir: this.tempDir,
          writeBufferSize: this.writeBufferSize,
          adaptiveWrites: this.adaptiveWrites,
          readBufferSize: this.readBufferSize,
        },
        o,
        encoder,
      );
      handedOver = true;
      return upload.handle;
    } finally {
      if (!handedOver) await loc.dir.close();
    }
  }

  /** In place, not atomic (local-write-at.ts); refused where the capability is off (fs-crypt). */
  async writeAt(p: string, offset: number, o: WriteOptions = {}): Promise<WriteHandle> {
    if (!this.capabilities.writeAtOffset) throw FsError.notSupported('writing at an offset', this.constructor.name);
    return localWriteAt(this.confine, p, offset, o, this.writeBufferSize);
  }

  async truncate(p: string, size: number, o: OpOptions = {}): Promise<void> {
    if (!this.capabilities.truncate) throw FsError.notSupported('truncating a file', this.constructor.name);
    return localTruncate(this.confine, p, size, o);
  }

  private ensureTempDir(vpath: string): Promise<void> {
    this.tempReady ??= mkdir(this.tempDir, { recursive: true, mode: 0o700 }).then(
      () => undefined,
      (err: unknown) => {
        this.tempReady = undefined;
        throw fsErrorFromNode(err, vpath);
      },
    );
    return this.tempReady;
  }

  async rename(from: string, to: string, o: RenameOptions = {}): Promise<void> {
    const vf = normalizeVirtualPath(from);
    const vt = normalizeVirtualPath(to);
    throwIfFsAborted(o.signal, vf);
    if (vf === '/' || vt === '/') throw new FsError(FsErrorCode.Invalid, 'the root cannot be renamed', { path: vf });
    if (vf !== vt && isSubPath(vf, vt)) {
      throw new FsError(FsErrorCode.Invalid, `${vf}: cannot move a directory into itself`, { path: vt });
    }
    const src = await this.confine.locate(vf, 'entry');
    try {
      const dst = await this.confine.locate(vt, 'entry');
      try {
        await lstat(src.target).catch(this.rethrow(vf));
        if (vf === vt) return;
        await rename(src.target, dst.target).catch((err: unknown) => {
          throw fsErrorFromNode(err, hasNodeCode(err, 'ENOENT', 'ENOTDIR', 'EISDIR', 'ENOTEMPTY', 'EEXIST') ? vt : vf);
        });
      } finally {
        await dst.dir.close();
      }
    } finally {
      await src.dir.close();
    }
  }

  async remove(p: string, o: RemoveOptions = {}): Promise<void> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    if (vpath === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be removed', { path: vpath });
    const loc = await this.confine.locate(vpath, 'entry');
    try {
      const st = await lstat(loc.target).catch(this.rethrow(vpath));
      if (!st.isDirectory()) return await unlink(loc.target).catch(this.rethrow(vpath));
      if (o.recursive) return await this.removeTree(loc.dir, loc.name, vpath, o.signal);
      try {
        await rmdir(loc.target);
      } catch (err) {
        // A directory that looks empty may hold a crash leftover: remove those
        // (whatever their age: the directory goes anyway) and try once more.
        if (!hasNodeCode(err, 'ENOTEMPTY', 'EEXIST') || !(await this.clearLeftovers(loc.dir, loc.name))) {
          throw fsErrorFromNode(err, vpath, { EEXIST: FsErrorCode.NotEmpty });
        }
        await rmdir(loc.target).catch(this.rethrow(vpath, { EEXIST: FsErrorCode.NotEmpty }));
      }
    } finally {
      await loc.dir.close();
    }
  }

  /**
   * Removes the directory `name` of `parent` and everything in it, on
   * descriptors: each subdirectory is opened through its parent without
   * following links, so a directory swapped for a link meanwhile is unlinked
   * as a link, never entered.
   */
  private async removeTree(parent: DirHandle, name: string, vpath: string, signal?: AbortSignal): Promise<void> {
    const dir = await this.confine.openChild(parent, name).catch(this.rethrow(vpath));
    if (!dir) {
      // No longer a directory (or gone): remove whatever entry is there now.
      await unlink(parent.entry(name)).catch((err: unknown) => {
        if (!hasNodeCode(err, 'ENOENT')) throw fsErrorFromNode(err, vpath);
      });
      return;
    }
    try {
      const entries: { name: string; isDir: boolean }[] = [];
      for await (const d of await opendir(dir.path, { bufferSize: 256 }).catch(this.rethrow(vpath))) {
        entries.push({ name: d.name, isDir: d.isDirectory() });
      }
      for (const e of entries) {
        throwIfFsAborted(signal, vpath);
        if (e.isDir) {
          await this.removeTree(dir, e.name, vpath, signal);
          continue;
        }
        await unlink(dir.entry(e.name)).catch(async (err: unknown) => {
          if (hasNodeCode(err, 'ENOENT')) return;
          if (hasNodeCode(err, 'EISDIR', 'EPERM')) return this.removeTree(dir, e.name, vpath, signal);
          throw fsErrorFromNode(err, vpath);
        });
      }
    } finally {
      await dir.close();
    }
    await rmdir(parent.entry(name)).catch((err: unknown) => {
      if (!hasNodeCode(err, 'ENOENT')) throw fsErrorFromNode(err, vpath, { EEXIST: FsErrorCode.NotEmpty });
    });
  }

  /**
   * For rmdir: when the directory `name` of `parent` holds nothing but
   * reserved entries, removes the leftovers among them and returns true.
   * Stops reading at the first entry a user could see, so a full directory
   * costs one read.
   */
  private async clearLeftovers(parent: DirHandle, name: string): Promise<boolean> {
    const dir = await this.confine.openChild(parent, name).catch(() => undefined);
    if (!dir) return false;
    try {
      const names: string[] = [];
      const reader = await opendir(dir.path, { bufferSize: 32 }).catch(() => undefined);
      if (!reader) return false;
      try {
        for await (const d of reader) {
          if (!isReservedName(d.name)) return false;
          names.push(d.name);
          if (names.length > 1024) return false;
        }
      } catch {
        return false;
      }
      return (await sweepHiddenTmp(dir.path, names, 0)) > 0;
    } finally {
      await dir.close();
    }
  }

  async mkdir(p: string, o: MkdirOptions = {}): Promise<void> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    if (vpath === '/') {
      if (o.recursive) return;
      throw FsError.exists(vpath);
    }
    if (!o.recursive) {
      const loc = await this.confine.locate(vpath, 'entry');
      try {
        await mkdir(loc.target).catch(this.rethrow(vpath));
      } finally {
        await loc.dir.close();
      }
      return;
    }
    // Parents are made (and opened) one at a time on descriptors; the last
    // one may already exist, as a directory or a link to one inside the root.
    const parent = await this.confine.openDir(parentPath(vpath), true);
    try {
      await mkdir(parent.entry(baseName(vpath))).catch((err: unknown) => {
        if (!hasNodeCode(err, 'EEXIST')) throw fsErrorFromNode(err, vpath);
      });
    } finally {
      await parent.close();
    }
    const made = await this.confine.openDir(vpath).catch((err: unknown) => {
      if (isFsError(err, FsErrorCode.NotDirectory)) throw FsError.exists(vpath, err);
      throw err;
    });
    await made.close();
  }

  async copy(from: string, to: string, o: OpOptions = {}): Promise<void> {
    const vf = normalizeVirtualPath(from);
    const vt = normalizeVirtualPath(to);
    throwIfFsAborted(o.signal, vf);
    const src = await this.openFile(vf, o.signal).catch((err: unknown) => {
      if (isFsError(err, FsErrorCode.IsDirectory)) {
        throw new FsError(FsErrorCode.IsDirectory, `${vf}: copying directories is not supported`, { path: vf });
      }
      throw err;
    });
    try {
      const dst = await this.confine.locate(vt, 'follow');
      try {
        if (!dst.name) throw new FsError(FsErrorCode.IsDirectory, `${vt}: is a directory`, { path: vt });
        // Copied beside the destination under a reserved name, then renamed: a
        // crash mid-copy leaves only a hidden file, which is swept later. The
        // source is the open descriptor, the destination its parent's.
        const hidden = claimHiddenTmp(dst.dir.path);
        try {
          await this.ensureTempDir(vt);
          await hidden.record(this.tempDir, dst.dir.realPath);
          await copyFile(`/proc/self/fd/${src.fh.fd}`, hidden.path, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
          throwIfFsAborted(o.signal, vf);
          await rename(hidden.path, dst.target);
        } catch (err) {
          await unlink(hidden.path).catch(() => undefined);
          throw fsErrorFromNode(err, hasNodeCode(err, 'ENOENT', 'ENOTDIR', 'EISDIR') ? vt : vf);
        } finally {
          hidden.release();
        }
      } finally {
        await dst.dir.close();
      }
    } finally {
      await src.fh.close().catch(() => undefined);
    }
  }

  async chtimes(p: string, mtime: Date, o: OpOptions = {}): Promise<void> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    // Set through a descriptor (futimes), so a link swapped in is never followed.
    await this.withLocated(vpath, 'follow', async (loc) => {
      if (!loc.name) {
        const st = await loc.dir.stat().catch(this.rethrow(vpath));
        return loc.dir.utimes(st.atime, mtime).catch(this.rethrow(vpath));
      }
      const fh = await open(loc.target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: unknown) => {
        if (hasNodeCode(err, 'ELOOP')) throw err;
        throw fsErrorFromNode(err, vpath);
      });
      try {
        const st = await fh.stat();
        await fh.utimes(st.atime, mtime);
      } catch (err) {
        throw fsErrorFromNode(err, vpath);
      } finally {
        await fh.close().catch(() => undefined);
      }
    });
  }

  /**
   * Walks on descriptors (each subdirectory opened through its parent
   * without following links), reads entries as they stream in, stats files
   * in small concurrent batches and yields to the event loop every few
   * hundred entries. Symlinks are not followed or counted (what they lead to
   * inside the root is counted where it is); entries in the reserved
   * `.ferry-tmp-` namespace are neither counted nor entered, and crash
   * leftovers among them are swept on the way.
   */
  async usedSpace(p = '/', o: OpOptions = {}): Promise<UsedSpace> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    const loc = await this.confine.locate(vpath, 'follow');
    let top: DirHandle;
    try {
      if (loc.name) {
        const st = await statLocated(loc).catch(this.rethrow(vpath));
        if (!st.isDirectory()) return st.isFile() ? { size: this.reportedSize(st.size), files: 1 } : { size: 0, files: 0 };
        const child = await this.confine.openChild(loc.dir, loc.name).catch(this.rethrow(vpath));
        if (!child) throw FsError.notFound(vpath);
        top = child;
      } else {
        top = loc.dir;
      }
    } catch (err) {
      await loc.dir.close();
      throw err;
    }
    if (top !== loc.dir) await loc.dir.close();
    const total: UsedSpace = { size: 0, files: 0 };
    let seen = 0;
    const walk = async (dir: DirHandle): Promise<void> => {
      const count = async (files: string[]): Promise<void> => {
        for (const st of await Promise.all(files.map((f) => lstat(dir.entry(f)).catch(() => undefined)))) {
          if (st?.isFile()) {
            total.size += this.reportedSize(st.size);
            total.files++;
          }
        }
      };
      const reader = await opendir(dir.path, { bufferSize: 256 }).catch((err: unknown) => {
        if (hasNodeCode(err, 'ENOENT') && dir !== top) return undefined;
        throw fsErrorFromNode(err, vpath);
      });
      if (!reader) return;
      const subdirs: string[] = [];
      let files: string[] = [];
      let reserved: string[] = [];
      for await (const d of reader) {
        if (isReservedName(d.name)) reserved.push(d.name);
        else if (d.isDirectory()) subdirs.push(d.name);
        else if (d.isFile()) files.push(d.name);
        if (files.length >= LIST_STAT_CONCURRENCY) {
          await count(files);
          files = [];
        }
        if (reserved.length >= LIST_STAT_CONCURRENCY) {
          await this.sweep(dir.path, reserved);
          reserved = [];
        }
        if (++seen % YIELD_EVERY === 0) {
          throwIfFsAborted(o.signal, vpath);
          await yieldToLoop();
        }
      }
      await count(files);
      if (reserved.length) await this.sweep(dir.path, reserved);
      for (const name of subdirs) {
        const child = await this.confine.openChild(dir, name).catch(() => undefined);
        if (!child) continue;
        try {
          await walk(child);
        } finally {
          await child.close();
        }
      }
    };
    try {
      await walk(top);
    } finally {
      await top.close();
    }
    return total;
  }

  async close(): Promise<void> {
    // Nothing is held between calls: every operation opens and closes its own handles.
  }

  /** `.catch()` handler that maps a Node error about `vpath` and rethrows it. */
  protected rethrow(vpath: string, overrides?: Partial<Record<string, FsErrorCode>>): (err: unknown) => never {
    return (err) => {
      throw fsErrorFromNode(err, vpath, overrides);
    };
  }
}

import { constants, type Dir, type Dirent, type Stats } from 'node:fs';
import { copyFile, lstat, mkdir, open, opendir, realpath, rename, rm, rmdir, stat, unlink, utimes, type FileHandle } from 'node:fs/promises';
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
  isSubPath,
  normalizeVirtualPath,
  resolveReadRange,
  throwIfFsAborted,
  type FileInfo,
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
import { LocalRoot } from './confine.js';
import { HIDDEN_TMP_STALE_MS, claimHiddenTmp, isReservedName, sweepHiddenTmp } from './temp-area.js';

export const DEFAULT_BUFFER_SIZE = 64 * 1024;

export const LOCAL_CAPABILITIES: FsCapabilities = Object.freeze({
  rangeRead: true,
  atomicRename: true,
  serverSideCopy: true,
  realDirectories: true,
  settableMtime: true,
  atomicUpload: true,
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
}

/** An open regular file, after the confinement checks (the caller closes `fh`). */
export interface OpenedFile {
  fh: FileHandle;
  /** Size on disk. */
  size: number;
  /** Normalised virtual path. */
  vpath: string;
}

const childPath = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);
const LIST_STAT_CONCURRENCY = 64;
const YIELD_EVERY = 512;

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
  private readonly tempDir: string;
  private tempReady?: Promise<void>;
  private readonly hiddenTmpMaxAgeMs: number;

  constructor(opts: LocalFsOptions) {
    this.confine = new LocalRoot(opts.root);
    this.tempDir = path.resolve(opts.tempDir);
    this.readBufferSize = opts.readBufferSize || DEFAULT_BUFFER_SIZE;
    this.writeBufferSize = opts.writeBufferSize || DEFAULT_BUFFER_SIZE;
    this.hiddenTmpMaxAgeMs = opts.hiddenTmpMaxAgeMs ?? HIDDEN_TMP_STALE_MS;
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
    const real = await this.confine.resolve(vpath, 'follow');
    return this.toInfo(vpath, await lstat(real).catch(this.rethrow(vpath)));
  }

  async *list(p: string, o: ListOptions = {}): AsyncIterable<FileInfo[]> {
    const vpath = normalizeVirtualPath(p);
    const pageSize = Math.max(1, Math.floor(o.pageSize ?? 1000));
    throwIfFsAborted(o.signal, vpath);
    const real = await this.confine.resolve(vpath, 'follow');
    const dir: Dir = await opendir(real, { bufferSize: Math.min(pageSize, 1024) }).catch(this.rethrow(vpath));
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
          const page = await this.pageOf(real, vpath, batch);
          batch = [];
          if (page.length) yield page;
        }
        if (reserved.length >= LIST_STAT_CONCURRENCY || (!entry && reserved.length > 0)) {
          await this.sweep(real, reserved);
          reserved = [];
        }
        if (!entry) break;
      }
    } finally {
      await dir.close().catch(() => undefined);
    }
  }

  /** FileInfo for a page of entries; a symlink is reported as its target when that is inside the root. */
  private async pageOf(realDir: string, vdir: string, entries: Dirent[]): Promise<FileInfo[]> {
    const out: (FileInfo | undefined)[] = [];
    for (let i = 0; i < entries.length; i += LIST_STAT_CONCURRENCY) {
      const slice = entries.slice(i, i + LIST_STAT_CONCURRENCY);
      out.push(
        ...(await Promise.all(
          slice.map(async (d) => {
            const full = path.join(realDir, d.name);
            let st = await lstat(full).catch(() => undefined);
            if (st?.isSymbolicLink()) st = (await this.followLink(full)) ?? st;
            return st && this.toInfo(childPath(vdir, d.name), st);
          }),
        )),
      );
    }
    return out.filter((i): i is FileInfo => i !== undefined);
  }

  /** Removes crash leftovers among the reserved `names` of the local directory `dir` (never fails). */
  private async sweep(dir: string, names: string[]): Promise<void> {
    await sweepHiddenTmp(dir, names, this.hiddenTmpMaxAgeMs).catch(() => undefined);
  }

  private async followLink(full: string): Promise<Stats | undefined> {
    try {
      const real = await realpath(full);
      return (await this.confine.contains(real)) ? await stat(real) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Opens a regular file for reading after the confinement checks; the final
   * open uses O_NOFOLLOW (the checked path has no links left) and O_NONBLOCK
   * (a FIFO planted in the tree cannot hang a worker thread).
   */
  protected async openFile(p: string, signal?: AbortSignal): Promise<OpenedFile> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(signal, vpath);
    const real = await this.confine.resolve(vpath, 'follow');
    const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    const fh = await open(real, flags).catch(this.rethrow(vpath, { ELOOP: FsErrorCode.Escape }));
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
    const { fh, size, vpath } = await this.openFile(p, o.signal);
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
    const stream = fh.createReadStream({ start: range.start, end: range.end, highWaterMark: this.readBufferSize });
    return destroyOnAbort(stream, o.signal, vpath);
  }

  async openWrite(p: string, o: WriteOptions = {}): Promise<WriteHandle> {
    return this.openEncodedWrite(p, o);
  }

  /**
   * openWrite() with an optional encoder that turns written bytes into stored
   * bytes inside the upload writer. `done` reports the bytes written;
   * beforePublish's `pending` describes the stored bytes.
   */
  protected async openEncodedWrite(p: string, o: WriteOptions, encoder?: WriteEncoder): Promise<WriteHandle> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    if (vpath === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path: vpath });
    const dest = await this.confine.resolve(vpath, 'follow');
    const existing = await lstat(dest).catch((err: unknown) => {
      if (hasNodeCode(err, 'ENOENT')) return undefined;
      throw fsErrorFromNode(err, vpath);
    });
    if (existing?.isDirectory()) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
    if (existing && o.overwrite === false) throw FsError.exists(vpath);
    if (!existing) {
      const parent = await stat(path.dirname(dest)).catch(this.rethrow(vpath));
      if (!parent.isDirectory()) throw new FsError(FsErrorCode.NotDirectory, `${vpath}: parent is not a directory`, { path: vpath });
    }
    await this.ensureTempDir(vpath);
    const upload = await AtomicUpload.open(
      { vpath, dest, tmpDir: this.tempDir, writeBufferSize: this.writeBufferSize, readBufferSize: this.readBufferSize },
      o,
      encoder,
    );
    return upload.handle;
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
    const src = await this.confine.resolve(vf, 'entry');
    const dst = await this.confine.resolve(vt, 'entry');
    await lstat(src).catch(this.rethrow(vf));
    if (vf === vt) return;
    await rename(src, dst).catch((err: unknown) => {
      throw fsErrorFromNode(err, hasNodeCode(err, 'ENOENT', 'ENOTDIR', 'EISDIR', 'ENOTEMPTY', 'EEXIST') ? vt : vf);
    });
  }

  async remove(p: string, o: RemoveOptions = {}): Promise<void> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    if (vpath === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be removed', { path: vpath });
    const target = await this.confine.resolve(vpath, 'entry');
    const st = await lstat(target).catch(this.rethrow(vpath));
    if (!st.isDirectory()) return unlink(target).catch(this.rethrow(vpath));
    if (o.recursive) return rm(target, { recursive: true, force: false }).catch(this.rethrow(vpath));
    try {
      await rmdir(target);
    } catch (err) {
      // A directory that looks empty may hold a crash leftover: remove those
      // (whatever their age: the directory goes anyway) and try once more.
      if (!hasNodeCode(err, 'ENOTEMPTY', 'EEXIST') || !(await this.clearLeftovers(target))) {
        throw fsErrorFromNode(err, vpath, { EEXIST: FsErrorCode.NotEmpty });
      }
      await rmdir(target).catch(this.rethrow(vpath, { EEXIST: FsErrorCode.NotEmpty }));
    }
  }

  /**
   * For rmdir: when the directory holds nothing but reserved entries, removes
   * the leftovers among them and returns true. Stops reading at the first
   * entry a user could see, so a full directory costs one read.
   */
  private async clearLeftovers(dirPath: string): Promise<boolean> {
    const names: string[] = [];
    const dir = await opendir(dirPath, { bufferSize: 32 }).catch(() => undefined);
    if (!dir) return false;
    try {
      for await (const d of dir) {
        if (!isReservedName(d.name)) return false;
        names.push(d.name);
        if (names.length > 1024) return false;
      }
    } catch {
      return false;
    }
    return (await sweepHiddenTmp(dirPath, names, 0)) > 0;
  }

  async mkdir(p: string, o: MkdirOptions = {}): Promise<void> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    if (vpath === '/') {
      if (o.recursive) return;
      throw FsError.exists(vpath);
    }
    const target = await this.confine.resolve(vpath, 'follow');
    await mkdir(target, { recursive: o.recursive === true }).catch(this.rethrow(vpath));
    if (o.recursive && !(await stat(target).catch(this.rethrow(vpath))).isDirectory()) throw FsError.exists(vpath);
  }

  async copy(from: string, to: string, o: OpOptions = {}): Promise<void> {
    const vf = normalizeVirtualPath(from);
    const vt = normalizeVirtualPath(to);
    throwIfFsAborted(o.signal, vf);
    const src = await this.confine.resolve(vf, 'follow');
    if ((await stat(src).catch(this.rethrow(vf))).isDirectory()) {
      throw new FsError(FsErrorCode.IsDirectory, `${vf}: copying directories is not supported`, { path: vf });
    }
    const dst = await this.confine.resolve(vt, 'follow');
    // Copied beside the destination under a reserved name, then renamed: a
    // crash mid-copy leaves only a hidden file, which is swept later.
    const hidden = claimHiddenTmp(path.dirname(dst));
    try {
      await copyFile(src, hidden.path, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      throwIfFsAborted(o.signal, vf);
      await rename(hidden.path, dst);
    } catch (err) {
      await unlink(hidden.path).catch(() => undefined);
      throw fsErrorFromNode(err, hasNodeCode(err, 'ENOENT', 'ENOTDIR', 'EISDIR') ? vt : vf);
    } finally {
      hidden.release();
    }
  }

  async chtimes(p: string, mtime: Date, o: OpOptions = {}): Promise<void> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    const real = await this.confine.resolve(vpath, 'follow');
    const st = await stat(real).catch(this.rethrow(vpath));
    await utimes(real, st.atime, mtime).catch(this.rethrow(vpath));
  }

  /**
   * Walks with opendir (entries stream in, never a whole directory at once),
   * stats files in small concurrent batches and yields to the event loop
   * every few hundred entries. Symlinks are not followed or counted; entries
   * in the reserved `.ferry-tmp-` namespace are neither counted nor entered,
   * and crash leftovers among them are swept on the way.
   */
  async usedSpace(p = '/', o: OpOptions = {}): Promise<UsedSpace> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    const real = await this.confine.resolve(vpath, 'follow');
    const top = await lstat(real).catch(this.rethrow(vpath));
    if (!top.isDirectory()) return top.isFile() ? { size: this.reportedSize(top.size), files: 1 } : { size: 0, files: 0 };
    const total: UsedSpace = { size: 0, files: 0 };
    const count = async (files: string[]): Promise<void> => {
      for (const st of await Promise.all(files.map((f) => lstat(f).catch(() => undefined)))) {
        if (st?.isFile()) {
          total.size += this.reportedSize(st.size);
          total.files++;
        }
      }
    };
    const dirs = [real];
    let seen = 0;
    while (dirs.length) {
      const dirPath = dirs.pop()!;
      const dir = await opendir(dirPath, { bufferSize: 256 }).catch((err: unknown) => {
        if (hasNodeCode(err, 'ENOENT') && dirPath !== real) return undefined;
        throw fsErrorFromNode(err, vpath);
      });
      if (!dir) continue;
      let files: string[] = [];
      let reserved: string[] = [];
      for await (const d of dir) {
        if (isReservedName(d.name)) reserved.push(d.name);
        else if (d.isDirectory()) dirs.push(path.join(dirPath, d.name));
        else if (d.isFile()) files.push(path.join(dirPath, d.name));
        if (files.length >= LIST_STAT_CONCURRENCY) {
          await count(files);
          files = [];
        }
        if (reserved.length >= LIST_STAT_CONCURRENCY) {
          await this.sweep(dirPath, reserved);
          reserved = [];
        }
        if (++seen % YIELD_EVERY === 0) {
          throwIfFsAborted(o.signal, vpath);
          await yieldToLoop();
        }
      }
      await count(files);
      if (reserved.length) await this.sweep(dirPath, reserved);
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

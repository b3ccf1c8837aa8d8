import { mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  FsError,
  FsErrorCode,
  baseName,
  bufferReadable,
  destroyOnAbort,
  fsErrorFromNode,
  hasNodeCode,
  isFsError,
  isSubPath,
  normalizeVirtualPath,
  parentPath,
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
  type ReadWithInfo,
  type RemoveOptions,
  type RenameOptions,
  type SmallFileRead,
  type UsedSpace,
  type WriteHandle,
  type WriteOptions,
} from '@ferry/core';
import type { WriteEncoder } from './atomic-upload.js';
import { LocalRoot, type Located, type ResolveMode } from './confine.js';
import { DirTree } from './dir-tree.js';
import { lstatEntry } from './entry-stat.js';
import { READ_FLAGS, openRegularFile, readStreamOf, type OpenedFile } from './file-reads.js';
import { FileWrites } from './file-writes.js';
import { localTruncate, localWriteAt } from './local-write-at.js';
import { Locator, rethrowFor, statLocated } from './locate.js';
import type { EntryStats } from './batch-io.js';
import { readSmallFilesIn, readSmallOrLarge, TOO_LARGE } from './small-reads.js';
import { HIDDEN_TMP_STALE_MS } from './temp-area.js';

export type { OpenedFile } from './file-reads.js';

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

/**
 * Provider 0: files on the local disk under one root. Every access goes
 * through {@link LocalRoot} (lexical confinement plus symlink checks); writes
 * are atomic (temp file in `tempDir`, then rename). Subclasses (fs-crypt)
 * change what is stored through `openRead`/`openWrite` and report sizes via
 * {@link LocalFs.reportedSize}; everything else works on the stored files.
 *
 * The class keeps the operations on single entries (stat, rename, remove,
 * mkdir, chtimes) and delegates the rest by responsibility: path resolution
 * through a batch's held descriptor (locate.ts), reads (file-reads.ts),
 * uploads and copies (file-writes.ts), listings and walks (dir-tree.ts).
 */
export class LocalFs implements Fs {
  readonly capabilities: FsCapabilities = LOCAL_CAPABILITIES;
  protected readonly confine: LocalRoot;
  protected readonly readBufferSize: number;
  protected readonly writeBufferSize: number;
  /** No write buffer size configured: upload queues adapt (see atomic-upload.ts). */
  protected readonly adaptiveWrites: boolean;
  private readonly tempDir: string;
  private readonly locator: Locator;
  private readonly writes: FileWrites;
  private readonly tree: DirTree;
  /**
   * Small files read in groups off the event loop (small-reads.ts). Only a
   * LocalFs itself has it: a subclass stores other bytes than it serves
   * (fs-crypt), so its files are read through its openRead.
   */
  readonly readSmallFiles?: (dir: string, names: readonly string[], max: number, o?: OpOptions) => Promise<SmallFileRead[]>;
  /**
   * A whole file of at most one read buffer and its metadata from one open:
   * the descriptor's fstat is what stat() reports, so a small download skips
   * the separate stat (one locate and one thread-pool round trip less). A
   * larger file is left to stat() and openRead() (undefined), which read it
   * into the download's recycled buffers. Only a LocalFs itself, as
   * readSmallFiles: fs-crypt reports other sizes and serves other bytes.
   */
  readonly openReadWithInfo?: (p: string, o?: OpOptions) => Promise<ReadWithInfo | undefined>;

  constructor(opts: LocalFsOptions) {
    this.confine = new LocalRoot(opts.root);
    this.tempDir = path.resolve(opts.tempDir);
    this.readBufferSize = opts.readBufferSize || DEFAULT_BUFFER_SIZE;
    this.writeBufferSize = opts.writeBufferSize || DEFAULT_BUFFER_SIZE;
    this.adaptiveWrites = !opts.writeBufferSize;
    this.locator = new Locator(this.confine, this);
    this.writes = new FileWrites(this.locator, {
      tempDir: this.tempDir,
      writeBufferSize: this.writeBufferSize,
      adaptiveWrites: this.adaptiveWrites,
      readBufferSize: this.readBufferSize,
      reportedSize: (rawSize) => this.reportedSize(rawSize),
    });
    this.tree = new DirTree(this.confine, {
      // late-bound: a subclass's toInfo()/reportedSize() apply
      toInfo: (vpath, st) => this.toInfo(vpath, st),
      reportedSize: (rawSize) => this.reportedSize(rawSize),
      hiddenTmpMaxAgeMs: opts.hiddenTmpMaxAgeMs ?? HIDDEN_TMP_STALE_MS,
      logger: opts.logger,
    });
    if (new.target === LocalFs) {
      this.readSmallFiles = (dir, names, max, o) => readSmallFilesIn(this.locator, (raw) => this.reportedSize(raw), dir, names, max, o);
      this.openReadWithInfo = async (p, o = {}) => {
        // A file of at most one read buffer (and 64 KiB) is read whole by the batch I/O
        // worker, in one message (open, fstat, read and close through the
        // parent's descriptor: small-reads.ts), instead of four round trips
        // to the thread pool. A link, a larger file or a name the worker
        // does not take (undefined) goes the usual way below.
        const vpath = normalizeVirtualPath(p);
        if (vpath !== '/') {
          const max = Math.min(this.readBufferSize, DEFAULT_BUFFER_SIZE);
          const [small] = await readSmallOrLarge(this.locator, (raw) => this.reportedSize(raw), parentPath(vpath), [baseName(vpath)], max, o);
          // a plain file over the read buffer: stat() and openRead() read it (no open here to find that out again)
          if (small === TOO_LARGE) {
            if (max === this.readBufferSize) return undefined;
          } else if (small && 'error' in small) throw small.error;
          else if (small) return { info: small.info, stream: destroyOnAbort(bufferReadable(small.data), o.signal, vpath) };
        }
        const opened = await this.openFile(p, o.signal, o.batch);
        if (opened.size > this.readBufferSize) {
          await opened.fh.close().catch(() => undefined);
          return undefined;
        }
        const info = this.toInfo(opened.vpath, opened.stats);
        return { info, stream: await readStreamOf(opened, { signal: o.signal }, this.readBufferSize) };
      };
    }
  }

  /** The root directory, absolute. */
  get root(): string {
    return this.confine.root;
  }

  /** Size reported for a regular file stored with `rawSize` bytes (stat, list, usedSpace). */
  protected reportedSize(rawSize: number): number {
    return rawSize;
  }

  protected toInfo(vpath: string, st: EntryStats): FileInfo {
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
    yield* this.tree.list(vpath, pageSize, o.signal);
  }

  /** Locates `vpath`, in a batch through the parent the batch holds (see Locator.locateFor). */
  private locateFor(vpath: string, mode: ResolveMode, batch: FsBatch | undefined, memo?: 'record' | 'take'): Promise<Located> {
    return this.locator.locateFor(vpath, mode, batch, memo);
  }

  /** Runs `op` on the located path, locating it again when it turned into a link (see Locator.withLocated). */
  private withLocated<T>(vpath: string, mode: ResolveMode, op: (loc: Located) => Promise<T>, batch?: FsBatch): Promise<T> {
    return this.locator.withLocated(vpath, mode, op, batch);
  }

  /** Opens a regular file for reading (in a batch, through its held parent: the files of one zip). */
  protected openFile(p: string, signal?: AbortSignal, batch?: FsBatch): Promise<OpenedFile> {
    return openRegularFile(this.locator, p, signal, batch);
  }

  async openRead(p: string, o: ReadOptions = {}): Promise<Readable> {
    return readStreamOf(await this.openFile(p, o.signal, o.batch), o, this.readBufferSize);
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
    return this.writes.openUpload(vpath, o, encoder);
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
        await lstatEntry(src.target).catch(this.rethrow(vf));
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

  remove(p: string, o: RemoveOptions = {}): Promise<void> {
    return this.removeCounting(p, o);
  }

  removeCounted(p: string, removed: UsedSpace, o: RemoveOptions = {}): Promise<void> {
    return this.removeCounting(p, o, removed);
  }

  private async removeCounting(p: string, o: RemoveOptions, removed?: UsedSpace): Promise<void> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    if (vpath === '/') throw new FsError(FsErrorCode.Permission, 'the root directory cannot be removed', { path: vpath });
    const loc = await this.confine.locate(vpath, 'entry');
    try {
      const st = await lstatEntry(loc.target).catch(this.rethrow(vpath));
      if (!st.isDirectory()) {
        await unlink(loc.target).catch(this.rethrow(vpath));
        if (removed && st.isFile()) {
          removed.size += this.reportedSize(st.size);
          removed.files++;
        }
        return;
      }
      if (o.recursive) return await this.tree.removeTree(loc.dir, loc.name, vpath, o.signal, removed);
      try {
        await rmdir(loc.target);
      } catch (err) {
        // A directory that looks empty may hold a crash leftover: remove those
        // (whatever their age: the directory goes anyway) and try once more.
        if (!hasNodeCode(err, 'ENOTEMPTY', 'EEXIST') || !(await this.tree.clearLeftovers(loc.dir, loc.name))) {
          throw fsErrorFromNode(err, vpath, { EEXIST: FsErrorCode.NotEmpty });
        }
        await rmdir(loc.target).catch(this.rethrow(vpath, { EEXIST: FsErrorCode.NotEmpty }));
      }
    } finally {
      await loc.dir.close();
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
      await this.writes.copyOpened(src, vf, vt, o.signal);
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
      const fh = await open(loc.target, READ_FLAGS).catch((err: unknown) => {
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

  /** See DirTree.usedSpace: a walk on descriptors that neither counts nor enters the reserved namespace. */
  async usedSpace(p = '/', o: OpOptions = {}): Promise<UsedSpace> {
    const vpath = normalizeVirtualPath(p);
    throwIfFsAborted(o.signal, vpath);
    return this.tree.usedSpace(vpath, o.signal);
  }

  async close(): Promise<void> {
    // Nothing is held between calls: every operation opens and closes its own handles.
  }

  /** `.catch()` handler that maps a Node error about `vpath` and rethrows it. */
  protected rethrow(vpath: string, overrides?: Partial<Record<string, FsErrorCode>>): (err: unknown) => never {
    return rethrowFor(vpath, overrides);
  }
}

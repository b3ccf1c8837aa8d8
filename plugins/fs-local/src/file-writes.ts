import { constants } from 'node:fs';
import { copyFile, mkdir, rename, unlink } from 'node:fs/promises';
import { FsError, FsErrorCode, fsErrorFromNode, hasNodeCode, isFsError, throwIfFsAborted, type WriteHandle, type WriteOptions } from '@ferry/core';
import { AtomicUpload, type WriteEncoder } from './atomic-upload.js';
import type { OpenedFile } from './file-reads.js';
import { lstatOrUndefined, type Locator } from './locate.js';
import { claimHiddenTmp } from './temp-area.js';

/** What the writes of one LocalFs are configured with. */
export interface FileWriteSettings {
  /** Where uploads in progress are written (absolute). */
  tempDir: string;
  writeBufferSize: number;
  /** No write buffer size configured: upload queues adapt (see atomic-upload.ts). */
  adaptiveWrites: boolean;
  readBufferSize: number;
  /** A stored file's size as usedSpace() counts it (what a published upload reports it replaced). */
  reportedSize: (rawSize: number) => number;
}

/**
 * Temp directories known to exist, for the whole process: a LocalFs is made
 * per file session (per request of the REST API), and creating its temp
 * directory once per instance cost every upload a mkdir and a stat through
 * the thread pool. One that disappears meanwhile (removed by hand) is
 * forgotten when a temp file cannot be created in it, and made again.
 */
const readyTempDirs = new Set<string>();

/** Forgets that `dir` exists (the next ensureTempDir() creates it again); for tests, all of them. */
export function forgetTempDir(dir?: string): void {
  if (dir === undefined) readyTempDirs.clear();
  else readyTempDirs.delete(dir);
}

/**
 * The writes of one LocalFs: atomic uploads (a temp file in `tempDir`,
 * published by a rename into the destination's held parent) and server-side
 * copies (beside the destination under a reserved name, then renamed).
 */
export class FileWrites {
  private tempReady?: Promise<void>;

  constructor(
    private readonly locator: Locator,
    readonly s: FileWriteSettings,
  ) {}

  /** Creates the temp directory once per process (again after a failure, or once forgotten). */
  async ensureTempDir(vpath: string): Promise<void> {
    if (readyTempDirs.has(this.s.tempDir)) return;
    const dir = this.s.tempDir;
    this.tempReady ??= mkdir(dir, { recursive: true, mode: 0o700 }).then(
      () => {
        readyTempDirs.add(dir);
        this.tempReady = undefined;
      },
      (err: unknown) => {
        this.tempReady = undefined;
        throw fsErrorFromNode(err, vpath);
      },
    );
    return this.tempReady;
  }

  /**
   * Starts an upload to the normalised `vpath` (not the root), with an
   * optional encoder that turns written bytes into stored bytes inside the
   * upload writer. The destination's parent stays open (a descriptor) until
   * the upload is published or discarded, and publication renames into that
   * descriptor.
   */
  async openUpload(vpath: string, o: WriteOptions, encoder?: WriteEncoder): Promise<WriteHandle> {
    const loc = await this.locator.locateFor(vpath, 'follow', o.batch, 'take');
    let handedOver = false;
    try {
      if (!loc.name) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
      const existing = loc.entryStat === undefined ? await lstatOrUndefined(loc.target, vpath) : (loc.entryStat ?? undefined);
      if (existing?.isDirectory()) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
      if (existing && o.overwrite === false) throw FsError.exists(vpath);
      const target = {
        vpath,
        dest: loc.target,
        destDir: loc.dir.realPath,
        release: () => loc.dir.close(),
        tmpDir: this.s.tempDir,
        writeBufferSize: this.s.writeBufferSize,
        adaptiveWrites: this.s.adaptiveWrites,
        readBufferSize: this.s.readBufferSize,
        reportedSize: this.s.reportedSize,
        // the temp directory went away since it was made: made again, once
        remakeTmpDir: () => {
          forgetTempDir(this.s.tempDir);
          return this.ensureTempDir(vpath);
        },
      };
      await this.ensureTempDir(vpath);
      const upload = AtomicUpload.start(target, o, encoder);
      handedOver = true;
      return upload.handle;
    } finally {
      if (!handedOver) await loc.dir.close();
    }
  }

  /**
   * Copies the opened file `src` (normalised virtual path `vf`) to `vt`.
   * Copied beside the destination under a reserved name, then renamed: a
   * crash mid-copy leaves only a hidden file, which is swept later. The
   * source is the open descriptor, the destination its parent's. The caller
   * closes `src`.
   */
  async copyOpened(src: OpenedFile, vf: string, vt: string, signal?: AbortSignal): Promise<void> {
    const dst = await this.locator.confine.locate(vt, 'follow');
    try {
      if (!dst.name) throw new FsError(FsErrorCode.IsDirectory, `${vt}: is a directory`, { path: vt });
      const hidden = claimHiddenTmp(dst.dir.path);
      try {
        await this.ensureTempDir(vt);
        await hidden.record(this.s.tempDir, dst.dir.realPath);
        await copyFile(`/proc/self/fd/${src.fh.fd}`, hidden.path, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
        throwIfFsAborted(signal, vf);
        await rename(hidden.path, dst.target);
      } catch (err) {
        if (isFsError(err, FsErrorCode.NotFound) || hasNodeCode(err, 'ENOENT')) forgetTempDir(this.s.tempDir);
        await unlink(hidden.path).catch(() => undefined);
        throw fsErrorFromNode(err, hasNodeCode(err, 'ENOENT', 'ENOTDIR', 'EISDIR') ? vt : vf);
      } finally {
        hidden.release();
      }
    } finally {
      await dst.dir.close();
    }
  }
}

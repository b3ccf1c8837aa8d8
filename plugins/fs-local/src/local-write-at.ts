import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import {
  FsError,
  FsErrorCode,
  fsErrorFromNode,
  hasNodeCode,
  normalizeVirtualPath,
  onAbort,
  throwIfFsAborted,
  type OpOptions,
  type WriteHandle,
  type WriteOptions,
} from '@ferry/core';
import type { LocalRoot } from './confine.js';

/**
 * Writes in place into existing files of a local root: Fs.writeAt (a
 * resumed or appended upload) and Fs.truncate. Unlike openWrite (atomic,
 * through a temporary file), the file is changed where it is, through a
 * descriptor opened after the confinement checks with O_NOFOLLOW (a link
 * swapped in meanwhile is never followed) and O_NONBLOCK (a FIFO cannot
 * hang a worker thread).
 */

/** Opens the existing regular file `vpath` for writing; the caller closes the handle. */
async function openExisting(confine: LocalRoot, vpath: string): Promise<FileHandle> {
  const loc = await confine.locate(vpath, 'follow');
  let fh: FileHandle;
  try {
    if (!loc.name) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
    fh = await open(loc.target, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: unknown) => {
      if (hasNodeCode(err, 'ELOOP')) throw new FsError(FsErrorCode.Escape, `${vpath}: turned into a symbolic link while being opened`, { path: vpath });
      throw fsErrorFromNode(err, vpath);
    });
  } finally {
    await loc.dir.close();
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
    if (!st.isFile()) throw new FsError(FsErrorCode.Invalid, `${vpath}: not a regular file`, { path: vpath });
    return fh;
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw fsErrorFromNode(err, vpath);
  }
}

/** Fs.writeAt of a local root: writes the existing file `p` from `offset` on (see the contract). */
export async function localWriteAt(confine: LocalRoot, p: string, offset: number, o: WriteOptions, bufferSize: number): Promise<WriteHandle> {
  const vpath = normalizeVirtualPath(p);
  throwIfFsAborted(o.signal, vpath);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new FsError(FsErrorCode.Invalid, `${vpath}: invalid write offset ${offset}`, { path: vpath });
  const fh = await openExisting(confine, vpath);
  try {
    const { size } = await fh.stat();
    if (offset > size) {
      throw new FsError(FsErrorCode.Invalid, `${vpath}: cannot write at offset ${offset}, the file has ${size} bytes`, { path: vpath });
    }
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw fsErrorFromNode(err, vpath);
  }
  let position = offset;
  let written = 0;
  // written by hand (not fh.createWriteStream): the handle stays ours to set the mtime on and to close
  const stream = new Writable({
    highWaterMark: bufferSize,
    write(chunk: Buffer, _enc, cb) {
      void writeFully(fh, chunk, position).then(() => {
        position += chunk.length;
        written += chunk.length;
        cb();
      }, cb);
    },
    final(cb) {
      if (!o.mtime) return cb();
      fh.utimes(o.mtime, o.mtime).then(() => cb(), cb);
    },
  });
  let failure: unknown;
  const done = new Promise<{ size: number }>((resolve, reject) => {
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      stopWatching();
      void fh
        .close()
        .catch(() => undefined)
        .then(() => (err === undefined ? resolve({ size: written }) : reject(err instanceof FsError ? err : fsErrorFromNode(err, vpath))));
    };
    stream.once('finish', () => settle());
    stream.once('error', (err) => settle(failure ?? err));
    const stopWatching = onAbort(o.signal, () => {
      failure = FsError.aborted(vpath);
      stream.destroy(failure as Error);
    });
  });
  return {
    stream,
    done,
    async abort(reason?: unknown): Promise<void> {
      failure ??= reason instanceof FsError ? reason : FsError.aborted(vpath);
      if (!stream.destroyed) stream.destroy(failure as Error);
      await done.catch(() => undefined);
    },
  };
}

/** Writes every byte of `chunk` at `position` (a write may take fewer bytes than given). */
async function writeFully(fh: FileHandle, chunk: Buffer, position: number): Promise<void> {
  for (let off = 0; off < chunk.length;) {
    const { bytesWritten } = await fh.write(chunk, off, chunk.length - off, position + off);
    off += bytesWritten;
  }
}

/** Fs.truncate of a local root: sets the size of the existing file `p`. */
export async function localTruncate(confine: LocalRoot, p: string, size: number, o: OpOptions = {}): Promise<void> {
  const vpath = normalizeVirtualPath(p);
  throwIfFsAborted(o.signal, vpath);
  if (!Number.isSafeInteger(size) || size < 0) throw new FsError(FsErrorCode.Invalid, `${vpath}: invalid size ${size}`, { path: vpath });
  const fh = await openExisting(confine, vpath);
  try {
    await fh.truncate(size);
  } catch (err) {
    throw fsErrorFromNode(err, vpath);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

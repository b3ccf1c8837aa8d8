import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  FsError,
  FsErrorCode,
  destroyOnAbort,
  emptyReadable,
  fsErrorFromNode,
  hasNodeCode,
  normalizeVirtualPath,
  resolveReadRange,
  throwIfFsAborted,
  type FsBatch,
  type ReadOptions,
} from '@ferry/core';
import { LentBufferFileReader } from './file-reader.js';
import type { Locator } from './locate.js';

/** An open regular file, after the confinement checks (the caller closes `fh`). */
export interface OpenedFile {
  fh: FileHandle;
  /** Size on disk. */
  size: number;
  /** The opened file's fstat (what stat() of its path reports, read through the descriptor). */
  stats: Stats;
  /** Normalised virtual path. */
  vpath: string;
}

/** Flags of every read open: no link followed, and a FIFO planted in the tree cannot hang a worker thread. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens a regular file for reading after the confinement checks (in a batch,
 * through its held parent: the files of one zip); the final open goes
 * through the parent's descriptor with O_NOFOLLOW (a link swapped in
 * meanwhile is never followed) and O_NONBLOCK.
 */
export async function openRegularFile(locator: Locator, p: string, signal?: AbortSignal, batch?: FsBatch): Promise<OpenedFile> {
  const vpath = normalizeVirtualPath(p);
  throwIfFsAborted(signal, vpath);
  const fh = await locator.withLocated(
    vpath,
    'follow',
    async (loc) => {
      if (!loc.name) throw new FsError(FsErrorCode.IsDirectory, `${vpath}: is a directory`, { path: vpath });
      return open(loc.target, READ_FLAGS).catch((err: unknown) => {
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
    return { fh, size: st.size, stats: st, vpath };
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw fsErrorFromNode(err, vpath);
  }
}

/**
 * The stream of an opened file's range (the whole file by default), read in
 * `readBufferSize` chunks or into the caller's lent buffers; it owns `fh`
 * from then on (an empty range closes it at once). An aborted signal
 * destroys the stream.
 */
export async function readStreamOf({ fh, size, vpath }: OpenedFile, o: ReadOptions, readBufferSize: number): Promise<Readable> {
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
    : fh.createReadStream({ start: range.start, end: range.end, highWaterMark: readBufferSize });
  return destroyOnAbort(stream, o.signal, vpath);
}

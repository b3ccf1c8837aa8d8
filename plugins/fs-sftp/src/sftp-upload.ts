import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { FsError, FsErrorCode, onAbort, type WriteHandle, type WriteOptions, type WriteResult } from '@ferry/core';
import type { SftpPool } from './sftp-pool.js';
import { SftpReader, SftpWriter, closeHandle, type TransferTuning } from './sftp-streams.js';
import { SftpStatus, mapSftpError, sftpStatus } from './sftp-errors.js';
import * as ops from './sftp-ops.js';

/** Uploads in progress are named like this, next to their target; list() hides them. */
export const TEMP_PREFIX = '.ferry-upload-';
export const isTempName = (name: string): boolean => name.startsWith(TEMP_PREFIX) && name.endsWith('.tmp');

/** Wraps an error from beforePublish: `done` rejects with it unchanged. */
class HookError {
  constructor(readonly err: unknown) {}
}

/**
 * Starts an atomic upload: bytes go to a hidden temporary file in the target's
 * directory; once the stream finishes, beforePublish runs, the mtime is set and
 * the file is renamed into place (posix-rename: replaces atomically; a plain
 * SFTP rename when overwrite is false, which refuses an existing target).
 * Failure or abort removes the temporary file.
 */
export async function startUpload(pool: SftpPool, path: string, remote: string, tuning: TransferTuning, o: WriteOptions): Promise<WriteHandle> {
  const overwrite = o.overwrite !== false;
  const tmp = posix.join(posix.dirname(remote), `${TEMP_PREFIX}${randomUUID()}.tmp`);
  const lease = await pool.acquire(o.signal);
  const sftp = lease.sftp;
  let handle: Buffer;
  try {
    const existing = await ops.statOrNull(sftp, remote);
    if (existing && ops.isDirMode(existing.mode)) throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
    if (existing && !overwrite) throw FsError.exists(path);
    handle = await ops.open(sftp, tmp, 'w', 0o644).catch((err: unknown) => {
      if (sftpStatus(err) === SftpStatus.NoSuchFile) throw new FsError(FsErrorCode.NotFound, `${path}: parent directory does not exist`, { path, cause: err });
      throw err;
    });
  } catch (err) {
    lease.release();
    throw mapSftpError(err, 'open for writing', path);
  }

  const writer = new SftpWriter(sftp, handle, path, tuning);
  let settled = false;
  let aborted = false;
  let handleOpen = true;

  const cleanup = async (): Promise<void> => {
    if (handleOpen) {
      handleOpen = false;
      await closeHandle(sftp, handle);
    }
    // Through the pool: the upload's own connection may be the thing that failed.
    await pool.run((s) => ops.unlink(s, tmp), { retry: true }).catch(() => undefined);
  };

  const publish = async (): Promise<WriteResult> => {
    handleOpen = false;
    await closeHandle(sftp, handle);
    const size = writer.bytes;
    if (o.beforePublish) {
      const hook = o.beforePublish;
      await hook({
        size,
        openRead: async (): Promise<Readable> => {
          const h = await ops.open(sftp, tmp, 'r');
          return new SftpReader(sftp, h, path, tuning, { start: 0, end: Infinity, onClose: () => undefined });
        },
      }).catch((err: unknown) => {
        throw new HookError(err);
      });
    }
    if (aborted) throw FsError.aborted(path);
    if (o.mtime) await ops.utimes(sftp, tmp, o.mtime).catch(() => undefined); // best effort: some servers refuse setstat
    try {
      if (overwrite) await ops.replaceRename(sftp, tmp, remote);
      else await ops.rename(sftp, tmp, remote); // SFTPv3 rename never replaces
    } catch (err) {
      if (!overwrite && sftpStatus(err) === SftpStatus.Failure && (await ops.statOrNull(sftp, remote).catch(() => undefined))) {
        throw FsError.exists(path, err);
      }
      throw err;
    }
    return { size };
  };

  const done = new Promise<WriteResult>((resolve, reject) => {
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      const mapped = err instanceof HookError ? err.err : mapSftpError(err, 'write', path);
      cleanup().finally(() => {
        lease.release();
        reject(mapped);
      });
    };
    writer.on('error', fail);
    writer.on('close', () => {
      if (!writer.writableFinished) fail(FsError.aborted(path));
    });
    writer.on('finish', () => {
      publish().then((result) => {
        if (settled) return;
        settled = true;
        lease.release();
        resolve(result);
      }, fail);
    });
  });
  done.catch(() => undefined); // callers that only abort() must not see an unhandled rejection

  const abort = async (reason?: unknown): Promise<void> => {
    aborted = true;
    if (!settled) writer.destroy(reason instanceof FsError ? reason : FsError.aborted(path));
    await done.catch(() => undefined);
  };
  const unlisten = onAbort(o.signal, () => void abort(FsError.aborted(path)));
  done.then(unlisten, unlisten);
  return { stream: writer, done, abort };
}

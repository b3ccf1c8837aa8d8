import { FsError, FsErrorCode, onAbort, type WriteHandle, type WriteOptions, type WriteResult } from '@ferry/core';
import type { SftpPool } from './sftp-pool.js';
import { SftpWriter, closeHandle, type TransferTuning } from './sftp-streams.js';
import { mapSftpError } from './sftp-errors.js';
import * as ops from './sftp-ops.js';

/**
 * Fs.writeAt on a remote SFTP server: the existing file is opened for
 * writing without truncation (SSH_FXF_WRITE alone, flags 'r+') and written
 * from `offset` on, in place: not atomic (no temporary file), and abort()
 * keeps the bytes the server already acknowledged.
 */
export async function startWriteAt(
  pool: SftpPool,
  path: string,
  remote: string,
  offset: number,
  tuning: TransferTuning,
  o: WriteOptions,
): Promise<WriteHandle> {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new FsError(FsErrorCode.Invalid, `${path}: invalid write offset ${offset}`, { path });
  if (o.signal?.aborted) throw FsError.aborted(path);
  const lease = await pool.acquire(o.signal);
  const sftp = lease.sftp;
  let handle: Buffer;
  try {
    const st = await ops.stat(sftp, remote);
    if (ops.isDirMode(st.mode)) throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
    if (offset > st.size) throw new FsError(FsErrorCode.Invalid, `${path}: cannot write at offset ${offset}, the file has ${st.size} bytes`, { path });
    handle = await ops.open(sftp, remote, 'r+');
  } catch (err) {
    lease.release();
    throw mapSftpError(err, 'open for writing', path);
  }
  const writer = new SftpWriter(sftp, handle, path, tuning, offset);
  let settled = false;
  const done = new Promise<WriteResult>((resolve, reject) => {
    const end = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      void closeHandle(sftp, handle)
        .then(async () => {
          if (err === undefined && o.mtime) await ops.utimes(sftp, remote, o.mtime).catch(() => undefined); // best effort, as uploads
        })
        .finally(() => {
          lease.release();
          if (err === undefined) resolve({ size: writer.bytes });
          else reject(mapSftpError(err, 'write', path));
        });
    };
    writer.on('error', end);
    writer.on('close', () => {
      if (!writer.writableFinished) end(FsError.aborted(path));
    });
    writer.on('finish', () => end());
  });
  done.catch(() => undefined); // callers that only abort() must not see an unhandled rejection
  const abort = async (reason?: unknown): Promise<void> => {
    if (!settled) writer.destroy(reason instanceof FsError ? reason : FsError.aborted(path));
    await done.catch(() => undefined);
  };
  const unlisten = onAbort(o.signal, () => void abort(FsError.aborted(path)));
  done.then(unlisten, unlisten);
  return { stream: writer, done, abort };
}

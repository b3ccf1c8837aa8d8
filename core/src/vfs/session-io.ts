import { PassThrough } from 'node:stream';
import { RequestFsBatch } from '../fs/fs-batch.js';
import { FsError, FsErrorCode } from '../fs/fs-error.js';
import { parentPath } from '../fs/path.js';
import type { SessionRead, SessionReadOptions, SessionWrite, SessionWriteOptions } from '../sdk/file-session.js';
import { linkedSignal } from '../sdk/signals.js';
import type { SessionCore } from './session-core.js';
import { QuotaBatch, quotaScope, StorageReservation } from './quota-guard.js';
import { openDownload, prepareDownload } from './downloads.js';
import { STAGE_HWM, uploadFile } from './transfers.js';
import type { Mount } from './vfs.js';

/**
 * The transfers of FileSession as a front-end holds them (sdk/file-session.ts):
 * a download as a stream, an upload as a writable, a truncation. Each runs
 * under its own signal, linked to the session's and released once over.
 */

/** The byte range of a read (inclusive bounds) within a file of `size` bytes, or undefined for the whole file. */
function readRange(o: SessionReadOptions, size: number, vpath: string): { start: number; end: number } | undefined {
  if (o.start === undefined && o.end === undefined) return undefined;
  const start = o.start ?? 0;
  const end = Math.min(o.end ?? size - 1, size - 1);
  if (!Number.isSafeInteger(start) || start < 0 || (o.end !== undefined && (!Number.isSafeInteger(o.end) || o.end < start))) {
    throw new FsError(FsErrorCode.Invalid, `${vpath}: invalid byte range ${o.start ?? ''}-${o.end ?? ''}`, { path: vpath });
  }
  // at or past the end: nothing to send (a read at the end of a file)
  if (start >= size) return { start: size, end: size - 1 };
  return { start, end };
}

export async function openSessionRead(s: SessionCore, vpath: string, o: SessionReadOptions = {}): Promise<SessionRead> {
  const linked = o.signal ? linkedSignal(s.signal, o.signal) : undefined;
  const signal = linked?.signal ?? s.signal;
  try {
    const p = await prepareDownload(s, vpath, { signal });
    const dl = await openDownload(s, p, readRange(o, p.info.size, vpath), { signal, recycle: o.recycle });
    const done = linked ? dl.done.finally(() => linked.dispose()) : dl.done;
    return { info: p.info, stream: dl.stream, done, ...(dl.writeTo ? { writeTo: dl.writeTo } : {}) };
  } catch (err) {
    linked?.dispose();
    throw err;
  }
}

/**
 * Starts an upload fed by the returned writable; resolves once every check
 * passed and the backend's write is open (uploadFile's onOpen), rejects
 * with the refusal otherwise. abort() stops it (its own signal).
 *
 * The upload is a batch of one (FsBatch): its stat of the destination and
 * its write look at the entry through the same parent directory, opened and
 * checked once (local backends) and closed once the upload is over, where
 * each opened and checked it again. A file sent over SFTP paid the walk
 * twice (open, check, stat, close of its directory, each a round trip
 * through the thread pool) for one small file.
 */
export async function openSessionWrite(s: SessionCore, vpath: string, o: SessionWriteOptions = {}): Promise<SessionWrite> {
  // abort() fires the linked signal itself (no controller of its own to link)
  const linked = linkedSignal(s.signal, o.signal);
  const source = new PassThrough({ highWaterMark: STAGE_HWM });
  let opened!: () => void;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  const fsBatch = new RequestFsBatch();
  // deferred counters: gathered in a batch of the upload's own, handed to the session's once it is over
  const mount = o.deferCounters ? deferredMount(s, vpath) : undefined;
  const batch = mount ? new QuotaBatch() : undefined;
  const done = uploadFile(s, vpath, source, {
    size: o.size,
    mtime: o.mtime,
    mkdirParents: o.mkdirParents,
    offset: o.offset,
    truncate: o.truncate,
    signal: linked.signal,
    fsBatch,
    batch,
    onOpen: () => opened(),
  }).finally(() => {
    linked.dispose();
    if (mount && batch) s.uploadCounters().join(mount, batch);
    return fsBatch.close();
  });
  if (!(o.early && o.offset === undefined && passesUnseen(s, vpath))) await Promise.race([ready, done]);
  return {
    stream: source,
    done,
    abort(reason?: unknown) {
      linked.abort(reason ?? FsError.aborted(vpath));
    },
  };
}

/**
 * True when an upload of `vpath` passes the checks that need no storage
 * (SessionWriteOptions.early): write access, the file patterns, a real path
 * (not the root, not a virtual directory), and both the upload and the
 * overwrite permission of its parent, since whether the file exists is not
 * known yet. uploadFile makes each of them again.
 */
function passesUnseen(s: SessionCore, vpath: string): boolean {
  if (vpath === '/' || s.vfs.isVirtualDir(vpath)) return false;
  try {
    s.ensureWritable();
    s.checkName(vpath, 'write');
    s.vfs.resolve(vpath);
  } catch {
    return false;
  }
  const parent = parentPath(vpath);
  return s.perms.has(parent, 'upload') && s.perms.has(parent, 'overwrite');
}

/** The mount an upload's counters belong to; undefined when the path does not resolve (uploadFile then refuses it). */
function deferredMount(s: SessionCore, vpath: string): Mount | undefined {
  try {
    return s.vfs.resolve(vpath).mount;
  } catch {
    return undefined;
  }
}

/**
 * Sets a file's size in place: write access (write-disabled for the web
 * front-ends, file patterns, the overwrite permission on its parent), the
 * backend's truncate capability, and the storage quota (growing a file
 * reserves the bytes it adds, cutting it credits them). No filesystem event
 * is published (a truncation is not a transfer).
 */
export async function truncateFile(s: SessionCore, vpath: string, size: number, signal: AbortSignal): Promise<void> {
  s.ensureWritable();
  s.checkName(vpath, 'read');
  s.checkName(vpath, 'write');
  if (!Number.isSafeInteger(size) || size < 0) throw new FsError(FsErrorCode.Invalid, `${vpath}: invalid size ${size}`, { path: vpath });
  const info = await s.vfs.stat(vpath, { signal });
  if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  s.requirePerm(parentPath(vpath), `truncating ${vpath}`, 'overwrite');
  const r = s.vfs.resolve(vpath);
  const fs = await s.vfs.fs(r.mount);
  if (!fs.capabilities.truncate || !fs.truncate) throw FsError.notSupported('truncating a file', s.backendName(r));
  const storage = new StorageReservation(s.deps.tracker, quotaScope(s.user, r.mount, s.deps.usage, s.deps.quota), info.size, 0);
  await storage.begin(size);
  const journal = await s.deps.journal.begin({ username: s.user.username, folder: r.mount.folder?.name });
  try {
    try {
      await fs.truncate(r.fsPath, size, { signal });
    } catch (err) {
      storage.release();
      throw err;
    }
    await storage.commit(size);
  } finally {
    journal.end();
  }
}

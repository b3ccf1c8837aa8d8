import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FileInfo, Fs, FsBatch, PendingUpload, WriteHandle } from '../fs/fs.contract.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { parentPath } from '../fs/path.js';
import type { ActiveTransfer } from './connection-manager.js';
import { nowNanos, type FsEvent } from '../events/event-types.js';
import type { SessionCore } from './session-core.js';
import { hookError } from './hook-error.js';
import { quotaScope, StorageReservation, TransferReservation, type QuotaBatch } from './quota-guard.js';
import { pathWriteKey } from './path-write-key.js';
import type { PathWrite } from './quota-tracker.js';
import type { JournalEntry } from './upload-journal.js';
import { bandwidthFor, Throttle } from './throttle.js';
import { pump } from './pump.js';
import type { Resolved } from './vfs.js';

export const STAGE_HWM = 256 * 1024;

/** Counts the bytes of a transfer as they pass; `onChunk` may refuse a chunk by returning an error. */
export class Meter extends Transform {
  bytes = 0;
  constructor(private readonly onChunk: (n: number, chunk: Buffer) => Error | null) {
    super({ highWaterMark: STAGE_HWM });
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const err = this.onChunk(chunk.length, chunk);
    if (err) return cb(err);
    this.bytes += chunk.length;
    cb(null, chunk);
  }
}

/**
 * Records the user's first upload or download: true when this call did. The
 * database is asked only while the session's user has none (its update stays
 * guarded: another session may have been first); after that, no transfer of
 * the session writes the user's row again.
 */
export async function recordFirst(s: SessionCore, column: 'first_upload' | 'first_download'): Promise<boolean> {
  if (s.user[column]) return false;
  const set = await s.deps.usage.markFirst(s.user.id, column);
  s.user[column] ||= Date.now();
  return set;
}

export function transferLimits(s: SessionCore) {
  const c = s.deps.config.common;
  return { maxTotal: c.max_total_transfers, maxPerHost: c.max_per_host_transfers };
}

/** Max size of one uploaded file for the user (0: unlimited). */
export function maxUploadSize(s: SessionCore): number {
  const v = Number(s.user.filters.max_upload_file_size ?? 0);
  return Number.isFinite(v) && v > 0 ? v : 0;
}

function tooLarge(max: number): FsError {
  return new FsError(FsErrorCode.Quota, `the file exceeds the maximum upload size of ${max} bytes`);
}

/** What an upload stores: a stream, or a function opening it (not called when the upload takes `localFile` whole). */
export type UploadSource = Readable | (() => Readable);

export interface UploadOptions {
  /** Declared size (Content-Length of a raw upload), when known. */
  size?: number;
  mtime?: Date;
  mkdirParents?: boolean;
  /**
   * Holds the file back once its bytes are all stored and before it becomes
   * visible: called then (the transfer is over and leaves the connection's
   * list), publication waits for the promise it returns, and a rejection
   * discards the file (nothing visible, storage quota untouched) and is what
   * uploadFile rejects with. Multipart requests use it to publish all their
   * files or none. On backends without atomic uploads the file is already
   * in place when this is called: a rejection removes it.
   */
  hold?: () => Promise<void>;
  /**
   * Quota changes stored with those of the other uploads of the same
   * request (the caller flushes the batch once they are all over).
   */
  batch?: QuotaBatch;
  /**
   * Backend resources shared with the other uploads of the same request
   * (local backends: the checked parent directory, opened once); the caller
   * closes it once they are all over.
   */
  fsBatch?: FsBatch;
  /**
   * The caller already made sure the parent directory exists in this
   * request (the files of one multipart upload share it): neither created
   * nor checked again. Should it be gone, the backend's own error answers.
   */
  parentReady?: boolean;
  /** The operation's signal (FileSession.run): the session's when absent. */
  signal?: AbortSignal;
  /**
   * Writes into the existing file from this byte on (a resume or an append,
   * at most the file's size) rather than replacing it: needs the backend's
   * writeAtOffset capability and the overwrite permission; see
   * {@link uploadFile} for what differs.
   */
  offset?: number;
  /** With `offset`: the file is cut at the offset first (needs the backend's truncate capability). */
  truncate?: boolean;
  /** Called once every check passed and the backend's write is open, before the first byte is read from the source. */
  onOpen?: () => void;
  /**
   * The source's bytes are this file of the server's temporary storage (a
   * completed resumable upload, `size` bytes): a backend that can take it
   * whole (WriteHandle.adopt, local storage) moves it into place instead of
   * reading the source, when no bandwidth limit applies. The file is then
   * gone, whatever the outcome.
   */
  localFile?: string;
}

/**
 * Stores a client stream at `vpath`: checks (write-disabled, patterns,
 * upload/overwrite permission, max upload size, storage and transfer
 * quotas, transfer limits) first, then pumps the stream into the backend
 * (through the bandwidth throttle when there is one), checking the size and
 * quotas chunk by chunk.
 * Atomic backends publish the file only when complete, after the
 * before-publish hooks; sync hooks run next and a failing hook removes the
 * file. Aborting `s.signal` (client gone, connection closed) aborts the
 * write and leaves no file. The source is never destroyed here, so the
 * caller can still answer the client.
 *
 * With `offset` (a resumed or appended upload) the existing file is written
 * in place (Fs.writeAt): it needs the overwrite permission, is never atomic
 * (upload_mode does not apply: the before-publish hooks see the stored
 * file), and counts against the storage quota only the bytes it adds past
 * the file's former end. A failed or aborted write at an offset keeps the
 * bytes written (the client may resume again), and the quota is settled on
 * the file's size as stored then; a refusal by a hook removes the file, as
 * for any non-atomic upload. The upload event carries the file's final
 * size. The upload journal covers it like any upload (a crash in between is
 * repaired at start-up by a scan).
 */
export async function uploadFile(s: SessionCore, vpath: string, source: UploadSource, o: UploadOptions = {}): Promise<{ size: number }> {
  const startedAt = Date.now();
  const signal = o.signal ?? s.signal;
  s.ensureWritable();
  if (vpath === '/' || s.vfs.isVirtualDir(vpath)) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  s.checkName(vpath, 'write');
  const r = s.vfs.resolve(vpath);
  const fs = await s.vfs.fs(r.mount);
  // registered before the stat, so a concurrent upload to the same path that publishes first is seen
  const pending = s.deps.pathWrites.begin(pathWriteKey(s.user.id, r));
  let existing: FileInfo | null;
  try {
    existing = await s.vfs.statOrNull(vpath, { signal, batch: o.fsBatch });
  } catch (err) {
    pending.seen({ size: 0, existed: false }).end();
    throw err;
  }
  const pathWrite = pending.seen({ size: existing?.size ?? 0, existed: !!existing });
  try {
    return await uploadToPath(s, vpath, r, fs, existing, pathWrite, source, o, startedAt, signal);
  } finally {
    pathWrite.end();
  }
}

async function uploadToPath(
  s: SessionCore,
  vpath: string,
  r: Resolved,
  fs: Fs,
  existing: FileInfo | null,
  pathWrite: PathWrite,
  source: UploadSource,
  o: UploadOptions,
  startedAt: number,
  signal: AbortSignal,
): Promise<{ size: number }> {
  if (existing?.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  const at = writeAtOffset(s, vpath, r, fs, existing, o);
  s.requirePerm(parentPath(vpath), existing ? `overwriting ${vpath}` : `uploading to ${vpath}`, existing ? 'overwrite' : 'upload');
  const max = maxUploadSize(s);
  if (max && o.size !== undefined && (at?.offset ?? 0) + o.size > max) throw tooLarge(max);
  await s.before('pre-upload', r, existing?.size ?? 0);
  const parent = parentPath(vpath);
  if (o.parentReady) {
    // checked by an earlier file of the same request
  } else if (existing && !s.vfs.isVirtualDir(parent)) {
    // the destination was found in it: the parent is a directory of this backend (no second look)
  } else if (!s.vfs.isVirtualDir(parent) && o.fsBatch?.isDirectory(fs, parentPath(r.fsPath))) {
    // the backend opened it as a directory for the batch (the stat of the destination above, local backends)
  } else if (o.mkdirParents) await s.mkdir(parent, true, { signal });
  else if (fs.capabilities.realDirectories || s.vfs.isVirtualDir(parent)) {
    const p = await s.vfs.statOrNull(parent, { signal });
    if (!p) throw new FsError(FsErrorCode.NotFound, `${parent}: the parent directory does not exist (use mkdir_parents)`, { path: parent });
    if (!p.isDir) throw new FsError(FsErrorCode.NotDirectory, `${parent}: not a directory`, { path: parent });
  }

  const storage = new StorageReservation(s.deps.tracker, quotaScope(s.user, r.mount, s.deps.usage, s.deps.quota), existing?.size ?? 0, existing ? 0 : 1);
  const xfer = new TransferReservation(s.deps.tracker, s.deps.usage, s.deps.quota, s.user, 'upload');
  let transfer: ActiveTransfer | undefined;
  let handle: WriteHandle | undefined;
  let committed = false;
  // the path's turn (PathWrites.turn), taken just before the backend publishes
  let endTurn: (() => void) | undefined;
  // recorded until the quota counters are stored, so a crash in between is repaired at start-up (upload-journal.ts)
  let journal: JournalEntry | undefined;
  const endTransfer = () => {
    if (transfer) s.deps.connections.endTransfer(s.conn, transfer);
    transfer = undefined;
  };
  const hold = o.hold;
  const held = hold
    ? async () => {
        endTransfer();
        await hold();
      }
    : undefined;
  // bytes before the offset stay as they are: covered by the size of the file they belong to
  const kept = at?.offset ?? 0;
  try {
    await storage.begin(o.size === undefined ? undefined : kept + o.size);
    storage.take(kept);
    await xfer.begin(o.size);
    transfer = s.deps.connections.startTransfer(s.conn, { operation_type: 'upload', path: vpath }, transferLimits(s));
    const t = transfer;
    const bw = bandwidthFor(s.user, s.ip).upload;
    const atomic = !at && s.deps.config.common.upload_mode === 1 && fs.capabilities.atomicUpload;
    // the upload event, built once: the before-publish hooks and the bus get copies with their times as of then
    let uploadTemplate: FsEvent | undefined;
    const uploadEvent = async (size: number): Promise<FsEvent> => {
      if (uploadTemplate?.file_size !== size) uploadTemplate = await s.event('upload', r, { startedAt, size });
      const t = uploadTemplate;
      return { ...t, timestamp: nowNanos(), elapsed: Math.max(0, Date.now() - startedAt), groups: t.groups && [...t.groups] };
    };
    journal = await s.deps.journal.begin({ username: s.user.username, folder: r.mount.folder?.name });
    if (at?.cut) await fs.truncate!(r.fsPath, kept, { signal });
    const writeOptions = { size: o.size, mtime: o.mtime, signal, batch: o.fsBatch };
    handle = at
      ? await fs.writeAt!(r.fsPath, kept, writeOptions)
      : await fs.openWrite(r.fsPath, {
          size: o.size,
          mtime: o.mtime,
          overwrite: true,
          signal,
          batch: o.fsBatch,
          beforePublish: atomic
            ? async (pending: PendingUpload) => {
                await held?.();
                try {
                  await s.deps.hooks.runBeforePublish({ event: await uploadEvent(pending.size), fs, fsPath: r.fsPath, pending });
                } catch (err) {
                  throw hookError(err);
                }
                // the backend publishes next: in this process, alone among the steps on this path (see below)
                endTurn = await s.deps.pathWrites.turn(pathWriteKey(s.user.id, r));
              }
            : undefined,
        });
    let total = 0;
    const onChunk = (n: number): Error | null => {
      if (max && kept + total + n > max) return tooLarge(max);
      if (!storage.take(n)) return new FsError(FsErrorCode.Quota, `size quota exceeded: ${storage.scope.label} is used up`);
      if (!xfer.take(n)) return new FsError(FsErrorCode.Quota, 'upload transfer quota exceeded');
      total += n;
      t.size = total;
      s.conn.last_activity = Date.now();
      return null;
    };
    o.onOpen?.();
    if (o.localFile !== undefined && o.size !== undefined && bw <= 0 && handle.adopt && (await handle.adopt(o.localFile))) {
      const refused = onChunk(o.size);
      if (refused) throw refused;
      handle.stream.end();
    } else {
      await pump(typeof source === 'function' ? source() : source, onChunk, bw > 0 ? new Throttle(bw * 1024) : undefined, handle, signal);
    }
    const result = await handle.done.finally(() => endTurn?.());
    const written = result.size ?? total;
    const size = at ? (at.cut ? kept + written : Math.max(existing?.size ?? 0, kept + written)) : written;
    // what the published file replaced: what the backend found there as it published (it took this
    // path's turn, so no step of this process came in between), else what this upload saw, or the
    // file of a concurrent upload that published first
    const known = pathWrite.published(size);
    const replaced = result.replaced ?? known;
    const discard = async () => {
      pathWrite.published(null);
      await storage.commit(0, replaced.existed ? -1 : 0, replaced.size, o.batch);
      committed = true;
    };
    // backends that cannot hold a pending upload: the file is in place already, a refusal removes it
    if (!atomic && held) {
      try {
        await held();
      } catch (err) {
        await fs.remove(r.fsPath).catch(() => undefined);
        await discard();
        throw err;
      }
    }
    // backends that cannot hold a pending upload: the before-publish hooks see the stored file
    if (!atomic && s.deps.hooks.hasBeforePublish) {
      try {
        const pending: PendingUpload = { size, openRead: () => fs.openRead(r.fsPath, { signal }) };
        await s.deps.hooks.runBeforePublish({ event: await uploadEvent(size), fs, fsPath: r.fsPath, pending });
      } catch (err) {
        await fs.remove(r.fsPath).catch(() => undefined);
        await discard();
        throw hookError(err);
      }
    }
    const ev = await uploadEvent(size);
    try {
      await s.deps.hooks.runSync({ event: ev, fs, fsPath: r.fsPath });
    } catch (err) {
      await fs.remove(r.fsPath).catch(() => undefined);
      await discard();
      throw hookError(err);
    }
    // the transfer counters join the storage counters' write (vfs/counter-writes.ts); the finally's commit is then a no-op
    const xferStored = xfer.commit(o.batch).catch((err: unknown) => s.deps.logger.warn({ err }, 'cannot store transfer usage'));
    await storage.commit(size, replaced.existed ? 0 : 1, replaced.size, o.batch);
    committed = true;
    await xferStored;
    s.publish(ev);
    const markFirst = () => recordFirst(s, 'first_upload');
    if (await (o.batch ? o.batch.once('first_upload', markFirst) : markFirst())) s.publish({ ...ev, action: 'first-upload' });
    return { size };
  } catch (err) {
    if (handle) await handle.abort(err).catch(() => undefined);
    // a write at an offset keeps what it wrote: the quota follows the file as stored
    if (!committed && at && handle) {
      const st = await fs.stat(r.fsPath).catch(() => null);
      await storage
        .commit(st?.size ?? existing?.size ?? 0, 0, existing?.size ?? 0, o.batch)
        .catch((e: unknown) => s.deps.logger.warn({ err: e }, 'cannot store storage usage'));
    }
    if (!committed) storage.release();
    const e = signal.aborted && !isFsError(err) ? FsError.aborted(vpath) : err;
    await s.publishFailure('upload', r, startedAt, e, { size: xfer.bytes });
    throw e;
  } finally {
    endTurn?.();
    await xfer.commit(o.batch).catch((err: unknown) => s.deps.logger.warn({ err }, 'cannot store transfer usage'));
    endTransfer();
    const entry = journal;
    if (entry) {
      // with a batch, the storage counters are stored when the request's batch is flushed
      if (o.batch) o.batch.afterFlush(() => entry.end());
      else entry.end();
    }
  }
}

/** A write at an offset, checked: where it starts, and whether the file is cut there first. */
interface WriteAt {
  offset: number;
  cut: boolean;
}

/**
 * The write at an offset `o` asks for, checked against the file and the
 * backend, or undefined for a whole upload (no offset, or offset 0 with
 * nothing to keep: a missing file, or truncate asked).
 */
function writeAtOffset(s: SessionCore, vpath: string, r: Resolved, fs: Fs, existing: FileInfo | null, o: UploadOptions): WriteAt | undefined {
  const offset = o.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new FsError(FsErrorCode.Invalid, `invalid write offset ${o.offset}`, { path: vpath });
  if (o.offset === undefined || (offset === 0 && (!existing || o.truncate))) return undefined;
  if (!existing) throw FsError.notFound(vpath);
  if (offset > existing.size) {
    throw new FsError(FsErrorCode.Invalid, `${vpath}: cannot write at offset ${offset}, the file has ${existing.size} bytes`, { path: vpath });
  }
  if (!fs.capabilities.writeAtOffset || !fs.writeAt) throw FsError.notSupported('writing at an offset', s.backendName(r));
  const cut = !!o.truncate && offset < existing.size;
  if (cut && (!fs.capabilities.truncate || !fs.truncate)) throw FsError.notSupported('truncating a file', s.backendName(r));
  return { offset, cut };
}

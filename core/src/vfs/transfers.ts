import { PassThrough, Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { FileInfo, Fs, FsBatch, PendingUpload, ReadWithInfo, WriteHandle } from '../fs/fs.contract.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { baseName, parentPath } from '../fs/path.js';
import type { ActiveTransfer } from './connection-manager.js';
import { nowNanos, type FsEvent } from '../events/event-types.js';
import { FS_STATUS } from './fs-events.js';
import { hookError, type FileSession } from './file-session.js';
import { quotaScope, StorageReservation, TransferReservation, type QuotaBatch } from './quota-guard.js';
import type { PathWrite } from './quota-tracker.js';
import type { JournalEntry } from './upload-journal.js';
import { bandwidthFor, Throttle } from './throttle.js';
import { pump } from './pump.js';
import { readBufferPool, writeRecycling, type ReadBufferLease } from './read-buffers.js';
import { noteShortLived } from './gc-pacer.js';
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
async function recordFirst(s: FileSession, column: 'first_upload' | 'first_download'): Promise<boolean> {
  if (s.user[column]) return false;
  const set = await s.deps.usage.markFirst(s.user.id, column);
  s.user[column] ||= Date.now();
  return set;
}

function transferLimits(s: FileSession) {
  const c = s.deps.config.common;
  return { maxTotal: c.max_total_transfers, maxPerHost: c.max_per_host_transfers };
}

/** Max size of one uploaded file for the user (0: unlimited). */
export function maxUploadSize(s: FileSession): number {
  const v = Number(s.user.filters.max_upload_file_size ?? 0);
  return Number.isFinite(v) && v > 0 ? v : 0;
}

function tooLarge(max: number): FsError {
  return new FsError(FsErrorCode.Quota, `the file exceeds the maximum upload size of ${max} bytes`);
}

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
 */
export async function uploadFile(s: FileSession, vpath: string, source: Readable, o: UploadOptions = {}): Promise<{ size: number }> {
  const startedAt = Date.now();
  s.ensureWritable();
  if (vpath === '/' || s.vfs.isVirtualDir(vpath)) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  s.checkName(vpath, 'write');
  const r = s.vfs.resolve(vpath);
  const fs = await s.vfs.fs(r.mount);
  // registered before the stat, so a concurrent upload to the same path that publishes first is seen
  const pending = s.deps.pathWrites.begin(`${r.mount.folder ? `f:${r.mount.folder.folder_id}` : `u:${s.user.id}`}\0${r.fsPath}`);
  let existing: FileInfo | null;
  try {
    existing = await s.vfs.statOrNull(vpath, { signal: s.signal, batch: o.fsBatch });
  } catch (err) {
    pending.seen({ size: 0, existed: false }).end();
    throw err;
  }
  const pathWrite = pending.seen({ size: existing?.size ?? 0, existed: !!existing });
  try {
    return await uploadToPath(s, vpath, r, fs, existing, pathWrite, source, o, startedAt);
  } finally {
    pathWrite.end();
  }
}

async function uploadToPath(
  s: FileSession,
  vpath: string,
  r: Resolved,
  fs: Fs,
  existing: FileInfo | null,
  pathWrite: PathWrite,
  source: Readable,
  o: UploadOptions,
  startedAt: number,
): Promise<{ size: number }> {
  if (existing?.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  s.requirePerm(parentPath(vpath), existing ? `overwriting ${vpath}` : `uploading to ${vpath}`, existing ? 'overwrite' : 'upload');
  const max = maxUploadSize(s);
  if (max && o.size !== undefined && o.size > max) throw tooLarge(max);
  await s.before('pre-upload', r, existing?.size ?? 0);
  const parent = parentPath(vpath);
  if (o.parentReady) {
    // checked by an earlier file of the same request
  } else if (o.mkdirParents) await s.mkdir(parent, true);
  else if (fs.capabilities.realDirectories || s.vfs.isVirtualDir(parent)) {
    const p = await s.vfs.statOrNull(parent, { signal: s.signal });
    if (!p) throw new FsError(FsErrorCode.NotFound, `${parent}: the parent directory does not exist (use mkdir_parents)`, { path: parent });
    if (!p.isDir) throw new FsError(FsErrorCode.NotDirectory, `${parent}: not a directory`, { path: parent });
  }

  const storage = new StorageReservation(s.deps.tracker, quotaScope(s.user, r.mount, s.deps.usage, s.deps.quota), existing?.size ?? 0, existing ? 0 : 1);
  const xfer = new TransferReservation(s.deps.tracker, s.deps.usage, s.deps.quota, s.user, 'upload');
  let transfer: ActiveTransfer | undefined;
  let handle: WriteHandle | undefined;
  let committed = false;
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
  try {
    await storage.begin(o.size);
    await xfer.begin(o.size);
    transfer = s.deps.connections.startTransfer(s.conn, { operation_type: 'upload', path: vpath }, transferLimits(s));
    const t = transfer;
    const bw = bandwidthFor(s.user, s.ip).upload;
    const atomic = s.deps.config.common.upload_mode === 1 && fs.capabilities.atomicUpload;
    // the upload event, built once: the before-publish hooks and the bus get copies with their times as of then
    let uploadTemplate: FsEvent | undefined;
    const uploadEvent = async (size: number): Promise<FsEvent> => {
      if (uploadTemplate?.file_size !== size) uploadTemplate = await s.event('upload', r, { startedAt, size });
      const t = uploadTemplate;
      return { ...t, timestamp: nowNanos(), elapsed: Math.max(0, Date.now() - startedAt), groups: t.groups && [...t.groups] };
    };
    journal = await s.deps.journal.begin({ username: s.user.username, folder: r.mount.folder?.name });
    handle = await fs.openWrite(r.fsPath, {
      size: o.size,
      mtime: o.mtime,
      overwrite: true,
      signal: s.signal,
      batch: o.fsBatch,
      beforePublish: atomic
        ? async (pending: PendingUpload) => {
            await held?.();
            try {
              await s.deps.hooks.runBeforePublish({ event: await uploadEvent(pending.size), fs, fsPath: r.fsPath, pending });
            } catch (err) {
              throw hookError(err);
            }
          }
        : undefined,
    });
    let total = 0;
    const onChunk = (n: number): Error | null => {
      if (max && total + n > max) return tooLarge(max);
      if (!storage.take(n)) return new FsError(FsErrorCode.Quota, `size quota exceeded: ${storage.scope.label} is used up`);
      if (!xfer.take(n)) return new FsError(FsErrorCode.Quota, 'upload transfer quota exceeded');
      total += n;
      t.size = total;
      s.conn.last_activity = Date.now();
      return null;
    };
    await pump(source, onChunk, bw > 0 ? new Throttle(bw * 1024) : undefined, handle, s.signal);
    const result = await handle.done;
    const size = result.size ?? total;
    // what the published file replaced: what this upload saw, or the file of a concurrent upload that published first
    const replaced = pathWrite.published(size);
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
        const pending: PendingUpload = { size, openRead: () => fs.openRead(r.fsPath, { signal: s.signal }) };
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
    await storage.commit(size, replaced.existed ? 0 : 1, replaced.size, o.batch);
    committed = true;
    s.publish(ev);
    const markFirst = () => recordFirst(s, 'first_upload');
    if (await (o.batch ? o.batch.once('first_upload', markFirst) : markFirst())) s.publish({ ...ev, action: 'first-upload' });
    return { size };
  } catch (err) {
    if (handle) await handle.abort(err).catch(() => undefined);
    if (!committed) storage.release();
    const e = s.signal.aborted && !isFsError(err) ? FsError.aborted(vpath) : err;
    await s.publishFailure('upload', r, startedAt, e, { size: xfer.bytes });
    throw e;
  } finally {
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

/** A file checked for download. */
export interface PreparedDownload {
  vpath: string;
  info: FileInfo;
  r: Resolved;
  /**
   * The whole file, already opened by the request that reported `info`
   * (prepareDownload with `openWhole`, on a backend that can): whoever holds
   * the PreparedDownload destroys it unless it hands it to openDownload().
   */
  opened?: Readable;
}

/**
 * Checks a download (patterns, download permission, a regular file) and
 * returns its metadata. With `openWhole` (a download of the whole file), a
 * backend that reports the metadata with the bytes
 * (Fs.openReadWithInfo) opens the file at once: one request to remote
 * storage instead of two, unless a pre-download hook is configured (it runs
 * before the file is opened).
 */
export async function prepareDownload(s: FileSession, vpath: string, o: { openWhole?: boolean } = {}): Promise<PreparedDownload> {
  s.checkName(vpath, 'read');
  if (o.openWhole) {
    const opened = await openWithInfo(s, vpath);
    if (opened) return opened;
  }
  const info = await s.vfs.stat(vpath, { signal: s.signal });
  if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  s.requirePerm(parentPath(vpath), `downloading ${vpath}`, 'download');
  return { vpath, info, r: s.vfs.resolve(vpath) };
}

/**
 * The file opened with its metadata, or undefined when the usual path must
 * answer: no such backend call, a virtual directory, download not permitted,
 * a pre-download hook, or a path that is not a readable file (the usual
 * path then says which error).
 */
async function openWithInfo(s: FileSession, vpath: string): Promise<PreparedDownload | undefined> {
  if (s.vfs.isVirtualDir(vpath) || !s.perms.has(parentPath(vpath), 'download')) return undefined;
  const r = s.vfs.resolve(vpath);
  const fs = await s.vfs.fs(r.mount);
  if (!fs.openReadWithInfo || (await s.deps.hooks.handlesSync('pre-download'))) return undefined;
  let got: ReadWithInfo;
  try {
    got = await fs.openReadWithInfo(r.fsPath, { signal: s.signal });
  } catch (err) {
    if (isFsError(err, FsErrorCode.NotFound) || isFsError(err, FsErrorCode.IsDirectory) || isFsError(err, FsErrorCode.NotDirectory)) return undefined;
    throw err;
  }
  return { vpath, info: { ...got.info, name: baseName(vpath), path: vpath }, r, opened: got.stream };
}

export interface DownloadStream {
  stream: Readable;
  /** Settles when the stream was consumed (or failed); never rejects. */
  done: Promise<void>;
}

export interface DownloadOptions {
  /**
   * The stream goes to an HTTP response through hapi, which hands the
   * response to a stream's writeToStream(): read buffers are then lent from
   * the pool and reused once the socket took their bytes (sdk/read-buffers.ts).
   * Only for streams written by hapi (nothing else gives the chunks back).
   */
  recycle?: boolean;
}

/**
 * The Meter of a download; with a lease, writeToStream() (what hapi calls to
 * send a stream payload) writes the chunks itself and gives each back to the
 * lease once the socket has it.
 */
class DownloadMeter extends Meter {
  constructor(
    private readonly lease: ReadBufferLease | undefined,
    onChunk: (n: number, chunk: Buffer) => Error | null,
  ) {
    super(onChunk);
    if (lease) (this as unknown as { writeToStream: (dest: Writable) => void }).writeToStream = (dest) => writeRecycling(this, dest, lease);
  }
}

function downloadQuotaError(): FsError {
  return new FsError(FsErrorCode.Permission, 'download transfer quota exceeded');
}

/**
 * Wraps a source stream as a download: transfer registered on the
 * connection, download quota enforced as bytes flow, bandwidth throttled,
 * download/first-download events once the stream ends (or fails). The
 * caller destroys `stream` when the client goes away.
 */
export async function meteredDownload(
  s: FileSession,
  target: Resolved,
  label: string,
  declared: number,
  open: (signal: AbortSignal, buffers?: ReadBufferLease) => Promise<Readable>,
  o: DownloadOptions = {},
): Promise<DownloadStream> {
  const startedAt = Date.now();
  const xfer = new TransferReservation(s.deps.tracker, s.deps.usage, s.deps.quota, s.user, 'download');
  try {
    await xfer.begin(declared);
  } catch (err) {
    await s.publishFailure('download', target, startedAt, err);
    throw isFsError(err, FsErrorCode.Quota) ? downloadQuotaError() : err;
  }
  let transfer: ActiveTransfer;
  try {
    transfer = s.deps.connections.startTransfer(s.conn, { operation_type: 'download', path: label }, transferLimits(s));
  } catch (err) {
    await xfer.commit();
    throw err;
  }
  let quotaHit = false;
  const bw = bandwidthFor(s.user, s.ip).download;
  // (a throttle cuts chunks into slices: its chunks could not be given back whole)
  const lease = o.recycle && bw === 0 ? readBufferPool.lease() : undefined;
  const meter = new DownloadMeter(lease, (n, chunk) => {
    if (!lease?.owns(chunk)) noteShortLived(n); // garbage once sent (the lease's buffers are read into again)
    if (!xfer.take(n)) {
      quotaHit = true;
      return downloadQuotaError();
    }
    transfer.size += n;
    s.conn.last_activity = Date.now();
    return null;
  });
  let source: Readable;
  try {
    source = await open(s.signal, lease);
  } catch (err) {
    lease?.close();
    s.deps.connections.endTransfer(s.conn, transfer);
    await xfer.commit();
    throw err;
  }
  const stages: Transform[] = bw > 0 ? [meter, new Throttle(bw * 1024)] : [meter];
  const out = stages[stages.length - 1]!;
  pipeline([source, ...stages] as unknown as [Readable, Transform], { signal: s.signal }).catch((err: unknown) => {
    if (!out.destroyed) out.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  const done = (async () => {
    let error: unknown;
    try {
      await finished(out, { writable: false });
    } catch (err) {
      error = err ?? new Error('download interrupted');
    }
    if (!source.destroyed) source.destroy();
    lease?.close();
    s.deps.connections.endTransfer(s.conn, transfer);
    await xfer.commit().catch((err: unknown) => s.deps.logger.warn({ err }, 'cannot store transfer usage'));
    if (error !== undefined) {
      const status = quotaHit ? FS_STATUS.QuotaExceeded : FS_STATUS.Error;
      const ev = await s.event('download', target, { startedAt, size: meter.bytes, status }).catch(() => undefined);
      if (ev) s.publish(ev);
      return;
    }
    const ev = await s.event('download', target, { startedAt, size: meter.bytes });
    s.publish(ev);
    if (await recordFirst(s, 'first_download')) s.publish({ ...ev, action: 'first-download' });
  })().catch((err: unknown) => s.deps.logger.warn({ err }, 'download bookkeeping failed'));
  return { stream: out, done };
}

/** Opens a prepared download, optionally a byte range (inclusive bounds), after the pre-download hooks. */
export async function openDownload(
  s: FileSession,
  p: PreparedDownload,
  range?: { start: number; end: number },
  o: DownloadOptions = {},
): Promise<DownloadStream> {
  const { opened } = p;
  if (opened && range) {
    opened.destroy();
    throw new Error('a download opened whole cannot send a range');
  }
  try {
    await s.before('pre-download', p.r, p.info.size);
  } catch (err) {
    opened?.destroy();
    throw err;
  }
  const length = range ? range.end - range.start + 1 : p.info.size;
  try {
    return await meteredDownload(
      s,
      p.r,
      p.vpath,
      length,
      async (signal, buffers) => {
        if (opened) return opened;
        const fs = await s.vfs.fs(p.r.mount);
        if (length === 0) {
          const empty = new PassThrough();
          empty.end();
          return empty;
        }
        return fs.openRead(p.r.fsPath, range ? { start: range.start, end: range.end, signal, buffers } : { signal, buffers });
      },
      o,
    );
  } catch (err) {
    opened?.destroy(); // refused before the transfer began (quota, connection limits)
    throw err;
  }
}

import { PassThrough, type Readable, type Transform, type Writable } from 'node:stream';
import { finished as eos } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { FileInfo, ReadWithInfo } from '../fs/fs.contract.js';
import { FsError, FsErrorCode, isFsError } from '../fs/fs-error.js';
import { baseName, parentPath } from '../fs/path.js';
import type { ActiveTransfer } from './connection-manager.js';
import { FS_STATUS } from './fs-events.js';
import type { SessionCore } from './session-core.js';
import { TransferReservation } from './quota-guard.js';
import { bandwidthFor, Throttle } from './throttle.js';
import { readBufferPool, writeRecycling, type ReadBufferLease } from './read-buffers.js';
import { noteShortLived } from './gc-pacer.js';
import type { Resolved } from './vfs.js';
import { Meter, recordFirst, transferLimits } from './transfers.js';
import { onAbort } from '../sdk/signals.js';

/*
 * Downloads of a file session: checks, then the bytes metered (download
 * quota, transfer limits, bandwidth) with the download events once over.
 */

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
export async function prepareDownload(s: SessionCore, vpath: string, o: { openWhole?: boolean; signal?: AbortSignal } = {}): Promise<PreparedDownload> {
  const signal = o.signal ?? s.signal;
  s.checkName(vpath, 'read');
  if (o.openWhole) {
    const opened = await openWithInfo(s, vpath, signal);
    if (opened) return opened;
  }
  const info = await s.vfs.stat(vpath, { signal });
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
async function openWithInfo(s: SessionCore, vpath: string, signal: AbortSignal): Promise<PreparedDownload | undefined> {
  if (s.vfs.isVirtualDir(vpath) || !s.perms.has(parentPath(vpath), 'download')) return undefined;
  const r = s.vfs.resolve(vpath);
  const fs = await s.vfs.fs(r.mount);
  if (!fs.openReadWithInfo || (await s.deps.hooks.handlesSync('pre-download'))) return undefined;
  let got: ReadWithInfo | undefined;
  try {
    got = await fs.openReadWithInfo(r.fsPath, { signal });
  } catch (err) {
    if (isFsError(err, FsErrorCode.NotFound) || isFsError(err, FsErrorCode.IsDirectory) || isFsError(err, FsErrorCode.NotDirectory)) return undefined;
    throw err;
  }
  if (!got) return undefined;
  return { vpath, info: { ...got.info, name: baseName(vpath), path: vpath }, r, opened: got.stream };
}

export interface DownloadStream {
  stream: Readable;
  /** Settles when the stream was consumed (or failed); never rejects. */
  done: Promise<void>;
  /**
   * With `recycle`: writes `stream` to `dest` (a socket, a response) chunk
   * by chunk and gives each read buffer back once `dest` took its bytes, so
   * it is read into again (vfs/read-buffers.ts). The front-end calls it
   * instead of piping the stream (the HTTP layer hands it to hapi, see
   * http/user-session.ts); a stream piped otherwise reads into new buffers.
   */
  writeTo?: (dest: Writable) => void;
}

export interface DownloadOptions {
  /**
   * Read buffers are lent from the pool and given back through
   * DownloadStream.writeTo: only for a front-end that writes the stream
   * with it (nothing else gives the chunks back).
   */
  recycle?: boolean;
  /** The operation's signal (FileSession.run): the session's when absent. */
  signal?: AbortSignal;
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
  s: SessionCore,
  target: Resolved,
  label: string,
  declared: number,
  open: (signal: AbortSignal, buffers?: ReadBufferLease) => Promise<Readable>,
  o: DownloadOptions = {},
): Promise<DownloadStream> {
  const startedAt = Date.now();
  const signal = o.signal ?? s.signal;
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
  const meter = new Meter((n, chunk) => {
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
    source = await open(signal, lease);
  } catch (err) {
    lease?.close();
    s.deps.connections.endTransfer(s.conn, transfer);
    await xfer.commit();
    throw err;
  }
  const stages: Transform[] = bw > 0 ? [meter, new Throttle(bw * 1024)] : [meter];
  const out = stages[stages.length - 1]!;
  chain(source, stages, signal);
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
    // not waited for: stored with the next counter changes, within COUNTERS_LINGER_MS (the reservation counts the bytes until then)
    void xfer.commit(undefined, { linger: true }).catch((err: unknown) => s.deps.logger.warn({ err }, 'cannot store transfer usage'));
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
  return { stream: out, done, writeTo: lease ? (dest) => writeRecycling(out, dest, lease) : undefined };
}

/**
 * Links `source` through `stages` as stream.pipeline() does (an error or a
 * premature close of any of them, or `signal`, destroys them all; the last
 * stage gets the error), without what pipeline() costs per call: its own
 * AbortController, aborted once the streams are done, which builds a
 * DOMException with a stack trace, for every download (a profile of 4 KiB
 * downloads: docs/performance-history.md).
 */
export function chain(source: Readable, stages: Transform[], signal: AbortSignal): void {
  const out = stages[stages.length - 1]!;
  const all: Readable[] = [source, ...stages];
  let failed = false;
  const fail = (err: unknown): void => {
    if (failed) return;
    failed = true;
    const e = err instanceof Error ? err : new Error(String(err ?? 'aborted'));
    for (const s of all) if (!s.destroyed) s.destroy(s === out ? e : undefined);
  };
  const off = onAbort(signal, fail);
  for (const s of all) {
    eos(s, (err) => {
      if (err) fail(err);
      if (s === out) off();
    });
  }
  let prev: Readable = source;
  for (const st of stages) prev = prev.pipe(st);
}

/** Opens a prepared download, optionally a byte range (inclusive bounds), after the pre-download hooks. */
export async function openDownload(
  s: SessionCore,
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

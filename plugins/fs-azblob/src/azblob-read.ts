import { PassThrough, type Readable } from 'node:stream';
import type { BlobClient } from '@azure/storage-blob';
import { emptyReadable, FsError, FsErrorCode, ParallelRangeReadable, totalFromContentRange } from '@ferry/core';
import { isInvalidRange, isNotFound } from './errors.js';

export interface AzReadParams {
  blob: BlobClient;
  path: string;
  start: number;
  end?: number;
  signal?: AbortSignal;
  partSize: number;
  concurrency: number;
  /** A body that moves no byte for this long (while the reader wants data) fails; 0: never. */
  idleTimeoutMs: number;
  isDir(): Promise<boolean>;
  mapError(err: unknown): FsError;
}

/**
 * Opens a (ranged) blob read. The first part is requested before the stream
 * is returned (NOT_FOUND / IS_DIR reject here) and tells the blob's size;
 * larger ranges continue as parallel ranged downloads of partSize bytes.
 */
export async function openAzRead(p: AzReadParams): Promise<Readable> {
  const { path, start, end } = p;
  if (start < 0 || (end !== undefined && end < start)) {
    throw new FsError(FsErrorCode.Invalid, `${path}: invalid range ${start}-${end ?? ''}`, { path });
  }
  const part = p.concurrency > 1 ? p.partSize : Infinity;
  const firstEnd = Math.min(end ?? Infinity, start + part - 1);
  const get = async (s: number, e: number, signal?: AbortSignal) => {
    const res = await p.blob.download(s, e === Infinity ? undefined : e - s + 1, { abortSignal: signal, maxRetryRequests: 3 });
    if (res.readableStreamBody) watchIdle(res.readableStreamBody as Readable, p.idleTimeoutMs, path);
    return res;
  };
  let first;
  try {
    first = await get(start, firstEnd, p.signal);
  } catch (e) {
    if (isNotFound(e) && (await p.isDir().catch(() => false))) {
      throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
    }
    if (isInvalidRange(e)) {
      const size = await p.blob.getProperties().then(
        (r) => r.contentLength ?? 0,
        () => undefined,
      );
      if (size !== undefined && start >= size) return emptyReadable();
    }
    throw p.mapError(e);
  }
  const body = first.readableStreamBody as Readable;
  const total = totalFromContentRange(first.contentRange) ?? start + (first.contentLength ?? 0);
  if (total <= start) {
    body?.destroy();
    return emptyReadable();
  }
  const last = Math.min(end ?? Infinity, total - 1);
  let out: Readable;
  if (firstEnd >= last) {
    const pass = new PassThrough();
    body.on('error', (e) => pass.destroy(p.mapError(e)));
    pass.on('close', () => body.destroy());
    out = body.pipe(pass);
  } else {
    out = new ParallelRangeReadable({
      start,
      end: last,
      partSize: part,
      concurrency: p.concurrency,
      partTimeoutMs: 0,
      first: body,
      fetch: async (s, e, signal) => (await get(s, e, signal)).readableStreamBody as Readable,
      mapError: (e) => p.mapError(e),
    });
  }
  if (p.signal) {
    const signal = p.signal;
    const onAbort = () => out.destroy(FsError.aborted(path));
    signal.addEventListener('abort', onAbort, { once: true });
    out.on('close', () => signal.removeEventListener('abort', onAbort));
  }
  return out;
}

/**
 * Fails `body` with UNAVAILABLE when it delivers no byte for `ms` while flowing
 * (a stalled server: the Azure SDK has no socket inactivity timeout). Time with a
 * full buffer (the reader is slow) does not count.
 */
export function watchIdle(body: Readable, ms: number, path: string): void {
  if (!(ms > 0)) return;
  const timer = setTimeout(function fire() {
    // a full buffer means the reader is slow, not the server
    if (body.readableLength >= body.readableHighWaterMark) return void timer.refresh();
    body.destroy(new FsError(FsErrorCode.Unavailable, `${path}: Azure Blob sent no data for ${ms / 1000} s`, { path }));
  }, ms);
  timer.unref();
  const refresh = () => timer.refresh();
  body.on('data', refresh);
  body.once('close', () => {
    clearTimeout(timer);
    body.off('data', refresh);
  });
}

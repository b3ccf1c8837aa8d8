import { PassThrough, type Readable } from 'node:stream';
import type { BlobClient } from '@azure/storage-blob';
import { emptyReadable, FsError, FsErrorCode, ParallelRangeReadable, totalFromContentRange } from '@ferry/core';
import type { BlobHead } from './azblob-base.js';
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

/** A read as openAzReadWithHead() opened it: the stream and the blob's headers. */
export interface AzOpenedRead {
  stream: Readable;
  /** The blob as the first answer described it, `contentLength` the blob's whole size. */
  head: BlobHead;
}

/** Opens a (ranged) blob read: openAzReadWithHead() without the headers. */
export async function openAzRead(p: AzReadParams): Promise<Readable> {
  return (await openAzReadWithHead(p)).stream;
}

/**
 * Opens a (ranged) blob read. The first part is requested before the stream
 * is returned (NOT_FOUND / IS_DIR reject here) and tells the blob's size and
 * headers (Last-Modified, ETag, metadata: what Get Blob Properties would);
 * larger ranges continue as parallel ranged downloads of partSize bytes. A
 * whole read with concurrency 1 is one unranged Get Blob; a ranged first part
 * of an empty blob is refused (416) and Get Blob Properties then describes it.
 */
export async function openAzReadWithHead(p: AzReadParams): Promise<AzOpenedRead> {
  const { path, start, end } = p;
  if (start < 0 || (end !== undefined && end < start)) {
    throw new FsError(FsErrorCode.Invalid, `${path}: invalid range ${start}-${end ?? ''}`, { path });
  }
  if (p.signal?.aborted) throw FsError.aborted(path);
  if (path === '/') throw new FsError(FsErrorCode.IsDirectory, '/: is a directory', { path });
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
      const props = await p.blob.getProperties({ abortSignal: p.signal }).catch(() => undefined);
      const size = props?.contentLength ?? 0;
      if (props && start >= size) return { stream: emptyReadable(), head: headOf(props, size) };
    }
    throw p.mapError(e);
  }
  const body = first.readableStreamBody as Readable;
  const total = totalFromContentRange(first.contentRange) ?? start + (first.contentLength ?? 0);
  const head = headOf(first, total);
  if (total <= start) {
    body?.destroy();
    return { stream: emptyReadable(), head };
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
  return { stream: out, head };
}

/** The headers of a Get Blob (Properties) answer that describe the blob, of `size` bytes in all. */
function headOf(r: BlobHead, size: number): BlobHead {
  return { contentLength: size, lastModified: r.lastModified, etag: r.etag, metadata: r.metadata };
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

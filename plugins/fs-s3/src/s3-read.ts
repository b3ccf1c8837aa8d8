import { PassThrough, Transform, type Readable } from 'node:stream';
import { emptyReadable, FsError, FsErrorCode, ParallelRangeReadable, totalFromContentRange } from '@ferry/core';
import { isInvalidRange, isNotFound } from './errors.js';

/** What S3 tells of an object in a GetObject or HeadObject answer. */
export interface S3ObjectMeta {
  ContentLength?: number;
  LastModified?: Date;
  ETag?: string;
  Metadata?: Record<string, string>;
}

interface GetOutput extends S3ObjectMeta {
  Body?: unknown;
  ContentRange?: string;
}

/** A read and the object's metadata (ContentLength: the whole object's size) from its first answer. */
export interface S3ReadWithMeta {
  stream: Readable;
  meta: S3ObjectMeta;
}

export interface S3ReadParams {
  path: string;
  start: number;
  end?: number;
  signal?: AbortSignal;
  partSize: number;
  concurrency: number;
  partTimeoutMs: number;
  /** GetObject with an optional Range header value. */
  get(range: string | undefined, e: number, signal?: AbortSignal): Promise<GetOutput>;
  /** HeadObject: the object's metadata, undefined when it does not exist. */
  head(): Promise<S3ObjectMeta | undefined>;
  isDir(): Promise<boolean>;
  mapError(err: unknown): FsError;
}

/**
 * Opens a (ranged) read. The first part is requested before the stream is
 * returned, so NOT_FOUND / IS_DIR reject here; it also tells the object's
 * size. When the range spans more than one part and concurrency > 1, the
 * remaining parts are fetched in parallel (ranged GETs of partSize bytes);
 * otherwise one GET streams the whole range.
 */
export async function openS3Read(p: S3ReadParams): Promise<Readable> {
  return (await openS3ReadWithMeta(p)).stream;
}

/**
 * openS3Read() that also reports the object's metadata from the first
 * GetObject's answer (no extra request); only a range past the end refused
 * with 416 (any range of an empty object on AWS) takes it from the HeadObject
 * that tells the size.
 */
export async function openS3ReadWithMeta(p: S3ReadParams): Promise<S3ReadWithMeta> {
  const { path, start, end } = p;
  if (start < 0 || (end !== undefined && end < start)) {
    throw new FsError(FsErrorCode.Invalid, `${path}: invalid range ${start}-${end ?? ''}`, { path });
  }
  const part = p.concurrency > 1 ? p.partSize : Infinity;
  const firstEnd = Math.min(end ?? Infinity, start + part - 1);
  const get = async (s: number, e: number, signal?: AbortSignal) => {
    const range = s === 0 && e === Infinity ? undefined : `bytes=${s}-${e === Infinity ? '' : e}`;
    const out = await p.get(range, e, signal);
    return range ? { ...out, Body: fitRange(out.Body as Readable, out.ContentRange, s, e) } : out;
  };
  // download_part_max_time covers the first part too: its request and its body
  const timed = part !== Infinity && p.partTimeoutMs > 0;
  const deadline = Date.now() + p.partTimeoutMs;
  const partTimer = timed ? AbortSignal.timeout(p.partTimeoutMs) : undefined;
  const partTimeout = () =>
    new FsError(FsErrorCode.Unavailable, `${path}: a download part took longer than download_part_max_time (${p.partTimeoutMs / 1000} s)`, { path });
  let first: GetOutput;
  try {
    first = await get(start, firstEnd, partTimer ? AbortSignal.any(p.signal ? [p.signal, partTimer] : [partTimer]) : p.signal);
  } catch (e) {
    if (partTimer?.aborted && !p.signal?.aborted) throw partTimeout();
    if (isNotFound(e) && (await p.isDir().catch(() => false))) {
      throw new FsError(FsErrorCode.IsDirectory, `${path}: is a directory`, { path });
    }
    if (isInvalidRange(e)) {
      // Start at or past the end (or any range of an empty object on AWS): nothing to read.
      const head = await p.head().catch(() => undefined);
      if (head?.ContentLength !== undefined && start >= head.ContentLength) return { stream: emptyReadable(), meta: head };
    }
    throw p.mapError(e);
  }
  const body = first.Body as Readable;
  const total = totalFromContentRange(first.ContentRange) ?? start + (first.ContentLength ?? 0);
  const { LastModified, ETag, Metadata } = first;
  const meta: S3ObjectMeta = { ContentLength: total, LastModified, ETag, Metadata };
  if (total <= start) {
    // s3rver answers a ranged GET of an empty object with 206, Content-Length 1 and no body.
    body.destroy();
    return { stream: emptyReadable(), meta };
  }
  const last = Math.min(end ?? Infinity, total - 1);
  let out: Readable;
  if (firstEnd >= last) {
    const pass = new PassThrough();
    body.on('error', (e) => pass.destroy(p.mapError(e)));
    pass.on('close', () => body.destroy());
    out = body.pipe(pass);
  } else {
    if (timed) {
      // the range reader collects each part as fast as the server sends it: the client's pace does not count
      const timer = setTimeout(() => body.destroy(partTimeout()), Math.max(0, deadline - Date.now()));
      body.once('close', () => clearTimeout(timer));
    }
    out = new ParallelRangeReadable({
      start,
      end: last,
      partSize: part,
      concurrency: p.concurrency,
      partTimeoutMs: p.partTimeoutMs,
      first: body,
      fetch: async (s, e, signal) => (await get(s, e, signal)).Body as Readable,
      mapError: (e) => p.mapError(e),
    });
  }
  if (p.signal) {
    const signal = p.signal;
    const onAbort = () => out.destroy(FsError.aborted(path));
    signal.addEventListener('abort', onAbort, { once: true });
    out.on('close', () => signal.removeEventListener('abort', onAbort));
  }
  return { stream: out, meta };
}

/**
 * Trims a ranged response to the bytes asked for when the server sent more:
 * s3rver reads `bytes=0-0` as "from 0 to the end", and a server that ignores
 * Range answers the whole object.
 */
export function fitRange(body: Readable, contentRange: string | undefined, start: number, end: number): Readable {
  const m = contentRange ? /^bytes (\d+)-(\d+)\//.exec(contentRange) : null;
  const sentStart = m ? Number(m[1]) : 0;
  const sentEnd = m ? Number(m[2]) : Infinity;
  if (sentStart === start && sentEnd <= end) return body;
  let skip = Math.max(0, start - sentStart);
  let left = end === Infinity ? Infinity : end - start + 1;
  const trim = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        return cb();
      }
      const part = chunk.subarray(skip, skip + Math.min(left, chunk.length - skip));
      skip = 0;
      left -= part.length;
      if (part.length) this.push(part);
      if (left <= 0) {
        this.push(null);
        body.destroy();
      }
      cb();
    },
  });
  body.on('error', (e) => trim.destroy(e));
  trim.on('close', () => body.destroy());
  return body.pipe(trim);
}

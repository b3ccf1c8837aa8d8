import { Writable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { FsError, FsErrorCode, PartBuffers, type WriteHandle, type WriteResult } from '@ferry/core';
import { mapS3Error } from './errors.js';

/** S3 allows at most 10,000 parts per multipart upload. */
const MAX_PARTS = 10_000;

export interface S3WriteParams {
  client: S3Client;
  bucket: string;
  key: string;
  /** Ferry path, for errors. */
  path: string;
  partSize: number;
  concurrency: number;
  partMaxTimeMs: number;
  size?: number;
  /** Extra PutObject/CreateMultipartUpload parameters (content type, metadata, ACL, SSE-C...). */
  params: Record<string, unknown>;
  signal?: AbortSignal;
}

/**
 * A streamed upload: bytes written to `stream` are copied into part buffers
 * of `partSize` and sent as a multipart upload, `concurrency` parts in flight
 * while the next one fills; an object that fits in one part is sent as one
 * PutObject. The buffers are reused, so one upload holds at most
 * `partSize × (concurrency + 1)` bytes, and the writer waits (backpressure)
 * while every buffer is in use. The object becomes visible only when the
 * upload completes, so an aborted or failed write never leaves a partial
 * object.
 *
 * Every request carries this write's AbortSignal (UploadPart also the
 * per-part time limit), so abort() cancels requests in flight. The final
 * AbortMultipartUpload is sent without it; servers that do not implement it
 * (s3rver answers 405) are tolerated.
 */
export function startS3Upload(p: S3WriteParams): WriteHandle {
  const ctrl = new AbortController();
  let partSize = p.partSize;
  if (p.size !== undefined && p.size > partSize * MAX_PARTS) partSize = Math.ceil(p.size / MAX_PARTS);
  const buffers = new PartBuffers(partSize, p.concurrency + 1);
  const base = { ...p.params, Bucket: p.bucket, Key: p.key };

  let bytes = 0;
  let current: Buffer | undefined;
  let filled = 0;
  let partNumber = 0;
  let uploadId: Promise<string> | undefined;
  const parts: CompletedPart[] = [];
  const inflight = new Set<Promise<void>>();
  let failure: FsError | undefined;
  let completed = false;

  const fail = (err: unknown): FsError => {
    failure ??= err instanceof FsError ? err : mapS3Error(err, p.path, p.bucket);
    if (!ctrl.signal.aborted) ctrl.abort(failure);
    return failure;
  };
  const checkFailed = () => {
    if (failure) throw failure;
  };

  const createUpload = async (): Promise<string> => {
    const out = await p.client.send(new CreateMultipartUploadCommand({ ...base, IfNoneMatch: undefined } as never), { abortSignal: ctrl.signal });
    if (!out.UploadId) throw new Error('CreateMultipartUpload returned no UploadId');
    return out.UploadId;
  };

  /** Sends `buf[0, len)` as the next part; the buffer returns to the pool once sent. */
  const sendPart = (buf: Buffer, len: number): void => {
    const n = ++partNumber;
    const task = (async () => {
      try {
        if (n > MAX_PARTS) {
          throw new FsError(FsErrorCode.Invalid, `${p.path}: more than ${MAX_PARTS} parts of ${partSize} bytes: raise upload_part_size`, { path: p.path });
        }
        uploadId ??= createUpload();
        const id = await uploadId;
        const signal = p.partMaxTimeMs > 0 ? AbortSignal.any([ctrl.signal, AbortSignal.timeout(p.partMaxTimeMs)]) : ctrl.signal;
        const out = await p.client.send(
          new UploadPartCommand({ ...base, IfNoneMatch: undefined, UploadId: id, PartNumber: n, Body: buf.subarray(0, len), ContentLength: len } as never),
          { abortSignal: signal },
        );
        if (!out.ETag) throw new Error(`UploadPart ${n} returned no ETag`);
        parts.push({ PartNumber: n, ETag: out.ETag });
      } catch (err) {
        fail(err);
      } finally {
        buffers.release(buf);
      }
    })();
    inflight.add(task);
    void task.finally(() => inflight.delete(task));
  };

  /** Copies `chunk` into part buffers, sending each full buffer once more bytes follow it. */
  const take = async (chunk: Buffer): Promise<void> => {
    let off = 0;
    while (off < chunk.length) {
      checkFailed();
      if (current && filled === current.length) {
        sendPart(current, filled);
        current = undefined;
      }
      if (!current) {
        current = await buffers.acquire();
        filled = 0;
        checkFailed();
      }
      const n = chunk.copy(current, filled, off);
      filled += n;
      off += n;
    }
  };

  const finish = async (): Promise<WriteResult> => {
    checkFailed();
    if (partNumber === 0) {
      // everything fits in one part: a single PutObject
      const body = current ? current.subarray(0, filled) : Buffer.alloc(0);
      const out = await p.client.send(new PutObjectCommand({ ...base, Body: body, ContentLength: body.length } as never), { abortSignal: ctrl.signal });
      buffers.dispose(current);
      current = undefined;
      const etag = out.ETag;
      return { size: bytes, ...(etag ? { etag: etag.replace(/"/g, '') } : {}) };
    }
    if (current && filled > 0) sendPart(current, filled);
    current = undefined;
    while (inflight.size) await Promise.all([...inflight]);
    checkFailed();
    const id = await uploadId!;
    parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
    const out = await p.client.send(new CompleteMultipartUploadCommand({ ...base, UploadId: id, MultipartUpload: { Parts: parts } } as never), {
      abortSignal: ctrl.signal,
    });
    buffers.dispose();
    const etag = out.ETag;
    return { size: bytes, ...(etag ? { etag: etag.replace(/"/g, '') } : {}) };
  };

  let resolveDone!: (r: WriteResult) => void;
  let rejectDone!: (e: FsError) => void;
  const done = new Promise<WriteResult>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  done.catch(() => undefined); // callers that abort need not await `done`

  /** After a failure: the parts in flight end, then the multipart upload is aborted (never awaited by writers). */
  const settleFailure = async (err: FsError) => {
    while (inflight.size) await Promise.all([...inflight]);
    if (uploadId) {
      const id = await uploadId.catch(() => undefined);
      if (id) {
        // best effort: the failure reported is the one that stopped the upload (s3rver answers 405 here)
        await p.client.send(new AbortMultipartUploadCommand({ Bucket: p.bucket, Key: p.key, UploadId: id })).catch(() => undefined);
      }
    }
    rejectDone(err);
  };

  const stream = new Writable({
    highWaterMark: 256 * 1024,
    write(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      take(chunk).then(
        () => cb(),
        (err: unknown) => cb(fail(err)),
      );
    },
    final(cb) {
      finish().then(
        (r) => {
          completed = true;
          resolveDone(r);
          cb();
        },
        (err: unknown) => cb(fail(err)),
      );
    },
    destroy(err, cb) {
      // An error, the writer going away (client disconnect) or abort(): the upload is cancelled.
      if (!completed) void settleFailure(fail(failure ?? err ?? FsError.aborted(p.path)));
      cb(err);
    },
  });

  // failures are reported through `done` (and to a pipeline writing here): never an unhandled 'error' event
  stream.on('error', () => undefined);

  const onSignal = () => stream.destroy(FsError.aborted(p.path));
  if (p.signal?.aborted) queueMicrotask(onSignal);
  p.signal?.addEventListener('abort', onSignal, { once: true });
  void done.then(
    () => p.signal?.removeEventListener('abort', onSignal),
    () => p.signal?.removeEventListener('abort', onSignal),
  );

  return {
    stream,
    done,
    async abort(reason?: unknown) {
      if (!completed) {
        fail(reason instanceof FsError ? reason : FsError.aborted(p.path));
        stream.destroy(failure);
      }
      await done.then(
        () => undefined,
        () => undefined,
      );
    },
  };
}

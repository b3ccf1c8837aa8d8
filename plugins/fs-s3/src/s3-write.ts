import { PassThrough } from 'node:stream';
import { AbortMultipartUploadCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ByteCounter, FsError, type WriteHandle, type WriteResult } from '@ferry/core';
import { isTolerableAbortFailure, mapS3Error } from './errors.js';

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
 * A streamed upload through lib-storage: bytes written to `stream` are cut
 * into parts of `partSize` (at most `concurrency` parts in memory) and sent as
 * a multipart upload, or as one PutObject when they fit in a single part. The
 * object becomes visible only when the upload completes, so an aborted or
 * failed write never leaves a partial object.
 *
 * Every request the upload sends carries this write's AbortSignal (plus the
 * per-part time limit), so abort() cancels requests in flight. The final
 * AbortMultipartUpload is sent without it; servers that do not implement it
 * (s3rver answers 405) are tolerated.
 */
export function startS3Upload(p: S3WriteParams): WriteHandle {
  const ctrl = new AbortController();
  const counter = new ByteCounter();
  let partSize = p.partSize;
  if (p.size !== undefined && p.size > partSize * MAX_PARTS) partSize = Math.ceil(p.size / MAX_PARTS);

  const sending = new Proxy(p.client, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return (cmd: unknown, opts?: Record<string, unknown>) => {
        if (cmd instanceof AbortMultipartUploadCommand) {
          return target.send(cmd).catch((err: unknown) => {
            if (isTolerableAbortFailure(err)) return {};
            throw err;
          });
        }
        const signals = [ctrl.signal];
        if (p.partMaxTimeMs > 0 && cmd instanceof UploadPartCommand) signals.push(AbortSignal.timeout(p.partMaxTimeMs));
        const abortSignal = signals.length === 1 ? ctrl.signal : AbortSignal.any(signals);
        return target.send(cmd as never, { ...opts, abortSignal });
      };
    },
  });

  const body = new PassThrough({ highWaterMark: 1024 * 1024 });
  counter.pipe(body);
  counter.on('error', (err) => body.destroy(err));

  const upload = new Upload({
    client: sending,
    partSize,
    queueSize: p.concurrency,
    leavePartsOnError: false,
    params: { ...p.params, Bucket: p.bucket, Key: p.key, Body: body } as never,
  });

  let failure: FsError | undefined;
  const fail = (err: FsError) => {
    failure ??= err;
    if (!ctrl.signal.aborted) ctrl.abort(err);
    if (!counter.destroyed) counter.destroy(err);
    if (!body.destroyed) body.destroy(err);
  };
  // The writer destroying the stream (client disconnect) cancels the upload.
  counter.on('close', () => {
    if (!counter.writableFinished) fail(failure ?? FsError.aborted(p.path));
  });
  const onSignal = () => fail(FsError.aborted(p.path));
  if (p.signal?.aborted) queueMicrotask(onSignal);
  p.signal?.addEventListener('abort', onSignal, { once: true });

  const done: Promise<WriteResult> = upload
    .done()
    .then((out) => {
      // An abort that arrives after the upload completed changes nothing: the object is whole.
      const etag = (out as { ETag?: string }).ETag;
      return { size: counter.bytes, ...(etag ? { etag: etag.replace(/"/g, '') } : {}) };
    })
    .catch((err: unknown) => {
      const e = failure ?? mapS3Error(err, p.path, p.bucket);
      fail(e);
      throw e;
    })
    .finally(() => p.signal?.removeEventListener('abort', onSignal));
  done.catch(() => undefined); // callers that abort need not await `done`

  return {
    stream: counter,
    done,
    async abort(reason?: unknown) {
      fail(reason instanceof FsError ? reason : FsError.aborted(p.path));
      await done.then(
        () => undefined,
        () => undefined,
      );
    },
  };
}

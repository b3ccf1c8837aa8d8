import type { BlockBlobClient, BlockBlobUploadStreamOptions } from '@azure/storage-blob';
import { ByteCounter, FsError, type WriteHandle, type WriteResult } from '@ferry/core';
import { mapAzError } from './errors.js';

export interface AzWriteParams {
  blob: BlockBlobClient;
  container: string;
  /** Ferry path, for errors. */
  path: string;
  partSize: number;
  concurrency: number;
  options: BlockBlobUploadStreamOptions;
  signal?: AbortSignal;
}

/** A block blob holds at most 50,000 blocks. */
const MAX_BLOCKS = 50_000;

/**
 * A streamed block-blob upload (`uploadStream`): bytes written to `stream`
 * are staged as blocks of `partSize` (at most `concurrency` in memory) and
 * the blob appears only when the block list is committed, so an aborted or
 * failed write never leaves a partial blob (staged blocks expire unused).
 */
export function startAzUpload(p: AzWriteParams, size?: number): WriteHandle {
  const ctrl = new AbortController();
  const counter = new ByteCounter();
  let partSize = p.partSize;
  if (size !== undefined && size > partSize * MAX_BLOCKS) partSize = Math.ceil(size / MAX_BLOCKS);

  let failure: FsError | undefined;
  const fail = (err: FsError) => {
    failure ??= err;
    if (!ctrl.signal.aborted) ctrl.abort(err);
    if (!counter.destroyed) counter.destroy(err);
  };
  // The writer destroying the stream (client disconnect) cancels the upload.
  counter.on('close', () => {
    if (!counter.writableFinished) fail(failure ?? FsError.aborted(p.path));
  });
  const onSignal = () => fail(FsError.aborted(p.path));
  if (p.signal?.aborted) queueMicrotask(onSignal);
  p.signal?.addEventListener('abort', onSignal, { once: true });

  const done: Promise<WriteResult> = p.blob
    .uploadStream(counter, partSize, p.concurrency, { ...p.options, abortSignal: ctrl.signal })
    .then((out) => ({ size: counter.bytes, ...(out.etag ? { etag: out.etag.replace(/"/g, '') } : {}) }))
    .catch((err: unknown) => {
      const e = failure ?? mapAzError(err, p.path, p.container);
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

import { randomUUID } from 'node:crypto';
import type { BlockBlobClient, BlockBlobUploadStreamOptions } from '@azure/storage-blob';
import { startPartUpload, type WriteHandle } from '@ferry/core';
import { mapAzError } from './errors.js';

export interface AzWriteParams {
  blob: BlockBlobClient;
  container: string;
  /** Ferry path, for errors. */
  path: string;
  partSize: number;
  concurrency: number;
  /** The blob's headers, metadata, access tier and conditions (applied when it is stored). */
  options: Pick<BlockBlobUploadStreamOptions, 'blobHTTPHeaders' | 'metadata' | 'tier' | 'conditions'>;
  signal?: AbortSignal;
}

/** A block blob holds at most 50,000 blocks. */
const MAX_BLOCKS = 50_000;

/**
 * A streamed block-blob upload (core's startPartUpload): bytes written to
 * `stream` are copied into buffers of `partSize`, reused for the whole
 * upload, staged as blocks `concurrency` at a time while the next one fills;
 * the blob appears only when the block list is committed, so an aborted or
 * failed write never leaves a partial blob (staged blocks expire unused). A
 * blob that fits in one block is one Put Blob. The SDK's uploadStream kept
 * each received chunk in its queue until a block buffer was free, long
 * enough for V8 to promote them: a 256 MiB upload through Ferry raised its
 * resident memory by 41-42 MB.
 */
export function startAzUpload(p: AzWriteParams, size?: number): WriteHandle {
  let partSize = p.partSize;
  if (size !== undefined && size > partSize * MAX_BLOCKS) partSize = Math.ceil(size / MAX_BLOCKS);
  // block IDs: base64 of the same length for every block of a blob, unique to this upload
  const prefix = randomUUID();
  const blockId = (index: number) => Buffer.from(`${prefix}-${String(index).padStart(6, '0')}`).toString('base64');

  return startPartUpload({
    path: p.path,
    partSize,
    concurrency: p.concurrency,
    signal: p.signal,
    mapError: (err) => mapAzError(err, p.path, p.container),
    async sendPart(buf, len, index, _offset, signal) {
      await p.blob.stageBlock(blockId(index), buf.subarray(0, len), len, { abortSignal: signal });
    },
    async complete(last, len, parts, _offset, signal) {
      if (parts === 0) {
        const out = await p.blob.upload(last ? last.subarray(0, len) : Buffer.alloc(0), len, { ...p.options, abortSignal: signal });
        return out.etag ? { etag: out.etag.replace(/"/g, '') } : {};
      }
      if (last && len > 0) await p.blob.stageBlock(blockId(parts), last.subarray(0, len), len, { abortSignal: signal });
      const ids = Array.from({ length: last && len > 0 ? parts + 1 : parts }, (_, i) => blockId(i));
      const out = await p.blob.commitBlockList(ids, { ...p.options, abortSignal: signal });
      return out.etag ? { etag: out.etag.replace(/"/g, '') } : {};
    },
  });
}

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { FsError, FsErrorCode, startPartUpload, type WriteHandle } from '@ferry/core';
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
 * A streamed upload (core's startPartUpload): bytes written to `stream` are
 * copied into part buffers of `partSize` and sent as a multipart upload,
 * `concurrency` parts in flight while the next one fills; an object that
 * fits in one part is sent as one PutObject. One upload holds at most
 * `partSize × (concurrency + 1)` bytes. The object becomes visible only
 * when the upload completes, so an aborted or failed write never leaves a
 * partial object.
 *
 * Every request carries the upload's AbortSignal (UploadPart also the
 * per-part time limit), so abort() cancels requests in flight. The final
 * AbortMultipartUpload is sent without it; servers that do not implement it
 * (s3rver answers 405) are tolerated.
 */
export function startS3Upload(p: S3WriteParams): WriteHandle {
  let partSize = p.partSize;
  if (p.size !== undefined && p.size > partSize * MAX_PARTS) partSize = Math.ceil(p.size / MAX_PARTS);
  const base = { ...p.params, Bucket: p.bucket, Key: p.key };
  let uploadId: Promise<string> | undefined;
  const parts: CompletedPart[] = [];

  const createUpload = async (signal: AbortSignal): Promise<string> => {
    const out = await p.client.send(new CreateMultipartUploadCommand({ ...base, IfNoneMatch: undefined } as never), { abortSignal: signal });
    if (!out.UploadId) throw new Error('CreateMultipartUpload returned no UploadId');
    return out.UploadId;
  };

  /** Sends `buf[0, len)` as part `n` (1 first). */
  const uploadPart = async (buf: Buffer, len: number, n: number, signal: AbortSignal): Promise<void> => {
    if (n > MAX_PARTS) {
      throw new FsError(FsErrorCode.Invalid, `${p.path}: more than ${MAX_PARTS} parts of ${partSize} bytes: raise upload_part_size`, { path: p.path });
    }
    uploadId ??= createUpload(signal);
    const id = await uploadId;
    const partSignal = p.partMaxTimeMs > 0 ? AbortSignal.any([signal, AbortSignal.timeout(p.partMaxTimeMs)]) : signal;
    const out = await p.client.send(
      new UploadPartCommand({ ...base, IfNoneMatch: undefined, UploadId: id, PartNumber: n, Body: buf.subarray(0, len), ContentLength: len } as never),
      { abortSignal: partSignal },
    );
    if (!out.ETag) throw new Error(`UploadPart ${n} returned no ETag`);
    parts.push({ PartNumber: n, ETag: out.ETag });
  };

  const etagOf = (etag: string | undefined) => (etag ? { etag: etag.replace(/"/g, '') } : {});

  return startPartUpload({
    path: p.path,
    partSize,
    concurrency: p.concurrency,
    signal: p.signal,
    mapError: (err) => mapS3Error(err, p.path, p.bucket),
    sendPart: (buf, len, index, _offset, signal) => uploadPart(buf, len, index + 1, signal),
    async complete(last, len, count, _offset, signal) {
      if (count === 0) {
        // everything fits in one part: a single PutObject
        const body = last ? last.subarray(0, len) : Buffer.alloc(0);
        const out = await p.client.send(new PutObjectCommand({ ...base, Body: body, ContentLength: body.length } as never), { abortSignal: signal });
        return etagOf(out.ETag);
      }
      if (last && len > 0) await uploadPart(last, len, count + 1, signal);
      const id = await uploadId!;
      parts.sort((a, b) => a.PartNumber! - b.PartNumber!);
      const out = await p.client.send(new CompleteMultipartUploadCommand({ ...base, UploadId: id, MultipartUpload: { Parts: parts } } as never), {
        abortSignal: signal,
      });
      return etagOf(out.ETag);
    },
    async cancel() {
      const id = uploadId && (await uploadId.catch(() => undefined));
      // best effort: the failure reported is the one that stopped the upload (s3rver answers 405 here)
      if (id) await p.client.send(new AbortMultipartUploadCommand({ Bucket: p.bucket, Key: p.key, UploadId: id }));
    },
  });
}

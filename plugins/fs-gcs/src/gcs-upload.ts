import { pipeline } from 'node:stream';
import type { Bucket, CreateWriteStreamOptions, FileMetadata } from '@google-cloud/storage';
import { ByteCounter, FsError, handled, onAbort, type WriteHandle, type WriteOptions, type WriteResult } from '@ferry/core';
import { MTIME_META } from './constants.js';
import { mapGcsError } from './gcs-errors.js';
import { startGcsResumableUpload } from './gcs-resumable.js';

export interface GcsUploadParams {
  bucket: Bucket;
  key: string;
  /** Ferry path, for errors. */
  path: string;
  /** Bytes per resumable-upload request (a multiple of 256 KiB). */
  partSize: number;
  /** Time limit of one upload request, ms (0: none). */
  partMaxTimeMs: number;
  /** Attempts after a transient failure of one request of a resumable upload. */
  maxRetries: number;
  storageClass: string;
  acl: string;
  o: WriteOptions;
}

/**
 * A streamed upload: bytes written to `stream` go out as a resumable upload
 * in requests of `partSize` bytes from two reused buffers (gcs-resumable.ts),
 * or as a single request of the client when the announced size fits in one
 * part. The object is created only when the last request completes, so an
 * aborted or failed write leaves nothing; `overwrite: false` is enforced by
 * the server with ifGenerationMatch=0 (412 -> EXISTS).
 */
export function startGcsUpload(p: GcsUploadParams): WriteHandle {
  const { o } = p;
  const file = p.bucket.file(p.key);
  const metadata: FileMetadata = { contentType: o.contentType ?? 'application/octet-stream' };
  if (o.mtime) metadata.metadata = { [MTIME_META]: String(o.mtime.getTime()) };
  if (p.storageClass) metadata.storageClass = p.storageClass;
  if (p.partMaxTimeMs > 0) {
    // Interceptors become the request options of every request of the client for this upload.
    file.interceptors.push({
      request: (req) => Object.assign(req, { timeout: p.partMaxTimeMs }) as typeof req & { uri: string },
    });
  }
  if (o.size === undefined || o.size > p.partSize) {
    return startGcsResumableUpload({
      file,
      path: p.path,
      partSize: p.partSize,
      partMaxTimeMs: p.partMaxTimeMs,
      maxRetries: p.maxRetries,
      session: {
        metadata,
        ...(p.acl ? { predefinedAcl: p.acl as CreateWriteStreamOptions['predefinedAcl'] } : {}),
        ...(o.overwrite === false ? { preconditionOpts: { ifGenerationMatch: 0 } } : {}),
      },
      signal: o.signal,
    });
  }
  const options: CreateWriteStreamOptions = {
    resumable: false,
    metadata,
    validation: 'crc32c',
    ...(p.acl ? { predefinedAcl: p.acl as CreateWriteStreamOptions['predefinedAcl'] } : {}),
    ...(o.overwrite === false ? { preconditionOpts: { ifGenerationMatch: 0 } } : {}),
  };
  const counter = new ByteCounter();
  const upload = file.createWriteStream(options);
  let settled = false;

  const done = handled(
    new Promise<WriteResult>((resolve, reject) => {
      pipeline(counter, upload, (err) => {
        settled = true;
        if (err) return reject(mapGcsError(err, 'upload', p.path));
        const etag = (file.metadata as FileMetadata | undefined)?.etag;
        resolve({ size: counter.bytes, ...(etag ? { etag } : {}) });
      });
    }),
  );
  // The writer only sees `stream`; failures are reported through `done`.
  counter.on('error', () => undefined);
  upload.on('error', () => undefined);

  const abort = async (reason?: unknown): Promise<void> => {
    if (!settled) counter.destroy(reason instanceof FsError ? reason : FsError.aborted(p.path));
    await done.catch(() => undefined);
  };
  const unlisten = onAbort(o.signal, () => void abort(FsError.aborted(p.path)));
  done.then(unlisten, unlisten);
  return { stream: counter, done, abort };
}

import { PassThrough, Transform, pipeline, type Readable } from 'node:stream';
import type { FileMetadata } from '@google-cloud/storage';
import { FsError, onAbort } from '@ferry/core';
import { mapGcsError } from './gcs-errors.js';

// The bodies of media answers (object reads) as GcsFs hands them out: checked, sliced, or let go of.

/** A media answer: its status, headers, body, and the checks its bytes go through. */
export interface Media {
  status: number;
  headers: Record<string, unknown>;
  stream: Readable;
  transforms: Transform[];
}

/** The body of a media answer as the Fs hands it out: checked, sliced, errors mapped, an aborted signal ends it. */
export function bodyOf(src: Media, slice: Transform | undefined, p: string, signal: AbortSignal | undefined): Readable {
  const out = new PassThrough();
  const failed = (err: Error | null) => {
    if (err && !out.destroyed) out.destroy(mapGcsError(err, 'read', p));
  };
  const steps = slice ? [...src.transforms, slice] : src.transforms;
  pipeline([src.stream, ...steps, out], failed);
  out.once(
    'close',
    onAbort(signal, () => out.destroy(FsError.aborted(p))),
  );
  return out;
}

/**
 * Lets go of a media answer that is not used. A small body is read to its
 * end, so its connection can serve the next read; a larger one is cut
 * (closing its connection), as reading it all would cost more.
 */
export function drop(src: { headers: Record<string, unknown>; stream: Readable }): void {
  const length = Number(src.headers['content-length']);
  if (Number.isFinite(length) && length <= DRAIN_LIMIT) src.stream.resume();
  else src.stream.destroy();
}
const DRAIN_LIMIT = 1024 * 1024;

/**
 * True when a media answer's headers name the generation and metageneration
 * of `md` (Cloud Storage sends x-goog-metageneration, the emulator
 * x-goog-metadatageneration). A header missing proves nothing: false.
 */
export function sameVersion(headers: Record<string, unknown>, md: FileMetadata): boolean {
  const generation = headers['x-goog-generation'];
  const metageneration = headers['x-goog-metageneration'] ?? headers['x-goog-metadatageneration'];
  if (generation === undefined || metageneration === undefined || md.generation === undefined || md.metageneration === undefined) return false;
  return String(generation) === String(md.generation) && String(metageneration) === String(md.metageneration);
}

/** Bytes [start, end] of a whole object's body (the rest is read and dropped, never cut off). */
export function sliceOf(start: number, end: number | undefined): Transform {
  let at = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      const from = Math.max(start - at, 0);
      const to = end === undefined ? chunk.length : Math.min(end + 1 - at, chunk.length);
      at += chunk.length;
      cb(null, to > from ? chunk.subarray(from, to) : undefined);
    },
  });
}

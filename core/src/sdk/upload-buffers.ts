/**
 * Buffers a front-end reads an upload's bytes into, taken from the
 * process-wide pool of read buffers (vfs/read-buffers.ts, bounded in total)
 * and read into again once the storage has written them, so that a long
 * upload leaves no garbage per chunk: no collections to pace, no freed
 * chunks waiting in the allocator's heap.
 *
 * The front-end reads into `take()`'s buffer, and `lend()`s the chunk (a
 * view of that buffer) just before writing that very object into the
 * upload's stream. A storage writer that writes the chunk as it is (not
 * copied, not sliced, not encoded) calls {@link chunkStored} once its bytes
 * are in the file: the buffer is free again. A chunk that never comes back
 * (another backend, a throttle that cut it, a failed upload) is garbage as
 * any chunk is, and the pool stops counting it when the lease is closed.
 * Only the lent object itself is given back, never a view of it: a writer
 * that stored part of a chunk, or a stage holding a slice, cannot free
 * memory still in use.
 */
export interface UploadBuffers {
  /** A buffer to read the next bytes into. */
  take(): Buffer;
  /** `chunk`, a view of a buffer of take(), is about to be written to the upload's stream as it is. */
  lend(chunk: Buffer): void;
  /**
   * `chunk`, a view of a buffer of take() that was not lent, is no longer
   * needed (its bytes were copied elsewhere, or dropped): the buffer is read
   * into again. Nothing may hold a view of it any more.
   */
  giveBack(chunk: Buffer): void;
  /** The upload is over: free buffers go back to the pool, lent ones when (if) they come back. */
  close(): void;
}

export interface UploadBufferOptions {
  /**
   * False: every buffer has the pool's buffer size (256 KiB) however long
   * the upload. By default a long upload moves on to larger buffers while
   * few transfers run (fewer, larger reads); a front-end that fills one
   * buffer per message of its protocol, whatever its size, wants the small ones.
   */
  grow?: boolean;
  /**
   * Pooled buffers the lease may hold at once (by default those of one
   * download: core's READ_BUFFERS_PER_TRANSFER). Past them, and once the
   * pool's bound is reached, take() gives new buffers outside the pool.
   */
  buffers?: number;
}

/** What provides upload buffers: core's pool of read buffers installs itself here when it loads (the SDK depends on no engine of the core). */
export interface UploadBufferSource {
  lease(options?: UploadBufferOptions): UploadBuffers;
  stored(chunk: Buffer): void;
}

let source: UploadBufferSource | undefined;

/** Installs (or, with undefined, removes) what leaseUploadBuffers and chunkStored use; returns the one it replaces. */
export function setUploadBufferSource(s: UploadBufferSource | undefined): UploadBufferSource | undefined {
  const before = source;
  source = s;
  return before;
}

/** Size of the buffers when no pool is installed (a plugin's unit test without the core). */
const UNPOOLED_SIZE = 256 * 1024;

/** Buffers for one upload's reads (close() once the upload is over). */
export function leaseUploadBuffers(options?: UploadBufferOptions): UploadBuffers {
  return (
    source?.lease(options) ?? {
      take: () => Buffer.allocUnsafe(UNPOOLED_SIZE),
      lend: () => undefined,
      giveBack: () => undefined,
      close: () => undefined,
    }
  );
}

/** A storage writer has written `chunk` (as it received it) to its file: a lent chunk's buffer is read into again. */
export function chunkStored(chunk: Buffer): void {
  source?.stored(chunk);
}

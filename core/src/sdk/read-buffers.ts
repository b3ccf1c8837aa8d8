import type { Readable, Writable } from 'node:stream';
import type { ReadBuffers } from '../fs/fs.contract.js';

/**
 * Reusable read buffers for downloads (ReadOptions.buffers).
 *
 * A download read in fresh chunks leaves every chunk to the garbage
 * collector: with small chunks the per-chunk work (a thread-pool read, an
 * allocation, the stream machinery) caps the speed; with large ones the dead
 * chunks pile up between collections and the resident memory grows by tens
 * of megabytes per transfer. Here a download reads into a few buffers of its
 * own, lent by a process-wide pool whose total is bounded, and each buffer is
 * read into again once the socket has taken its bytes (the write callback of
 * {@link writeRecycling}). A download that finds the pool used up reads into
 * new buffers, as before: nothing waits for another transfer's buffers.
 */

/** Bytes per pooled read buffer. */
export const READ_BUFFER_SIZE = 256 * 1024;
/** Buffers one download may hold: read ahead, in the stream stages, in the socket. */
export const READ_BUFFERS_PER_TRANSFER = 6;
/** Bound on the memory of the pool: buffers lent plus buffers kept free (32 MiB: 21 downloads at full speed). */
export const READ_POOL_MAX_BYTES = 32 * 1024 * 1024;
/** Free buffers are given back to the allocator after this long without a download asking for one. */
const IDLE_TRIM_MS = 30_000;

export interface ReadBufferPoolStats {
  /** Bytes of the buffers that exist (lent or free). */
  bytes: number;
  /** Bytes of the free buffers. */
  freeBytes: number;
  /** Buffers read into again after a consumer gave them back. */
  reused: number;
  /** Buffers a lease had to allocate outside the pool (pool used up). */
  unpooled: number;
}

/** The process-wide bounded set of read buffers; leases hand them to one download each. */
export class ReadBufferPool {
  private readonly free: Buffer[] = [];
  /** Buffers that exist (lent or free). */
  private count = 0;
  private trimTimer?: NodeJS.Timeout;
  readonly stats = { reused: 0, unpooled: 0 };

  constructor(
    readonly bufferSize = READ_BUFFER_SIZE,
    readonly maxBytes = READ_POOL_MAX_BYTES,
    readonly perTransfer = READ_BUFFERS_PER_TRANSFER,
  ) {}

  /** Buffers for one download (closed by the caller once the download is over). */
  lease(): ReadBufferLease {
    return new ReadBufferLease(this);
  }

  snapshot(): ReadBufferPoolStats {
    return {
      bytes: this.count * this.bufferSize,
      freeBytes: this.free.length * this.bufferSize,
      reused: this.stats.reused,
      unpooled: this.stats.unpooled,
    };
  }

  /** A pooled buffer, or undefined when the bound is reached. */
  acquire(): Buffer | undefined {
    const b = this.free.pop();
    if (b) return b;
    if ((this.count + 1) * this.bufferSize > this.maxBytes) return undefined;
    this.count++;
    return Buffer.allocUnsafeSlow(this.bufferSize);
  }

  /** Takes back a buffer of acquire(). */
  release(b: Buffer): void {
    this.free.push(b);
    this.scheduleTrim();
  }

  /** A buffer of acquire() that may never come back (its lease closed while a consumer held it): no longer counted. */
  forget(): void {
    this.count--;
  }

  /** A forgotten buffer given back after all: kept if the bound allows. */
  adopt(b: Buffer): void {
    if ((this.count + 1) * this.bufferSize > this.maxBytes) return;
    this.count++;
    this.release(b);
  }

  private scheduleTrim(): void {
    if (this.trimTimer) this.trimTimer.refresh();
    else {
      this.trimTimer = setTimeout(() => {
        this.trimTimer = undefined;
        this.count -= this.free.length;
        this.free.length = 0;
      }, IDLE_TRIM_MS);
      this.trimTimer.unref();
    }
  }
}

/**
 * The buffers of one download. `take()` gives a buffer to read into: one of
 * the lease's free buffers, a new one from the pool while the lease holds
 * fewer than `perTransfer`, else (once a consumer gives chunks back, see
 * {@link ReadBufferLease.recycling}) the next one given back, else a new
 * buffer outside the pool. `give(chunk)` takes back a chunk (a view of a
 * taken buffer) once its bytes are no longer needed.
 */
export class ReadBufferLease implements ReadBuffers {
  readonly size: number;
  /** Pooled buffers of this lease by their memory. */
  private readonly owned = new Map<ArrayBufferLike, Buffer>();
  private readonly free: Buffer[] = [];
  private waiting?: (b: Buffer) => void;
  private closed = false;
  /**
   * True once a consumer gives every chunk back (writeRecycling): `take()`
   * then waits for a buffer of this lease rather than allocating.
   */
  recycling = false;

  constructor(private readonly pool: ReadBufferPool) {
    this.size = pool.bufferSize;
  }

  take(): Buffer | Promise<Buffer> {
    const b = this.free.pop();
    if (b) {
      this.pool.stats.reused++;
      return b;
    }
    if (!this.closed && this.owned.size < this.pool.perTransfer) {
      const fresh = this.pool.acquire();
      if (fresh) {
        this.owned.set(fresh.buffer, fresh);
        return fresh;
      }
    }
    if (this.recycling && !this.closed && this.owned.size > 0 && !this.waiting) {
      return new Promise<Buffer>((resolve) => (this.waiting = resolve));
    }
    this.pool.stats.unpooled++;
    return Buffer.allocUnsafeSlow(this.size);
  }

  /** Takes back a chunk read into a buffer of take() (other chunks are ignored). */
  give(chunk: Buffer): void {
    const b = this.owned.get(chunk.buffer);
    if (!b) return;
    if (this.closed) {
      this.owned.delete(chunk.buffer);
      this.pool.adopt(b);
      return;
    }
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      this.pool.stats.reused++;
      w(b);
    } else this.free.push(b);
  }

  /**
   * The download is over: free buffers go back to the pool now, those still
   * in a consumer's hands when (if) it gives them back.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const b of this.free) {
      this.owned.delete(b.buffer);
      this.pool.release(b);
    }
    this.free.length = 0;
    // the others are in a consumer's hands, or were dropped with a stream's buffered chunks:
    // counted again only if they come back
    for (let i = 0; i < this.owned.size; i++) this.pool.forget();
    const w = this.waiting;
    this.waiting = undefined;
    if (w) w(Buffer.allocUnsafeSlow(this.size));
  }
}

/** The pool of the process. */
export const readBufferPool = new ReadBufferPool();

/**
 * Writes `source` to `dest` as pipe() does (backpressure, end), giving each
 * chunk back to `lease` once `dest` has written it (the write callback: the
 * socket no longer holds it). An error of the source destroys `dest`; `dest`
 * closing first destroys the source.
 */
export function writeRecycling(source: Readable, dest: Writable, lease: ReadBufferLease): void {
  lease.recycling = true;
  const onData = (chunk: Buffer) => {
    if (!dest.write(chunk, () => lease.give(chunk))) source.pause();
  };
  const onDrain = () => source.resume();
  const onEnd = () => dest.end();
  const onError = (err: Error) => dest.destroy(err);
  // destroyed without an error (the transfer was stopped): the response must not look complete
  const onSourceClose = () => {
    if (!source.readableEnded && !dest.destroyed) dest.destroy();
  };
  const onClose = () => {
    source.off('data', onData);
    dest.off('drain', onDrain);
    if (!source.destroyed) source.destroy();
  };
  source.on('data', onData);
  source.once('end', onEnd);
  source.once('error', onError);
  source.once('close', onSourceClose);
  dest.on('drain', onDrain);
  dest.once('close', onClose);
  source.resume();
}

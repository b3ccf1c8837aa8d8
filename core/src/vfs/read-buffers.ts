import type { Readable, Writable } from 'node:stream';
import type { ReadBuffers } from '../fs/fs.contract.js';
import { setUploadBufferSource, type UploadBufferOptions } from '../sdk/upload-buffers.js';

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

/** Bytes per pooled read buffer while a download starts (and for every download once many run at once). */
export const READ_BUFFER_SIZE = 256 * 1024;
/** Buffers one download may hold: read ahead, in the stream stages, in the socket. */
export const READ_BUFFERS_PER_TRANSFER = 6;
/** Bound on the memory of the pool: buffers lent plus buffers kept free (32 MiB: 21 downloads at full speed). */
export const READ_POOL_MAX_BYTES = 32 * 1024 * 1024;
/**
 * A long sequential download moves on to larger buffers: each read and each
 * socket write is one hand-over between the event loop, a thread-pool thread
 * and the kernel, whose wake-ups (not the copying) set the speed on an idle
 * machine, so 1 MiB reads move a file about twice as fast as 256 KiB ones.
 * Only while few downloads run (`size * perTransfer` per download fits half
 * the pool for all of them): with many, every download keeps small buffers and
 * the memory stays that of the pool.
 */
export const READ_BUFFER_GROWTH: ReadBufferGrowth = { size: 1024 * 1024, perTransfer: 5, after: 2 * 1024 * 1024 };
/** Free buffers are given back to the allocator after this long without a download asking for one. */
const IDLE_TRIM_MS = 30_000;

/** Larger buffers for a long download (ReadBufferPool). */
export interface ReadBufferGrowth {
  /** Bytes per buffer once grown. */
  size: number;
  /** Buffers of that size one download may hold. */
  perTransfer: number;
  /** Bytes a download reads in small buffers before it may grow. */
  after: number;
}

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
  /** Free buffers by their size. */
  private readonly free = new Map<number, Buffer[]>();
  /** Bytes of the buffers that exist (lent or free). */
  private bytes = 0;
  private freeBytes = 0;
  /** Leases not closed yet. */
  private leases = 0;
  private trimTimer?: NodeJS.Timeout;
  readonly stats = { reused: 0, unpooled: 0 };

  constructor(
    readonly bufferSize = READ_BUFFER_SIZE,
    readonly maxBytes = READ_POOL_MAX_BYTES,
    readonly perTransfer = READ_BUFFERS_PER_TRANSFER,
    /** Larger buffers for long downloads while few run (none when undefined). */
    readonly growth?: ReadBufferGrowth,
  ) {}

  /** Buffers for one download (closed by the caller once the download is over); `grow: false` keeps them at the pool's buffer size. */
  lease(options: UploadBufferOptions = {}): ReadBufferLease {
    this.leases++;
    return new ReadBufferLease(this, options.grow ?? true, options.buffers ?? this.perTransfer);
  }

  /** A lease was closed. */
  leaseClosed(): void {
    this.leases--;
  }

  /** True when every open lease could hold its grown buffers within half the bound (the rest for small ones). */
  mayGrow(): boolean {
    const g = this.growth;
    return g !== undefined && this.leases * g.size * g.perTransfer <= this.maxBytes / 2;
  }

  snapshot(): ReadBufferPoolStats {
    return { bytes: this.bytes, freeBytes: this.freeBytes, reused: this.stats.reused, unpooled: this.stats.unpooled };
  }

  /**
   * A pooled buffer of `size` bytes; at the bound, a free buffer of the other
   * size (pooled memory is never dropped to make room: dropped buffers would
   * be garbage on top of the pool until collected); undefined when none is free.
   */
  acquire(size = this.bufferSize): Buffer | undefined {
    const b = this.free.get(size)?.pop();
    if (b) {
      this.freeBytes -= size;
      return b;
    }
    if (this.bytes + size <= this.maxBytes) {
      this.bytes += size;
      return Buffer.allocUnsafeSlow(size);
    }
    for (const [other, list] of this.free) {
      const o = list.pop();
      if (o) {
        this.freeBytes -= other;
        return o;
      }
    }
    return undefined;
  }

  /** Takes back a buffer of acquire(). */
  release(b: Buffer): void {
    let list = this.free.get(b.length);
    if (!list) this.free.set(b.length, (list = []));
    list.push(b);
    this.freeBytes += b.length;
    this.scheduleTrim();
  }

  /** A buffer of acquire() that may never come back (its lease closed while a consumer held it): no longer counted. */
  forget(b: Buffer): void {
    this.bytes -= b.length;
  }

  /** A forgotten buffer given back after all: kept if the bound allows. */
  adopt(b: Buffer): void {
    if (this.bytes + b.length > this.maxBytes) return;
    this.bytes += b.length;
    this.release(b);
  }

  private scheduleTrim(): void {
    if (this.trimTimer) this.trimTimer.refresh();
    else {
      this.trimTimer = setTimeout(() => {
        this.trimTimer = undefined;
        this.bytes -= this.freeBytes;
        this.freeBytes = 0;
        this.free.clear();
      }, IDLE_TRIM_MS);
      this.trimTimer.unref();
    }
  }
}

/**
 * The buffers of one download. `take()` gives a buffer to read into (of
 * `size` bytes: the pool's buffer size, the grown size once the download is
 * long and few run): one of the lease's free buffers, a new one from the
 * pool while the lease holds fewer than its share, else (once a consumer
 * gives chunks back, see {@link ReadBufferLease.recycling}) the next one
 * given back, else a new buffer outside the pool (of the small size).
 * `give(chunk)` takes back a chunk (a view of a taken buffer) once its bytes
 * are no longer needed.
 */
export class ReadBufferLease implements ReadBuffers {
  /** Pooled buffers of this lease by their memory. */
  private readonly owned = new Map<ArrayBufferLike, Buffer>();
  /** Free buffers of the current size. */
  private readonly free: Buffer[] = [];
  private waiting?: (b: Buffer) => void;
  private closed = false;
  /** Bytes handed out by take(). */
  private taken = 0;
  /** Owned buffers taken for the current size (others go back to the pool when given back). */
  private readonly current = new Set<ArrayBufferLike>();
  /** Bytes of `current`. */
  private currentBytes = 0;
  /** Size of the buffers take() gives now. */
  size: number;
  /**
   * True once a consumer gives every chunk back (writeRecycling): `take()`
   * then waits for a buffer of this lease rather than allocating.
   */
  recycling = false;

  constructor(
    private readonly pool: ReadBufferPool,
    /** False: buffers stay of the pool's size however long the transfer (READ_BUFFER_GROWTH does not apply). */
    private readonly grows = true,
    /** Pooled buffers of the pool's size the lease may hold (the pool's perTransfer unless asked otherwise). */
    private readonly buffers = pool.perTransfer,
  ) {
    this.size = pool.bufferSize;
  }

  take(): Buffer | Promise<Buffer> {
    this.resize();
    let b = this.free.pop();
    if (b) this.pool.stats.reused++;
    else b = this.fresh();
    if (b) {
      this.taken += b.length;
      return b;
    }
    if (this.recycling && !this.closed && this.current.size > 0 && !this.waiting) {
      return new Promise<Buffer>((resolve) => (this.waiting = resolve)).then((w) => {
        this.taken += w.length;
        return w;
      });
    }
    this.pool.stats.unpooled++;
    this.taken += this.pool.bufferSize;
    return Buffer.allocUnsafeSlow(this.pool.bufferSize);
  }

  /** A new pooled buffer while the lease holds fewer than its share. */
  private fresh(): Buffer | undefined {
    // the share in bytes: a free buffer of the other size lent at the bound counts for what it holds
    const share = this.size === this.pool.bufferSize ? this.buffers * this.size : this.pool.growth!.perTransfer * this.size;
    if (this.closed || this.currentBytes >= share) return undefined;
    const b = this.pool.acquire(this.size);
    if (!b) return undefined;
    this.owned.set(b.buffer, b);
    this.current.add(b.buffer);
    this.currentBytes += b.length;
    return b;
  }

  /** Grows (a long download while few run) or shrinks back (many run): buffers of the former size go back to the pool. */
  private resize(): void {
    const g = this.pool.growth;
    if (!g || !this.grows || g.size === this.pool.bufferSize) return;
    const want = this.taken >= g.after && this.pool.mayGrow() ? g.size : this.pool.bufferSize;
    if (want === this.size) return;
    this.size = want;
    for (const b of this.free) this.returnToPool(b);
    this.free.length = 0;
    this.current.clear();
    this.currentBytes = 0;
  }

  private returnToPool(b: Buffer): void {
    this.owned.delete(b.buffer);
    if (this.current.delete(b.buffer)) this.currentBytes -= b.length;
    this.pool.release(b);
  }

  /** True when `chunk` is a view of one of this lease's buffers. */
  owns(chunk: Buffer): boolean {
    return this.owned.has(chunk.buffer);
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
    if (!this.current.has(b.buffer)) {
      // taken for the size this lease no longer reads with
      this.returnToPool(b);
      return;
    }
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      this.pool.stats.reused++;
      w(b);
    } else if (!this.free.includes(b)) this.free.push(b);
  }

  /**
   * The download is over: free buffers go back to the pool now, those still
   * in a consumer's hands when (if) it gives them back.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pool.leaseClosed();
    for (const b of this.free) this.returnToPool(b);
    this.free.length = 0;
    // the others are in a consumer's hands, or were dropped with a stream's buffered chunks:
    // counted again only if they come back
    for (const b of this.owned.values()) this.pool.forget(b);
    const w = this.waiting;
    this.waiting = undefined;
    if (w) w(Buffer.allocUnsafeSlow(this.pool.bufferSize));
  }
}

/** The pool of the process. */
export const readBufferPool = new ReadBufferPool(READ_BUFFER_SIZE, READ_POOL_MAX_BYTES, READ_BUFFERS_PER_TRANSFER, READ_BUFFER_GROWTH);

/** Chunks lent to storage writers by uploads (the SDK's leaseUploadBuffers), and the lease each goes back to. */
const lentToWriters = new WeakMap<Buffer, ReadBufferLease>();
/** The memory of those chunks (giveBack() leaves it alone until the writer stored the chunk). */
const lentMemory = new WeakSet<ArrayBufferLike>();

/** True when `chunk` is a pooled buffer lent to a storage writer (no garbage once written: it is read into again). */
export function isLentToWriter(chunk: Buffer): boolean {
  return lentToWriters.has(chunk);
}

// uploads read into the same pool (sdk/upload-buffers.ts): only the lent chunk itself comes back, never a view of it
setUploadBufferSource({
  lease(options) {
    const lease = readBufferPool.lease(options);
    return {
      // (a lease that is not recycling never waits: a buffer of its own, of the pool, or a new one)
      take: () => lease.take() as Buffer,
      lend(chunk: Buffer) {
        if (!lease.owns(chunk)) return;
        lentToWriters.set(chunk, lease);
        lentMemory.add(chunk.buffer);
      },
      giveBack(chunk: Buffer) {
        // a buffer lent to a writer comes back when the writer stored it, not before
        if (!lentMemory.has(chunk.buffer)) lease.give(chunk);
      },
      close: () => lease.close(),
    };
  },
  stored(chunk: Buffer) {
    const lease = lentToWriters.get(chunk);
    if (!lease) return;
    lentToWriters.delete(chunk);
    lentMemory.delete(chunk.buffer);
    lease.give(chunk);
  },
});

/**
 * Writes `source` to `dest` as pipe() does (backpressure, end), giving each
 * chunk back to `lease` once `dest` has written it (the write callback: the
 * socket no longer holds it). Backpressure counts the bytes written and not
 * yet called back rather than waiting for `drain` after each chunk: up to two
 * chunks of the lease's size are queued on the socket, so the next one is
 * there when the kernel takes more, without a trip through the event loop.
 * An error of the source destroys `dest`; `dest` closing first destroys the
 * source.
 */
export function writeRecycling(source: Readable, dest: Writable, lease: ReadBufferLease): void {
  lease.recycling = true;
  let queued = 0;
  let paused = false;
  const onData = (chunk: Buffer) => {
    queued += chunk.length;
    dest.write(chunk, () => {
      queued -= chunk.length;
      lease.give(chunk);
      if (paused && queued < 2 * lease.size) {
        paused = false;
        source.resume();
      }
    });
    if (queued >= 2 * lease.size) {
      paused = true;
      source.pause();
    }
  };
  const onEnd = () => dest.end();
  const onError = (err: Error) => dest.destroy(err);
  // destroyed without an error (the transfer was stopped): the response must not look complete
  const onSourceClose = () => {
    if (!source.readableEnded && !dest.destroyed) dest.destroy();
  };
  const onClose = () => {
    source.off('data', onData);
    if (!source.destroyed) source.destroy();
  };
  source.on('data', onData);
  source.once('end', onEnd);
  source.once('error', onError);
  source.once('close', onSourceClose);
  dest.once('close', onClose);
  source.resume();
}

import { getHeapStatistics } from 'node:v8';
import { setShortLivedSink } from '../sdk/short-lived.js';

/**
 * Young-generation collections paced by the bytes transfers move through
 * buffers of their own.
 *
 * Every chunk a transfer gets from a socket is a new ArrayBuffer outside the
 * JavaScript heap: node's HTTP parser copies each body chunk out of its read
 * buffer, for a request received (an upload) as for a response read from a
 * storage backend (a download). V8 frees the dead ones when it collects the
 * young generation, which it does once the JavaScript objects fill the
 * semi-space (8 MiB with core/bin/ferry's --max-semi-space-size=8) or once
 * 32 MiB of young ArrayBuffers exist (twice V8's default semi-space size,
 * whatever the flags). A transfer creates little JavaScript per 64 KiB
 * chunk, so the second comes first: one transfer keeps up to 32 MiB of dead
 * chunks, plus those the collector is still sweeping, a fifth of the
 * resident memory of a server that starts at about 110 MB.
 *
 * Transfers tell the pacer the bytes of those buffers as they pass them on
 * ({@link noteShortLived}); once {@link GC_PACE_BYTES} accumulate, a young
 * collection runs there and then. Not later (setImmediate): libuv hands
 * over every read that is ready before it runs immediates, tens of MB when
 * a fast backend sends to a slow client. A young collection with a small
 * semi-space costs about a millisecond, 64 per 256 MiB; at most one runs per
 * {@link GC_PACE_MIN_INTERVAL_MS}, so a transfer at hundreds of MB/s (a
 * local disk) pays 50 a second at most and keeps a few more MB of dead
 * chunks (one every 4 MiB, every 6 ms, cost local uploads up to a third of
 * their speed). It needs V8's gc() (node's --expose-gc, which core/bin/ferry
 * gives): without it nothing is counted and V8 keeps its own schedule.
 *
 * The old generation is watched too. Objects that live across two young
 * collections are promoted: with one every 4 MiB, that is everything a
 * request to a storage backend holds while it sends one part (an S3
 * UploadPart keeps about 70 KB of SDK middleware, signing and socket state
 * for the 50-100 ms a 5 MiB part takes). V8 collects the old generation
 * only once it has grown by its dynamic factor, up to four times what the
 * last full collection kept: a 4 GiB S3 upload took it from 30 to 63 MB,
 * 15 MB over the memory budget (docs/remote-storage.md). So every
 * {@link HEAP_CHECK_EVERY} paced collections the pacer reads the heap's
 * used size (the young generation is empty then) and, once it has grown
 * {@link HEAP_GROWTH_BYTES} (or an eighth, for a larger heap) past what the
 * last full collection kept, runs a full collection. Only that growth
 * starts one: a transfer that promotes nothing pays one read of V8's heap
 * statistics per 64 MiB. Node's --heap-growing-percent bounds the growth
 * too, but for every collection V8 starts, and it tripled the CPU of S3
 * downloads.
 *
 * The size watched is the heap's used size plus the bytes of its
 * ArrayBuffers: a buffer that lives across two young collections
 * is promoted too, and its bytes, outside the heap, wait for the next full
 * collection. A transfer that holds its chunks for a while does that with
 * most of them: the SFTP service gathers up to 4 MiB of WRITEs before the
 * storage takes them, and 256 MiB uploads kept 10-35 MB of dead chunks in
 * the old generation until the end; with them counted, 4-18 MB (peaks of
 * 162-169 MB before, 144-156 MB after, on a loaded machine:
 * bench/sftp-service.bench.mjs).
 */

/** Bytes of short-lived buffers after which a young collection runs. */
export const GC_PACE_BYTES = 4 * 1024 * 1024;

/** Least time between two paced collections. */
export const GC_PACE_MIN_INTERVAL_MS = 20;

/** Paced young collections between two reads of the heap's used size. */
export const HEAP_CHECK_EVERY = 16;

/** Growth of the heap past the last full collection's live size that starts one. */
export const HEAP_GROWTH_BYTES = 4 * 1024 * 1024;

/** Entries of one operation (a listing, a removed tree, a zip) from which it counts as bulk work (see {@link GcPacer.settle}). */
export const BULK_ENTRIES = 10_000;

/** Idle time of the event loop after bulk work before the full collection that gives its memory back. */
export const SETTLE_DELAY_MS = 500;

/** Share of {@link SETTLE_DELAY_MS} the event loop may be busy and still count as idle. */
export const SETTLE_BUSY_MAX = 0.1;

/** Waits for an idle event loop after bulk work before leaving its collection to V8. */
export const SETTLE_TRIES = 20;

/**
 * V8's gc extension (node's --expose-gc): a young collection with
 * `{ type: 'minor' }`, a full one without options. (Node 20's V8 takes
 * `{ type: 'major' }` but collects nothing with it.)
 */
export type Gc = (options?: { type: 'minor' }) => void;

/** How the pacer watches the heap between full collections. */
export interface HeapWatch {
  /** Bytes of the JavaScript heap in use. */
  used: () => number;
  /** Paced young collections between two reads of {@link used}. */
  checkEvery?: number;
  /** Growth past the last full collection's live size that starts one. */
  growthBytes?: number;
}

export class GcPacer {
  private pending = 0;
  private last = -Infinity;
  /** Young collections run so far. */
  runs = 0;
  /** Full collections run so far. */
  majorRuns = 0;
  /** The heap's used size after the last full collection (V8's or ours). */
  private live: number | undefined;
  /** The full collection that follows bulk work, while it waits. */
  private settling: NodeJS.Timeout | undefined;

  constructor(
    private readonly gc: Gc | undefined,
    readonly paceBytes = GC_PACE_BYTES,
    readonly minIntervalMs = GC_PACE_MIN_INTERVAL_MS,
    private readonly now: () => number = () => performance.now(),
    private readonly heap?: HeapWatch,
    readonly settleDelayMs = SETTLE_DELAY_MS,
    /** Starts a measure of the event loop's use: the function it answers tells the share busy since (0-1). */
    private readonly loopBusy: () => () => number = loopUtilization,
  ) {}

  /** False when V8's gc() is not exposed: note() does nothing. */
  get active(): boolean {
    return this.gc !== undefined;
  }

  /** `bytes` of new buffers that are garbage once passed on (a chunk in transit). */
  note(bytes: number): void {
    if (!this.gc) return;
    this.pending += bytes;
    if (this.pending < this.paceBytes) return;
    const now = this.now();
    if (now - this.last < this.minIntervalMs) return;
    this.last = now;
    this.pending = 0;
    this.runs++;
    this.gc({ type: 'minor' });
    if (this.heap && this.runs % (this.heap.checkEvery ?? HEAP_CHECK_EVERY) === 0) this.checkHeap(this.heap, this.gc);
  }

  /**
   * Bulk work just ended (an operation of `entries` entries: a listing, a
   * removed tree, a zip): from {@link BULK_ENTRIES} on, a full collection
   * follows once the event loop has been idle for {@link settleDelayMs}
   * (busy at most {@link SETTLE_BUSY_MAX} of it; while it is busier the wait
   * starts again, up to {@link SETTLE_TRIES} times, then V8 is left to it).
   * What the work left (pages of entries, their JSON, a young generation
   * grown to its largest) is otherwise kept until V8 collects on its own,
   * 17-36 MB after a listing of 100,000 entries: the server's resident
   * memory stays there, and the next bulk work starts from it. Only when
   * idle: collecting at once (200 ms after each) made back-to-back zips a
   * fifth slower, the collection landing in the next one.
   */
  settle(entries: number): void {
    if (!this.gc || entries < BULK_ENTRIES || this.settling) return;
    const gc = this.gc;
    let tries = 0;
    const wait = () => {
      const busy = this.loopBusy();
      this.settling = setTimeout(() => {
        if (busy() > SETTLE_BUSY_MAX) {
          if (++tries < SETTLE_TRIES) return wait();
          this.settling = undefined;
          return;
        }
        this.settling = undefined;
        this.majorRuns++;
        gc();
        if (this.heap) this.live = this.heap.used();
      }, this.settleDelayMs);
      this.settling.unref();
    };
    wait();
  }

  private checkHeap(heap: HeapWatch, gc: Gc): void {
    const used = heap.used();
    // The first reading, or V8 collected the old generation itself since.
    if (this.live === undefined || used < this.live) {
      this.live = used;
      return;
    }
    if (used - this.live < Math.max(heap.growthBytes ?? HEAP_GROWTH_BYTES, this.live / 8)) return;
    this.majorRuns++;
    gc();
    this.live = heap.used();
  }
}

/** The pacer of the process: active when node runs with --expose-gc. */
export const gcPacer = new GcPacer(
  typeof globalThis.gc === 'function' ? (globalThis.gc as Gc) : undefined,
  GC_PACE_BYTES,
  GC_PACE_MIN_INTERVAL_MS,
  () => performance.now(),
  { used: heapAndExternalBytes },
);

/**
 * The JavaScript heap's used size plus the bytes its ArrayBuffers hold.
 * (Node's count of the buffers, exact once a young collection has run: V8's
 * `external_memory` statistic lags behind the frees. After a full
 * collection both lag by a few ms while the buffers are swept: the reading
 * then is high, the next one lower, which {@link GcPacer} takes as the live
 * size.)
 */
export function heapAndExternalBytes(): number {
  return getHeapStatistics().used_heap_size + process.memoryUsage().arrayBuffers;
}

/** The event loop's utilization from now on (node's performance.eventLoopUtilization). */
export function loopUtilization(): () => number {
  const start = performance.eventLoopUtilization();
  return () => performance.eventLoopUtilization(start).utilization;
}

/** An operation of `entries` entries ended (see {@link GcPacer.settle}). */
export function settleAfterBulkWork(entries: number): void {
  gcPacer.settle(entries);
}

/** Counts `bytes` of a fresh buffer a transfer is passing on (see {@link GcPacer}). */
export function noteShortLived(bytes: number): void {
  gcPacer.note(bytes);
}

// The SDK's helpers (PartBuffers) report through sdk/short-lived.ts: to this pacer once it is loaded.
setShortLivedSink(noteShortLived);

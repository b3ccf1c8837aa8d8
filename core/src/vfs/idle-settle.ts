import { loadHeapTrim } from '@ferry/heap-trim';
import { SETTLE_BUSY_MAX, loopUtilization, type Gc } from './gc-pacer.js';

/**
 * The server's memory given back when it is idle after growing.
 *
 * What a transfer frees, it frees late and in the middle of memory: its
 * chunks are Buffers of the C allocator, freed once the garbage collector
 * finds them dead, and glibc hands pages back to the system only from the
 * top of its heaps. After a 1 GiB SFTP upload the server stayed 20-35 MB
 * above where it started (bench/sftp-service.bench.mjs, 152 MB against
 * 120), and the next transfer's peak started from there.
 *
 * Every {@link SETTLE_CHECK_MS} the settler looks at the resident memory.
 * Once it has grown {@link SETTLE_GROWTH_BYTES} past what the last settle
 * left, and the event loop was idle over the last check (busy at most
 * SETTLE_BUSY_MAX of it), it runs a full collection (V8's gc(), node's
 * --expose-gc, which core/bin/ferry gives: the dead Buffers are freed) and
 * glibc's malloc_trim {@link TRIM_DELAY_MS} later (@ferry/heap-trim: the free
 * pages go back). At most one
 * settle per {@link SETTLE_MIN_GAP_MS}, so a server busy in bursts pays a
 * collection every few seconds at most; the first idle check after the
 * start settles what starting left. Measured on the development machine: 30-70 ms,
 * 152 -> 120 MB and 154 -> 135 MB after uploads (docs/performance-history.md).
 *
 * One per process: `ferry serve` starts it (core/src/cli.ts); apps made in
 * tests do not.
 */

/** Time between two looks at the resident memory. */
export const SETTLE_CHECK_MS = 1000;

/** Growth of the resident memory past the last settle that an idle moment settles. */
export const SETTLE_GROWTH_BYTES = 8 * 1024 * 1024;

/** Least time between two settles. */
export const SETTLE_MIN_GAP_MS = 5000;

/** Time between the collection and the trim (the freed Buffers' memory released). */
export const TRIM_DELAY_MS = 100;

export interface IdleSettlerOptions {
  /** V8's gc() (a full collection); without it only the trim runs. */
  gc?: Gc;
  /** Gives the C allocator's free pages back (null: none on this machine). */
  trim: (() => boolean) | null;
  /** The resident memory, in bytes. */
  rss: () => number;
  /** Starts a measure of the event loop's use: the function it answers tells the share busy since (0-1). */
  loopBusy?: () => () => number;
  now?: () => number;
  checkMs?: number;
  growthBytes?: number;
  minGapMs?: number;
  trimDelayMs?: number;
}

export class IdleSettler {
  private timer: NodeJS.Timeout | undefined;
  private busy: (() => number) | undefined;
  /** The resident memory the last settle left (0 before the first: the first idle check settles). */
  private settled = 0;
  private last = -Infinity;
  /** Settles run so far. */
  settles = 0;
  /** Resolves once the last settle's trim ran. */
  done: Promise<void> = Promise.resolve();

  constructor(private readonly o: IdleSettlerOptions) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer || (!this.o.gc && !this.o.trim)) return;
    this.busy = (this.o.loopBusy ?? loopUtilization)();
    this.timer = setInterval(() => this.check(), this.o.checkMs ?? SETTLE_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look (what the timer runs): settles when idle and grown. */
  check(): boolean {
    const busy = this.busy?.() ?? 0;
    this.busy = (this.o.loopBusy ?? loopUtilization)();
    if (busy > SETTLE_BUSY_MAX) return false;
    const rss = this.o.rss();
    // memory given back some other way (V8, glibc's own trim at the top of the heap): the new floor
    if (rss < this.settled) this.settled = rss;
    if (rss < this.settled + (this.o.growthBytes ?? SETTLE_GROWTH_BYTES)) return false;
    const now = (this.o.now ?? (() => performance.now()))();
    if (now - this.last < (this.o.minGapMs ?? SETTLE_MIN_GAP_MS)) return false;
    this.last = now;
    this.settles++;
    this.o.gc?.();
    // the trim once the collection's dead Buffers were freed (node frees their memory on a background
    // thread, after the collection): trimmed at once, a heap of 125 MB of freed buffers gave back 28 MB
    this.done = new Promise<void>((resolve) =>
      setTimeout(
        () => {
          this.o.trim?.();
          this.settled = this.o.rss();
          resolve();
        },
        this.o.gc ? (this.o.trimDelayMs ?? TRIM_DELAY_MS) : 0,
      ),
    );
    return true;
  }
}

/** The settler of the process (started by `ferry serve`). */
export const idleSettler = new IdleSettler({
  gc: typeof globalThis.gc === 'function' ? (globalThis.gc as Gc) : undefined,
  trim: loadHeapTrim(),
  rss: () => process.memoryUsage.rss(),
});

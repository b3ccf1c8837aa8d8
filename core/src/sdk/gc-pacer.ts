/**
 * Young-generation collections paced by the bytes transfers move through
 * buffers of their own.
 *
 * Every chunk a transfer gets from a socket is a new ArrayBuffer outside the
 * JavaScript heap: node's HTTP parser copies each body chunk out of its read
 * buffer, for a request received (an upload) as for a response read from a
 * storage backend (a download). V8 frees the dead ones when it collects the
 * young generation, which it does once the JavaScript objects fill the
 * semi-space (2 MiB with core/bin/ferry's --max-semi-space-size=2) or once
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
 */

/** Bytes of short-lived buffers after which a young collection runs. */
export const GC_PACE_BYTES = 4 * 1024 * 1024;

/** Least time between two paced collections. */
export const GC_PACE_MIN_INTERVAL_MS = 20;

/** The young-generation collection of V8's gc extension. */
export type MinorGc = (options: { type: 'minor' }) => void;

export class GcPacer {
  private pending = 0;
  private last = -Infinity;
  /** Young collections run so far. */
  runs = 0;

  constructor(
    private readonly gc: MinorGc | undefined,
    readonly paceBytes = GC_PACE_BYTES,
    readonly minIntervalMs = GC_PACE_MIN_INTERVAL_MS,
    private readonly now: () => number = () => performance.now(),
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
  }
}

/** The pacer of the process: active when node runs with --expose-gc. */
export const gcPacer = new GcPacer(typeof globalThis.gc === 'function' ? (globalThis.gc as MinorGc) : undefined);

/** Counts `bytes` of a fresh buffer a transfer is passing on (see {@link GcPacer}). */
export function noteShortLived(bytes: number): void {
  gcPacer.note(bytes);
}

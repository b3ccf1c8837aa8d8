import { Readable } from 'node:stream';

/** One fetched byte range: its body and the total size of the object. */
export interface RangeResponse {
  body: Readable;
  /** Size of the whole object. */
  total: number;
}

export interface RangeReaderOptions {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive (already clamped to the object's size). */
  end: number;
  partSize: number;
  concurrency: number;
  /** Per-part time limit in ms (0: none). */
  partTimeoutMs: number;
  /** The first part, already requested by the caller (it surfaced NOT_FOUND and the size). */
  first: Readable;
  /** Fetches bytes [start, end] of the object. */
  fetch(start: number, end: number, signal: AbortSignal): Promise<Readable>;
  /** Maps a backend error to the error the stream fails with. */
  mapError(err: unknown): Error;
}

async function collect(body: Readable): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return chunks;
}

/**
 * Reads a byte range as consecutive parts fetched `concurrency` at a time and
 * emitted in order. At most `concurrency` parts are held in memory, never the
 * whole object. Destroying the stream cancels every request in flight.
 */
export class ParallelRangeReadable extends Readable {
  private readonly ctrl = new AbortController();
  private readonly parts: Array<[number, number]> = [];
  private readonly inflight = new Map<number, Promise<Buffer[]>>();
  private scheduled = 0;
  private emitted = 0;
  private pumping = false;

  constructor(private readonly o: RangeReaderOptions) {
    super({ highWaterMark: o.partSize });
    for (let s = o.start; s <= o.end; s += o.partSize) this.parts.push([s, Math.min(s + o.partSize - 1, o.end)]);
    this.track(0, collect(o.first));
    this.scheduled = 1;
  }

  private track(i: number, p: Promise<Buffer[]>): void {
    p.catch(() => undefined); // observed when emitted; never unhandled
    this.inflight.set(i, p);
  }

  private schedule(): void {
    while (this.scheduled < this.parts.length && this.inflight.size < this.o.concurrency) {
      const i = this.scheduled++;
      const [s, e] = this.parts[i]!;
      const signals = [this.ctrl.signal];
      if (this.o.partTimeoutMs > 0) signals.push(AbortSignal.timeout(this.o.partTimeoutMs));
      const signal = signals.length === 1 ? this.ctrl.signal : AbortSignal.any(signals);
      this.track(i, this.o.fetch(s, e, signal).then(collect));
    }
  }

  override _read(): void {
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.emitted < this.parts.length) {
        this.schedule();
        const chunks = await this.inflight.get(this.emitted)!;
        if (this.destroyed) return;
        this.inflight.delete(this.emitted++);
        this.schedule();
        let more = true;
        for (const c of chunks) more = this.push(c);
        if (!more) return;
      }
      this.push(null);
    } catch (err) {
      this.destroy(this.o.mapError(err));
    } finally {
      this.pumping = false;
    }
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    this.ctrl.abort();
    this.o.first.destroy();
    cb(err);
  }
}

/** Parses 'bytes 0-4/11' into the total size (undefined when unknown). */
export function totalFromContentRange(v: string | undefined): number | undefined {
  const m = v ? /\/(\d+)\s*$/.exec(v) : null;
  return m ? Number(m[1]) : undefined;
}

import { Transform, type TransformCallback } from 'node:stream';
import { ipMatcher } from '../util/ip.js';

/** Bytes a throttle lets through in one go: small enough to keep the rate smooth. */
const MAX_SLICE = 64 * 1024;
const MIN_SLICE = 4 * 1024;

/**
 * Token-bucket rate limit as a Transform. Chunks are passed on in slices as
 * tokens accrue; while waiting the transform holds at most the one chunk it
 * is working on (its buffers are a few tens of KiB), so backpressure reaches
 * the source instead of data piling up in memory.
 */
export class Throttle extends Transform {
  private readonly rate: number;
  private readonly slice: number;
  private tokens: number;
  private last = performance.now();
  private timer?: NodeJS.Timeout;

  /** @param bytesPerSecond > 0 */
  constructor(bytesPerSecond: number) {
    super({ highWaterMark: MAX_SLICE });
    this.rate = bytesPerSecond;
    this.slice = Math.max(MIN_SLICE, Math.min(MAX_SLICE, Math.floor(bytesPerSecond / 20)));
    this.tokens = this.slice;
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.slice, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.feed(chunk, 0, cb);
  }

  private feed(chunk: Buffer, off: number, cb: TransformCallback): void {
    this.timer = undefined;
    if (this.destroyed) return;
    while (off < chunk.length) {
      this.refill();
      const n = Math.min(chunk.length - off, this.slice);
      if (this.tokens >= n) {
        this.tokens -= n;
        this.push(off === 0 && n === chunk.length ? chunk : chunk.subarray(off, off + n));
        off += n;
        continue;
      }
      const wait = ((n - this.tokens) / this.rate) * 1000;
      this.timer = setTimeout(() => this.feed(chunk, off, cb), Math.max(1, Math.ceil(wait)));
      return;
    }
    cb();
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    if (this.timer) clearTimeout(this.timer);
    cb(err);
  }
}

/** A BaseUserFilters.bandwidth_limits entry. */
export interface BandwidthLimit {
  sources?: string[];
  upload_bandwidth?: number;
  download_bandwidth?: number;
}

/**
 * The user's bandwidth in KB/s for a client address: the first
 * bandwidth_limits entry whose sources match the address overrides the
 * user's upload_bandwidth / download_bandwidth. 0 means unlimited.
 */
export function bandwidthFor(
  user: { upload_bandwidth: number; download_bandwidth: number; filters: Record<string, unknown> },
  ip: string,
): { upload: number; download: number } {
  const limits = (user.filters.bandwidth_limits as BandwidthLimit[] | undefined) ?? [];
  for (const l of limits) {
    if (l.sources?.length && ipMatcher(l.sources)(ip)) {
      return { upload: l.upload_bandwidth ?? 0, download: l.download_bandwidth ?? 0 };
    }
  }
  return { upload: user.upload_bandwidth ?? 0, download: user.download_bandwidth ?? 0 };
}

import { noteShortLived } from './short-lived.js';

/**
 * The part buffers of one upload: at most `max` of `size` bytes, allocated
 * on first need and reused, so an upload holds `size × max` bytes at most
 * and leaves no garbage for the collector to catch up with.
 */
export class PartBuffers {
  private readonly free: Buffer[] = [];
  private readonly waiting: Array<(b: Buffer) => void> = [];
  private created = 0;
  constructor(
    private readonly size: number,
    private readonly max: number,
  ) {}

  acquire(): Buffer | Promise<Buffer> {
    const b = this.free.pop();
    if (b) return b;
    if (this.created < this.max) {
      this.created++;
      return Buffer.allocUnsafeSlow(this.size);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(b: Buffer): void {
    const w = this.waiting.shift();
    if (w) w(b);
    else this.free.push(b);
  }

  /**
   * The upload succeeded: the free buffers (and `last`, the body of a single
   * PutObject) are given back now rather than at the next full collection.
   * They lived through the upload, so V8 has moved them to the old
   * generation, which it collects only after tens of MB more; detached, each
   * backing store belongs to a new ArrayBuffer dropped at once, which the
   * next young collection frees (the gc-pacer runs one soon: the bytes
   * are counted there). Only after a success: the server then has every byte,
   * so no socket write still reads from these buffers (a failed upload may
   * leave a request writing, its buffers are left to the collector).
   */
  dispose(last?: Buffer): number {
    let bytes = 0;
    for (const b of last ? [...this.free, last] : this.free) {
      const ab = b.buffer as ArrayBuffer;
      if (ab.byteLength === 0) continue;
      bytes += ab.byteLength;
      structuredClone(ab, { transfer: [ab] });
    }
    this.free.length = 0;
    if (bytes) noteShortLived(bytes);
    return bytes;
  }
}

import type { Readable } from 'node:stream';

/** Bytes held before the channel is paused (backpressure on the client). */
const HIGH_WATER = 1024 * 1024;

/**
 * Reads an SSH channel as lines and byte runs (the SCP protocol mixes
 * both), pausing the channel while too much is held.
 */
export class ChannelReader {
  private buf: Buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | null = null;

  constructor(private readonly stream: Readable) {
    stream.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      if (this.buf.length > HIGH_WATER) stream.pause();
      this.notify();
    });
    const end = () => ((this.ended = true), this.notify());
    stream.on('end', end);
    stream.on('close', end);
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private async more(): Promise<boolean> {
    if (this.ended) return false;
    this.stream.resume();
    await new Promise<void>((resolve) => (this.wake = resolve));
    return true;
  }

  private take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    if (this.buf.length <= HIGH_WATER) this.stream.resume();
    return out;
  }

  /** The next line without its '\n' (null at the end of the channel; a line over `max` bytes is an error). */
  async line(max = 4096): Promise<string | null> {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const line = this.take(nl + 1);
        return line.toString('utf8', 0, nl);
      }
      if (this.buf.length > max) throw new Error('protocol error: line too long');
      if (!(await this.more())) {
        if (this.buf.length) throw new Error('protocol error: unterminated line');
        return null;
      }
    }
  }

  /** Up to `max` bytes, at least one (null at the end of the channel). */
  async chunk(max: number): Promise<Buffer | null> {
    while (!this.buf.length) if (!(await this.more())) return null;
    return this.take(Math.min(max, this.buf.length));
  }

  /** One byte (null at the end of the channel). */
  async byte(): Promise<number | null> {
    const b = await this.chunk(1);
    return b ? b[0]! : null;
  }
}

import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadBuffers } from '@ferry/core';

/**
 * Reads bytes `start`..`end` (inclusive) of an open file into lent buffers
 * (ReadOptions.buffers) and pushes views of them: one read of a lent buffer's
 * size at a time, at most one chunk read ahead. Owns `fh` and closes it when
 * it ends or is destroyed. A file that shrinks meanwhile ends the stream
 * early, as fs.createReadStream does.
 */
export class LentBufferFileReader extends Readable {
  private position: number;
  private reading = false;

  constructor(
    private readonly fh: FileHandle,
    start: number,
    private readonly end: number,
    private readonly buffers: ReadBuffers,
  ) {
    super({ highWaterMark: buffers.size });
    this.position = start;
  }

  override _read(): void {
    if (this.reading) return;
    this.reading = true;
    this.readChunks().then(
      () => {
        this.reading = false;
      },
      (err: unknown) => this.destroy(err as Error),
    );
  }

  /** Reads until the consumer has enough (push() false) or the range is read. */
  private async readChunks(): Promise<void> {
    for (;;) {
      const left = this.end + 1 - this.position;
      if (left <= 0) {
        this.push(null);
        return;
      }
      const buf = await this.buffers.take();
      if (this.destroyed) return;
      // the lent size may change along the transfer (larger buffers for a long download)
      const want = Math.min(buf.length, left);
      const { bytesRead } = await this.fh.read(buf, 0, want, this.position);
      if (this.destroyed) return;
      if (bytesRead === 0) {
        this.push(null);
        return;
      }
      this.position += bytesRead;
      if (!this.push(buf.subarray(0, bytesRead))) return;
    }
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    this.fh.close().then(
      () => cb(err),
      () => cb(err),
    );
  }
}

import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import crypto from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { once } from 'node:events';

/** Pulls a Readable piece by piece, able to stop at a byte count (the preview) and go on later. */
export class BodyReader {
  private readonly it: AsyncIterator<Buffer>;
  private held: Buffer | undefined;
  private done = false;

  constructor(private readonly source: Readable) {
    this.it = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  private async pull(): Promise<Buffer | undefined> {
    if (this.held) {
      const b = this.held;
      this.held = undefined;
      return b;
    }
    if (this.done) return undefined;
    const r = await this.it.next();
    if (r.done) {
      this.done = true;
      return undefined;
    }
    return Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value as Uint8Array);
  }

  /** Up to n bytes (fewer only at the end). */
  async readUpTo(n: number): Promise<Buffer> {
    const out: Buffer[] = [];
    let got = 0;
    while (got < n) {
      const b = await this.pull();
      if (!b) break;
      if (got + b.length > n) {
        out.push(b.subarray(0, n - got));
        this.held = b.subarray(n - got);
        got = n;
      } else {
        out.push(b);
        got += b.length;
      }
    }
    return Buffer.concat(out, got);
  }

  /** True when nothing is left (reads ahead one piece, kept for later). */
  async atEnd(): Promise<boolean> {
    if (this.held) return false;
    const b = await this.pull();
    if (!b) return true;
    this.held = b;
    return false;
  }

  async *rest(): AsyncGenerator<Buffer> {
    for (;;) {
      const b = await this.pull();
      if (!b) return;
      if (b.length) yield b;
    }
  }

  destroy(): void {
    if (!this.source.destroyed) this.source.destroy();
  }
}

/** Content the service sent back, kept in a local file until the caller disposes of it. */
export interface SpooledContent {
  size: number;
  open(): Readable;
  /** Moves the file to `dest` (same filesystem) instead of deleting it. */
  moveTo(dest: string): Promise<void>;
  dispose(): Promise<void>;
}

/** Writes a stream of pieces to a new file in `dir` (mode 0600), flat in memory. */
export async function spool(dir: string, pieces: AsyncIterable<Buffer>): Promise<SpooledContent> {
  const file = path.join(dir, `adapted-${crypto.randomUUID()}`);
  const out = createWriteStream(file, { mode: 0o600 });
  let size = 0;
  try {
    await once(out, 'open');
    for await (const p of pieces) {
      size += p.length;
      if (!out.write(p)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
  } catch (err) {
    out.destroy();
    await rm(file, { force: true });
    throw err;
  }
  let gone = false;
  return {
    size,
    open: () => createReadStream(file),
    async moveTo(dest) {
      await rename(file, dest);
      gone = true;
    },
    async dispose() {
      if (!gone) await rm(file, { force: true });
      gone = true;
    },
  };
}

/** True when two streams carry the same bytes (compared piece by piece, without buffering either). */
export async function sameBytes(a: Readable, b: Readable): Promise<boolean> {
  const ia = new BodyReader(a);
  const ib = new BodyReader(b);
  try {
    for (;;) {
      const x = await ia.readUpTo(64 * 1024);
      const y = await ib.readUpTo(64 * 1024);
      if (!x.equals(y)) return false;
      if (x.length === 0) return true;
    }
  } finally {
    ia.destroy();
    ib.destroy();
  }
}

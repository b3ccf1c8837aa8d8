import net from 'node:net';
import { startReading, type Logger, type UploadBuffers } from '@ferry/core';
import { withLargeReads } from './large-reads.js';

export const plainIp = (ip: string | undefined) => (ip ?? '').replace(/^::ffff:/, '');

/**
 * One passive data listener (PASV/EPSV): on `localAddress`, a port of the
 * configured range (any free port for 0-0); it hands over the first
 * connection coming from `clientIp` (the control connection's address) and
 * refuses every other one (data connection theft, FXP). The connection
 * reads nothing until taken: an upload's takes it reading in large chunks.
 */
export class PassiveListener {
  private server: net.Server | null = null;
  private accepted: net.Socket | null = null;
  private waiters: ((s: net.Socket | null) => void)[] = [];
  port = 0;

  constructor(private readonly o: { localAddress: string; clientIp: string; range: { start: number; end: number }; logger: Logger }) {}

  async listen(): Promise<void> {
    const { start, end } = this.o.range;
    const ports = start === 0 && end === 0 ? [0] : rotate(start, end);
    for (const port of ports) {
      const server = net.createServer({ pauseOnConnect: true }, (s) => this.onConnection(s));
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, this.o.localAddress, () => (server.off('error', reject), resolve()));
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
        throw err;
      }
      this.server = server;
      this.port = (server.address() as net.AddressInfo).port;
      return;
    }
    throw new Error('no free port in the passive port range');
  }

  private onConnection(s: net.Socket): void {
    const from = plainIp(s.remoteAddress);
    if (this.accepted || from !== this.o.clientIp) {
      this.o.logger.warn({ from, expected: this.o.clientIp }, 'ftp data connection refused: not from the control connection address');
      s.destroy();
      return;
    }
    this.accepted = s;
    s.on('error', () => undefined);
    this.server?.close();
    for (const w of this.waiters.splice(0)) w(s);
  }

  /**
   * The accepted data connection, or null after `timeoutMs` (or once
   * closed); reading in large chunks into `upload`'s buffers when given (a
   * plain upload's).
   */
  async take(timeoutMs: number, upload?: UploadBuffers): Promise<net.Socket | null> {
    const s =
      this.accepted ??
      (await new Promise<net.Socket | null>((resolve) => {
        const timer = setTimeout(() => done(null), timeoutMs);
        const done = (s: net.Socket | null) => {
          clearTimeout(timer);
          resolve(s);
        };
        this.waiters.push(done);
      }));
    if (!s || s.destroyed) return null;
    if (!upload) {
      startReading(s);
      return s;
    }
    const adopted = withLargeReads(s, upload);
    adopted.on('error', () => undefined);
    this.accepted = adopted;
    return adopted;
  }

  close(): void {
    this.server?.close();
    this.server = null;
    if (this.accepted && !this.accepted.destroyed) this.accepted.destroy();
    for (const w of this.waiters.splice(0)) w(null);
  }
}

function rotate(start: number, end: number): number[] {
  const n = end - start + 1;
  const first = Math.floor(Math.random() * n);
  return Array.from({ length: n }, (_, i) => start + ((first + i) % n));
}

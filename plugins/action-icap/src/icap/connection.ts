import net from 'node:net';
import { IcapProtocolError, MAX_HEAD_BYTES, parseChunkSize } from './wire.js';

/** The service did not answer (connect, write or read) within the timeout. */
export class IcapTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IcapTimeoutError';
  }
}

/** Bytes buffered from the socket before it is paused (the reader pulls; the socket never floods memory). */
const HIGH_WATER = 1024 * 1024;
const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * One TCP connection to an ICAP server, read by pulling: readHead(),
 * readExact(), readChunk(). Received data is buffered up to HIGH_WATER, then
 * the socket is paused until the reader catches up. Writes wait for 'drain'.
 * Any socket error, an unexpected close or `timeoutMs` without progress fails
 * the pending read or write and destroys the connection.
 */
export class IcapConnection {
  private readonly bufs: Buffer[] = [];
  private buffered = 0;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  /** Requests served on this connection (for the pool and tests). */
  served = 0;
  /** Bytes received so far. */
  received = 0;

  private constructor(
    readonly socket: net.Socket,
    readonly key: string,
    private timeoutMs: number,
  ) {
    socket.on('data', (d: Buffer) => {
      this.received += d.length;
      this.bufs.push(d);
      this.buffered += d.length;
      if (this.buffered >= HIGH_WATER) socket.pause();
      this.notify();
    });
    socket.on('end', () => {
      this.ended = true;
      this.notify();
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      this.ended = true;
      this.fail(new Error('the ICAP server closed the connection'));
    });
    socket.on('timeout', () => this.fail(new IcapTimeoutError(`timed out: the ICAP service did not answer within ${this.timeoutMs / 1000} s`)));
    socket.setTimeout(timeoutMs);
  }

  /** Connects to host:port; fails after `timeoutMs` or when `signal` aborts. */
  static connect(host: string, port: number, timeoutMs: number, signal?: AbortSignal): Promise<IcapConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port, noDelay: true });
      const timer = setTimeout(
        () => done(new IcapTimeoutError(`timed out: cannot connect to the ICAP service at ${host}:${port} within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      const onAbort = () => done(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      const done = (err?: Error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.removeListener('error', onError);
        socket.removeListener('connect', onConnect);
        if (err) {
          socket.destroy();
          reject(err);
        } else resolve(new IcapConnection(socket, `${host}:${port}`, timeoutMs));
      };
      const onError = (err: Error) =>
        done(new Error(`cannot connect to the ICAP service at ${host}:${port}: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
      const onConnect = () => done();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('error', onError);
      socket.once('connect', onConnect);
    });
  }

  get usable(): boolean {
    return !this.failure && !this.ended && !this.socket.destroyed && this.buffered === 0;
  }

  setTimeoutMs(ms: number): void {
    this.timeoutMs = ms;
    this.socket.setTimeout(ms);
  }

  /** Fails pending and later reads/writes with `err` and closes the socket. */
  fail(err: Error): void {
    this.failure ??= err;
    this.socket.destroy();
    this.notify();
  }

  destroy(): void {
    this.fail(new Error('connection closed'));
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** Waits for more data; throws the connection's failure or an unexpected end. */
  private async more(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.ended) throw new IcapProtocolError('the ICAP server closed the connection in the middle of a response');
    if (this.socket.isPaused()) this.socket.resume();
    await new Promise<void>((r) => (this.wake = r));
    if (this.failure && !this.buffered) throw this.failure;
  }

  private take(n: number): Buffer {
    const first = this.bufs[0]!;
    let out: Buffer;
    if (first.length > n) {
      out = first.subarray(0, n);
      this.bufs[0] = first.subarray(n);
    } else if (first.length === n) {
      out = first;
      this.bufs.shift();
    } else {
      out = Buffer.concat(this.bufs, this.buffered).subarray(0, n);
      const rest = Buffer.concat(this.bufs, this.buffered).subarray(n);
      this.bufs.length = 0;
      if (rest.length) this.bufs.push(rest);
    }
    this.buffered -= n;
    if (this.buffered < HIGH_WATER && this.socket.isPaused() && !this.failure) this.socket.resume();
    return out;
  }

  private flat(): Buffer {
    if (this.bufs.length > 1) {
      const all = Buffer.concat(this.bufs, this.buffered);
      this.bufs.length = 0;
      this.bufs.push(all);
    }
    return this.bufs[0] ?? Buffer.alloc(0);
  }

  /** Reads a head up to and including its empty line; returns it without the final CRLFCRLF. */
  async readHead(): Promise<string> {
    for (;;) {
      const all = this.flat();
      const end = all.indexOf(CRLF2);
      if (end >= 0)
        return this.take(end + 4)
          .subarray(0, end)
          .toString('latin1');
      if (all.length > MAX_HEAD_BYTES) throw new IcapProtocolError(`ICAP response head larger than ${MAX_HEAD_BYTES} bytes`);
      await this.more();
    }
  }

  /** Reads exactly n bytes. */
  async readExact(n: number): Promise<Buffer> {
    while (this.buffered < n) await this.more();
    return n ? this.take(n) : Buffer.alloc(0);
  }

  private async readLine(max = 1024): Promise<string> {
    for (;;) {
      const all = this.flat();
      const end = all.indexOf('\r\n');
      if (end >= 0)
        return this.take(end + 2)
          .subarray(0, end)
          .toString('latin1');
      if (all.length > max) throw new IcapProtocolError('chunk size line too long');
      await this.more();
    }
  }

  /**
   * Reads a chunked body piece by piece (pieces of at most what is buffered),
   * ending after the last chunk and its (ignored) trailers.
   */
  async *readChunked(): AsyncGenerator<Buffer> {
    for (;;) {
      const { size } = parseChunkSize(await this.readLine());
      if (size === 0) {
        // trailer fields, then the empty line
        while ((await this.readLine(MAX_HEAD_BYTES)) !== '');
        return;
      }
      let left = size;
      while (left > 0) {
        if (!this.buffered) await this.more();
        const piece = this.take(Math.min(left, this.bufs[0]!.length));
        left -= piece.length;
        yield piece;
      }
      const crlf = await this.readExact(2);
      if (crlf[0] !== 13 || crlf[1] !== 10) throw new IcapProtocolError('chunk data not followed by CRLF');
    }
  }

  /** Writes, waiting for 'drain' when the socket's buffer is full. */
  async write(data: Buffer | string): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.socket.write(data)) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        cleanup();
        if (this.failure) reject(this.failure);
        else resolve();
      };
      const cleanup = () => {
        this.socket.removeListener('drain', check);
        this.socket.removeListener('close', check);
      };
      // a failure (the timeout included) destroys the socket: 'close' wakes us
      this.socket.once('drain', check);
      this.socket.once('close', check);
    });
  }

  /** Writes one chunk of a chunked body (size line, data, CRLF) in one syscall where possible. */
  async writeChunk(data: Buffer): Promise<void> {
    if (!data.length) return;
    this.socket.cork();
    this.socket.write(`${data.length.toString(16)}\r\n`);
    this.socket.write(data);
    const ok = this.socket.write('\r\n');
    process.nextTick(() => this.socket.uncork());
    if (!ok) await this.write('');
  }
}

import { IcapConnection, IcapTimeoutError } from './connection.js';

export interface PoolOptions {
  /** Most connections open to one server at once (lowered by its OPTIONS Max-Connections). */
  maxConnections: number;
  /** An idle connection is closed after this long (ms). */
  idleMs: number;
}

interface Waiter {
  resolve(c: IcapConnection): void;
  reject(e: Error): void;
}

interface Server {
  idle: { conn: IcapConnection; timer: NodeJS.Timeout }[];
  open: number;
  limit: number;
  waiters: { w: Waiter; host: string; port: number; timeoutMs: number; signal?: AbortSignal }[];
}

/**
 * A small pool of keep-alive connections per ICAP server (host:port). A
 * request takes an idle connection or opens one while fewer than the limit
 * are open, else waits in line (bounded by its timeout). A connection goes
 * back to the pool only after a complete transaction; anything else
 * destroys it.
 */
export class IcapPool {
  private readonly servers = new Map<string, Server>();
  private closed = false;

  constructor(private readonly o: PoolOptions) {}

  private server(key: string): Server {
    let s = this.servers.get(key);
    if (!s) {
      s = { idle: [], open: 0, limit: this.o.maxConnections, waiters: [] };
      this.servers.set(key, s);
    }
    return s;
  }

  /** Lowers (never raises above the configured maximum) the number of connections to a server: its Max-Connections. */
  setLimit(host: string, port: number, max: number | undefined): void {
    const s = this.server(`${host}:${port}`);
    s.limit = Math.max(1, Math.min(this.o.maxConnections, max ?? this.o.maxConnections));
  }

  /** Connections currently open to a server (idle or in use). */
  openCount(host: string, port: number): number {
    return this.servers.get(`${host}:${port}`)?.open ?? 0;
  }

  /** A connection to host:port: an idle one unless `fresh`, a new one while under the limit, else the next one released. */
  async acquire(host: string, port: number, timeoutMs: number, signal?: AbortSignal, fresh = false): Promise<IcapConnection> {
    if (this.closed) throw new Error('the ICAP connection pool is closed');
    const s = this.server(`${host}:${port}`);
    if (fresh && s.idle.length && s.open >= s.limit) {
      // make room: an idle connection gives its slot to the new one
      const { conn, timer } = s.idle.shift()!;
      clearTimeout(timer);
      s.open--;
      conn.destroy();
    }
    while (!fresh && s.idle.length) {
      const { conn, timer } = s.idle.pop()!;
      clearTimeout(timer);
      if (conn.usable) {
        conn.socket.ref();
        conn.setTimeoutMs(timeoutMs);
        return conn;
      }
      s.open--;
      conn.destroy();
    }
    if (s.open < s.limit) return this.openNew(s, host, port, timeoutMs, signal);
    return new Promise<IcapConnection>((resolve, reject) => {
      const entry = {
        w: {
          resolve: (c: IcapConnection) => {
            cleanup();
            resolve(c);
          },
          reject: (e: Error) => {
            cleanup();
            reject(e);
          },
        },
        host,
        port,
        timeoutMs,
        signal,
      };
      const timer = setTimeout(
        () => entry.w.reject(new IcapTimeoutError(`timed out: no ICAP connection to ${host}:${port} became free within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      const onAbort = () => entry.w.reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = s.waiters.indexOf(entry);
        if (i >= 0) s.waiters.splice(i, 1);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      s.waiters.push(entry);
    });
  }

  private async openNew(s: Server, host: string, port: number, timeoutMs: number, signal?: AbortSignal): Promise<IcapConnection> {
    s.open++;
    try {
      const conn = await IcapConnection.connect(host, port, timeoutMs, signal);
      conn.socket.once('close', () => this.forget(conn));
      return conn;
    } catch (err) {
      s.open--;
      this.next(s);
      throw err;
    }
  }

  private forget(conn: IcapConnection): void {
    const s = this.servers.get(conn.key);
    if (!s) return;
    const i = s.idle.findIndex((x) => x.conn === conn);
    if (i < 0) return; // in use: release() accounts for it
    clearTimeout(s.idle[i]!.timer);
    s.idle.splice(i, 1);
    s.open--;
    this.next(s);
  }

  /** Gives a connection back: kept for reuse when `reusable` and clean, destroyed otherwise. */
  release(conn: IcapConnection, reusable: boolean): void {
    const s = this.servers.get(conn.key);
    if (!s) return conn.destroy();
    conn.served++;
    const waiter = s.waiters.shift();
    if (reusable && conn.usable && !this.closed) {
      if (waiter) {
        conn.socket.ref();
        conn.setTimeoutMs(waiter.timeoutMs);
        return waiter.w.resolve(conn);
      }
      // closing it emits 'close': forget() then frees its slot
      const timer = setTimeout(() => conn.destroy(), this.o.idleMs);
      timer.unref();
      conn.setTimeoutMs(0);
      conn.socket.unref(); // an idle connection never keeps the process alive
      s.idle.push({ conn, timer });
      return;
    }
    s.open--;
    conn.destroy();
    if (waiter) s.waiters.unshift(waiter);
    this.next(s);
  }

  /** A slot freed: the first waiter opens a connection. */
  private next(s: Server): void {
    if (!s.waiters.length || s.open >= s.limit) return;
    const { w, host, port, timeoutMs, signal } = s.waiters.shift()!;
    this.openNew(s, host, port, timeoutMs, signal).then(w.resolve, w.reject);
  }

  /** Closes every idle connection (the pool stays usable). */
  closeIdle(): void {
    for (const s of this.servers.values()) {
      for (const { conn, timer } of s.idle.splice(0)) {
        clearTimeout(timer);
        conn.destroy();
      }
    }
  }

  /** Closes every idle connection and refuses new requests (in-use connections close when released). */
  close(): void {
    this.closed = true;
    for (const s of this.servers.values()) {
      for (const { conn, timer } of s.idle) {
        clearTimeout(timer);
        conn.destroy();
      }
      s.idle = [];
      for (const { w } of s.waiters.splice(0)) w.reject(new Error('the ICAP connection pool is closed'));
    }
  }
}

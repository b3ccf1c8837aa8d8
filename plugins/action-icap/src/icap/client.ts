import { IcapTimeoutError, type IcapConnection } from './connection.js';
import type { IcapEndpoint } from './endpoint.js';
import type { IcapPool } from './pool.js';
import { closes, drainEncapsulated, exchange, hostHeader, IcapServiceError, readResponse, type ScanRequest, type ScanResult } from './exchange.js';

export { IcapServiceError, type ScanMethod, type ScanRequest, type ScanResult } from './exchange.js';

/** What a service's OPTIONS answer says (RFC 3507 4.10.2), cached per service URL. */
export interface ServiceOptions {
  methods: string[];
  /** Bytes the service wants as a preview; undefined: no preview. */
  preview?: number;
  /** The service may answer 204 No Content (`Allow: 204`). */
  allow204: boolean;
  istag?: string;
  /** Options-TTL in seconds; undefined: no expiry given. */
  ttl?: number;
  maxConnections?: number;
  /** When the answer was received (ms). */
  fetchedAt: number;
}

export interface ClientOptions {
  userAgent: string;
  /** Longest preview sent, whatever the service asks (bytes). */
  maxPreview: number;
  /** How long an OPTIONS answer without Options-TTL is reused (ms). */
  defaultOptionsTtlMs: number;
  /** Where adapted content is kept until the action disposes of it. */
  spoolDir: string;
}

/** Keeps the OPTIONS cache and the connection pool shared by every scan of a plugin instance. */
export class IcapAgent {
  private readonly cache = new Map<string, ServiceOptions>();
  /** OPTIONS requests under way: concurrent scans of a service wait for the same one. */
  private readonly fetching = new Map<string, Promise<ServiceOptions>>();

  constructor(
    readonly pool: IcapPool,
    readonly o: ClientOptions,
  ) {}

  /** The cached OPTIONS of a service, fetched when missing or expired. */
  async options(ep: IcapEndpoint, timeoutMs: number, signal?: AbortSignal): Promise<ServiceOptions> {
    const hit = this.cache.get(ep.url);
    const ttl = hit?.ttl !== undefined ? hit.ttl * 1000 : this.o.defaultOptionsTtlMs;
    if (hit && Date.now() - hit.fetchedAt < ttl) return hit;
    let p = this.fetching.get(ep.url);
    if (!p) {
      p = this.fetchOptions(ep, timeoutMs, signal).then((fresh) => {
        this.cache.set(ep.url, fresh);
        this.pool.setLimit(ep.host, ep.port, fresh.maxConnections);
        return fresh;
      });
      const done = () => this.fetching.delete(ep.url);
      p.then(done, done);
      this.fetching.set(ep.url, p);
    }
    return p;
  }

  /** Forgets a service's OPTIONS (after a failure, or when its ISTag changed). */
  invalidate(ep: IcapEndpoint): void {
    this.cache.delete(ep.url);
  }

  private async fetchOptions(ep: IcapEndpoint, timeoutMs: number, signal?: AbortSignal): Promise<ServiceOptions> {
    return this.transaction(ep, timeoutMs, signal, async (conn) => {
      await conn.write(`OPTIONS ${ep.url} ICAP/1.0\r\nHost: ${hostHeader(ep)}\r\nUser-Agent: ${this.o.userAgent}\r\nEncapsulated: null-body=0\r\n\r\n`);
      const res = await readResponse(conn);
      if (res.status !== 200) throw new IcapServiceError(`OPTIONS ${ep.url} answered ${res.status} ${res.reason}`.trim(), res.status);
      await drainEncapsulated(conn, res.headers);
      const h = res.headers;
      return {
        result: {
          methods: h.tokens('Methods').map((m) => m.toUpperCase()),
          preview: h.int('Preview'),
          allow204: h.tokens('Allow').includes('204'),
          istag: h.get('ISTag'),
          ttl: h.int('Options-TTL'),
          maxConnections: h.int('Max-Connections'),
          fetchedAt: Date.now(),
        },
        reusable: !closes(h),
      };
    });
  }

  /** Runs one request on a pooled connection; the connection is reused only when `fn` says so. */
  private async transaction<T>(
    ep: IcapEndpoint,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    fn: (conn: IcapConnection) => Promise<{ result: T; reusable: boolean }>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const conn = await this.pool.acquire(ep.host, ep.port, timeoutMs, signal, attempt > 0);
      const reused = conn.served > 0;
      const receivedBefore = conn.received;
      const onAbort = () => conn.fail(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      let reusable = false;
      try {
        const out = await fn(conn);
        reusable = out.reusable;
        return out.result;
      } catch (err) {
        // a kept-alive connection the server closed meanwhile fails before any answer: once more on a new one
        const stale = reused && conn.received === receivedBefore && !signal?.aborted && !(err instanceof IcapTimeoutError);
        if (!stale || attempt > 0) throw err;
      } finally {
        signal?.removeEventListener('abort', onAbort);
        this.pool.release(conn, reusable);
      }
    }
  }

  /**
   * Sends a file to the service (RESPMOD or REQMOD) and interprets the
   * answer: 204 (or a 200 whose message is unchanged) is clean; an infection
   * or violation header or an encapsulated HTTP 403 is a block; any other 200
   * with an encapsulated message is an adaptation, its content spooled to a
   * local file the caller disposes of.
   */
  async scan(ep: IcapEndpoint, req: ScanRequest, timeoutMs: number, signal?: AbortSignal): Promise<ScanResult> {
    const opts = await this.options(ep, timeoutMs, signal);
    if (opts.methods.length && !opts.methods.includes(req.method)) {
      throw new IcapServiceError(`the ICAP service ${ep.url} does not support ${req.method} (its OPTIONS list: ${opts.methods.join(', ')})`);
    }
    const preview = opts.preview !== undefined ? Math.min(opts.preview, this.o.maxPreview) : undefined;
    try {
      const result = await this.transaction(ep, timeoutMs, signal, (conn) =>
        exchange(conn, ep, req, { userAgent: this.o.userAgent, preview, spoolDir: this.o.spoolDir }),
      );
      if (result.istag && opts.istag && result.istag !== opts.istag) this.invalidate(ep);
      return result;
    } catch (err) {
      this.invalidate(ep);
      throw err;
    }
  }
}

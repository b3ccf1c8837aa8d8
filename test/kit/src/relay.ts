/**
 * Network helpers for backend tests: an HTTP relay that records what a client
 * sends to a real server, and TCP servers that stall, to prove that clients
 * time out instead of hanging.
 */
import http from 'node:http';
import net from 'node:net';
import { closeServer, LoopbackServer } from './local-server.js';

/** One request as the relay saw it. */
export interface RecordedRequest {
  method: string;
  url: string;
  /** Request headers, names in lower case. */
  headers: http.IncomingHttpHeaders;
  /** The first 4 KiB of the body, latin1. */
  body: string;
}

/**
 * An HTTP relay in front of a real server (127.0.0.1:`upstreamPort`) that records
 * each request line, headers and the start of the body before forwarding it, so
 * a test can check what a client really sends (storage class headers, copy
 * sources...). `stall` makes matching requests go unanswered, `fail` answers
 * them with an error status or a closed connection.
 */
export class RecordingRelay extends LoopbackServer {
  readonly requests: RecordedRequest[] = [];
  /** When set, matching requests are never answered (a stalled upstream). */
  stall: ((method: string, url: string) => boolean) | undefined;
  /**
   * When set and it returns a status, the request (recorded, its body read)
   * is answered with that status and never reaches the server; 'reset'
   * closes the connection instead of answering (a network failure).
   */
  fail: ((method: string, url: string, headers: http.IncomingHttpHeaders) => number | 'reset' | undefined) | undefined;
  protected readonly server = http.createServer((req, res) => {
    if (this.stall?.(req.method ?? '', req.url ?? '')) return void req.resume();
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: body.subarray(0, 4096).toString('latin1') });
      const failure = this.fail?.(req.method ?? '', req.url ?? '', req.headers);
      if (failure === 'reset') return void req.socket.destroy();
      if (failure !== undefined)
        return void res
          .writeHead(failure, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: failure, message: `relay: injected ${failure}` } }));
      const up = http.request({ host: '127.0.0.1', port: this.upstreamPort, method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });

  constructor(private readonly upstreamPort: number) {
    super();
  }

  /** Requests whose method matches and whose URL contains `urlPart`. */
  matching(method: string, urlPart = ''): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.url.includes(urlPart));
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return closeServer(this.server);
  }
}

/**
 * A TCP server that stalls its clients: `silent` accepts connections and never
 * answers; `mid-body` answers any request with 200 headers announcing `bodySize`
 * bytes, sends `sentBytes` of them and then goes quiet with the connection open.
 * Connections stay open until stop().
 */
export class StalledServer extends LoopbackServer {
  /** Connections accepted so far. */
  accepted = 0;
  private readonly sockets = new Set<net.Socket>();
  protected readonly server: net.Server;

  constructor(
    readonly mode: 'silent' | 'mid-body',
    o: { bodySize?: number; sentBytes?: number; headers?: Record<string, string> } = {},
  ) {
    super();
    const bodySize = o.bodySize ?? 1024 * 1024;
    const sent = Math.min(o.sentBytes ?? 1024, bodySize);
    this.server = net.createServer((socket) => {
      this.accepted++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      if (mode === 'silent') return void socket.resume();
      let head = '';
      let answered = false;
      socket.on('data', (chunk: Buffer) => {
        if (answered) return;
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        answered = true;
        const extra = Object.entries(o.headers ?? {})
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('');
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${bodySize}\r\nContent-Type: application/octet-stream\r\n${extra}\r\n`);
        socket.write(Buffer.alloc(sent, 1));
      });
    });
  }

  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return closeServer(this.server);
  }
}

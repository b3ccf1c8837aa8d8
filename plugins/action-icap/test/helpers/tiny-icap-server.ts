/**
 * A tiny ICAP/1.0 server speaking the real protocol (RFC 3507) over TCP, for
 * the answers c-icap never gives: folded and repeated headers, an HTTP 403
 * inside a RESPMOD answer with no infection header, 100 Continue after a
 * preview, a modified body, an error status, silence. The service is the
 * first path segment of the request URL:
 *   /folded     200 + X-Infection-Found twice + folded X-Violations-Found, HTTP 403 page
 *   /forbidden  200 with an encapsulated HTTP 403 and nothing else
 *   /continue   preview 8: 100 Continue, reads the rest, then 204
 *   /upper      reads everything, answers 200 with the body upper-cased (an adaptation)
 *   /close      like /continue but answers with Connection: close
 *   /error      500 Server Error
 *   /silent     reads the request and never answers
 *   /early      blocks right after the request head, without reading the body
 *   /flaky      204 for the first request of a connection; closes it at the next one
 *   /nomethod   OPTIONS lists REQMOD only
 * OPTIONS answers Methods, Preview (8 on /continue and /close, none elsewhere),
 * Allow: 204, ISTag, Options-TTL and Max-Connections (2).
 */
import net from 'node:net';

export interface TinyRequest {
  method: string;
  service: string;
  headers: Record<string, string>;
  /** Body bytes received (preview and rest). */
  body: Buffer;
  /** The preview ended with `0; ieof`. */
  ieof: boolean;
  /** Bytes received before 100 Continue was sent (undefined: no preview). */
  previewBytes?: number;
}

export interface TinyIcapServer {
  port: number;
  requests: TinyRequest[];
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

class Reader {
  private buf = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  ended = false;
  constructor(sock: net.Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.waiter?.();
    });
    sock.on('close', () => {
      this.ended = true;
      this.waiter?.();
    });
  }
  private async more(): Promise<void> {
    if (this.ended) throw new Error('closed');
    await new Promise<void>((r) => (this.waiter = r));
    this.waiter = undefined;
  }
  async until(sep: string): Promise<string> {
    for (;;) {
      const i = this.buf.indexOf(sep);
      if (i >= 0) {
        const s = this.buf.subarray(0, i).toString('latin1');
        this.buf = this.buf.subarray(i + sep.length);
        return s;
      }
      await this.more();
    }
  }
  async exact(n: number): Promise<Buffer> {
    while (this.buf.length < n) await this.more();
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
  /** Reads chunks up to the last one; returns the data and whether it carried ieof. */
  async chunked(): Promise<{ data: Buffer; ieof: boolean }> {
    const parts: Buffer[] = [];
    for (;;) {
      const line = await this.until('\r\n');
      const size = parseInt(line.split(';')[0]!, 16);
      if (size === 0) {
        await this.until('\r\n');
        return { data: Buffer.concat(parts), ieof: /;\s*ieof/.test(line) };
      }
      parts.push(await this.exact(size));
      await this.exact(2);
    }
  }
}

function chunk(data: Buffer): Buffer {
  return data.length ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : Buffer.alloc(0);
}

function httpAnswer(status: string, body: Buffer, icapHeaders: string[]): Buffer {
  const http = `HTTP/1.1 ${status}\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\n\r\n`;
  const head = ['ICAP/1.0 200 OK', 'ISTag: "tiny-1"', ...icapHeaders, `Encapsulated: res-hdr=0, res-body=${Buffer.byteLength(http)}`].join('\r\n');
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n${http}`), chunk(body), Buffer.from('0\r\n\r\n')]);
}

export async function startTinyIcapServer(): Promise<TinyIcapServer> {
  const requests: TinyRequest[] = [];
  const sockets = new Set<net.Socket>();
  const state = { connections: 0 };
  const server = net.createServer((sock) => {
    state.connections++;
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    void serve(sock, new Reader(sock), requests).catch(() => sock.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    requests,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

async function serve(sock: net.Socket, rd: Reader, requests: TinyRequest[]): Promise<void> {
  let modifications = 0;
  for (;;) {
    const head = await rd.until('\r\n\r\n');
    const [start, ...lines] = head.split('\r\n');
    const [method, url] = start!.split(' ');
    const service = new URL(url!.replace(/^icap:/, 'http:')).pathname.slice(1);
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const preview = service === 'continue' || service === 'close' ? 8 : undefined;
    if (method === 'OPTIONS') {
      const methods = service === 'nomethod' ? 'REQMOD' : 'RESPMOD, REQMOD';
      const opts = [
        `ICAP/1.0 200 OK`,
        `Methods: ${methods}`,
        `Allow: 204`,
        `ISTag: "tiny-1"`,
        `Options-TTL: 60`,
        `Max-Connections: 2`,
        `Encapsulated: null-body=0`,
      ];
      if (preview !== undefined) opts.push(`Preview: ${preview}`);
      sock.write(`${opts.join('\r\n')}\r\n\r\n`);
      continue;
    }
    const enc = headers['encapsulated'] ?? '';
    const bodyOffset = Number(/(?:req|res)-body=(\d+)/.exec(enc)?.[1] ?? /null-body=(\d+)/.exec(enc)?.[1] ?? 0);
    await rd.exact(bodyOffset);
    const req: TinyRequest = { method: method!, service, headers, body: Buffer.alloc(0), ieof: false };
    requests.push(req);
    if (service === 'flaky' && modifications++ > 0) {
      // a kept-alive connection closed by the server just as the client reuses it
      sock.destroy();
      return;
    }
    if (service === 'early') {
      // a verdict before the body, then nothing more is read
      sock.pause();
      sock.write(httpAnswer('403 Forbidden', Buffer.from('early'), ['X-Infection-Found: Type=0; Resolution=2; Threat=Tiny.Early;']));
      return;
    }
    const first = await rd.chunked();
    req.body = first.data;
    req.ieof = first.ieof;
    if (headers['preview'] !== undefined) {
      req.previewBytes = first.data.length;
      if (!first.ieof && service !== 'folded' && service !== 'forbidden') {
        sock.write('ICAP/1.0 100 Continue\r\n\r\n');
        req.body = Buffer.concat([req.body, (await rd.chunked()).data]);
      }
    }
    switch (service) {
      case 'folded':
        sock.write(
          httpAnswer('403 Forbidden', Buffer.from('<html>blocked</html>'), [
            'X-Infection-Found: Type=0; Resolution=2; Threat=Tiny.Test.Virus;',
            'X-Infection-Found: Type=0; Resolution=2; Threat=Tiny.Second.Virus;',
            'X-Violations-Found: 1',
            '\t/upload.bin',
            '\tTiny.Test.Virus',
            '\t0',
            '\t2',
          ]),
        );
        break;
      case 'forbidden':
        sock.write(httpAnswer('403 Forbidden', Buffer.from('<html>policy</html>'), []));
        break;
      case 'continue':
      case 'flaky':
        sock.write('ICAP/1.0 204 No Content\r\nISTag: "tiny-1"\r\n\r\n');
        break;
      case 'close':
        sock.write('ICAP/1.0 204 No Content\r\nISTag: "tiny-1"\r\nConnection: close\r\n\r\n');
        sock.end();
        return;
      case 'upper':
        sock.write(httpAnswer('200 OK', Buffer.from(req.body.toString('latin1').toUpperCase(), 'latin1'), []));
        break;
      case 'error':
        sock.write('ICAP/1.0 500 Server Error\r\nISTag: "tiny-1"\r\nEncapsulated: null-body=0\r\n\r\n');
        break;
      case 'silent':
        return; // keeps the connection open and says nothing
      default:
        sock.write('ICAP/1.0 404 ICAP Service Not Found\r\nEncapsulated: null-body=0\r\n\r\n');
    }
  }
}

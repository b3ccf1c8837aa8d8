/**
 * A node:http(s) server on 127.0.0.1 recording what it receives (not a test
 * file). Routes:
 * - /status/<code>: answers <code> with `failure body <code>` (padded to
 *   `?size=` bytes when given);
 * - /hang: reads the request and never answers;
 * - /echo-auth/<code>: answers <code> echoing the Authorization header and the credentials it decodes;
 * - /reset: destroys the connection;
 * - /hash: answers 200 after hashing the body (sha256 and size recorded, the body not kept);
 * - anything else: 200 `ok`.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  sha256?: string;
  size: number;
}

export interface Recorder {
  base: string;
  port: number;
  requests: Received[];
  last(): Received;
  openSockets(): number;
  close(): Promise<void>;
}

export async function startRecorder(tls?: { key: Buffer; cert: Buffer }): Promise<Recorder> {
  const requests: Received[] = [];
  const sockets = new Set<Socket>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/reset') {
      req.socket.destroy();
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.alloc(0), size: 0 });
      return;
    }
    const hashOnly = u.pathname === '/hash';
    const chunks: Buffer[] = [];
    const h = crypto.createHash('sha256');
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (hashOnly) h.update(c);
      else chunks.push(c);
    });
    req.on('end', () => {
      const rec: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), size };
      if (hashOnly) rec.sha256 = h.digest('hex');
      requests.push(rec);
      if (u.pathname === '/hang') return;
      const m = /^\/status\/(\d{3})$/.exec(u.pathname);
      if (m) {
        const code = Number(m[1]);
        let body = `failure body ${code}`;
        const pad = Number(u.searchParams.get('size') ?? 0);
        if (pad > body.length) body += ' ' + 'x'.repeat(pad - body.length - 1);
        res.writeHead(code, { 'content-type': 'text/plain', ...(code >= 300 && code < 400 ? { location: '/ok' } : {}) });
        res.end(body);
        return;
      }
      const e = /^\/echo-auth\/(\d{3})$/.exec(u.pathname);
      if (e) {
        const auth = req.headers.authorization ?? '';
        const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
        res.writeHead(Number(e[1]), { 'content-type': 'text/plain' });
        res.end(`you sent ${auth} which is ${decoded}`);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  };
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, handler) : http.createServer(handler);
  server.on(tls ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    last() {
      const r = requests[requests.length - 1];
      if (!r) throw new Error('no request received');
      return r;
    },
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The parts of a multipart/form-data body, byte-exact (headers lower-cased). */
export function parseMultipart(body: Buffer, contentType: string): { headers: Record<string, string>; data: Buffer }[] {
  const m = /boundary=([^;]+)/.exec(contentType);
  if (!m) throw new Error(`no boundary in ${contentType}`);
  const delim = Buffer.from(`--${m[1]}`);
  const parts: { headers: Record<string, string>; data: Buffer }[] = [];
  let pos = body.indexOf(delim);
  if (pos !== 0) throw new Error('the body does not start with the boundary');
  for (;;) {
    pos += delim.length;
    if (body.subarray(pos, pos + 2).toString() === '--') {
      if (body.subarray(pos + 2).toString() !== '\r\n') throw new Error('unexpected bytes after the closing boundary');
      return parts;
    }
    if (body.subarray(pos, pos + 2).toString() !== '\r\n') throw new Error('no CRLF after a boundary');
    pos += 2;
    const headEnd = body.indexOf('\r\n\r\n', pos);
    const headers: Record<string, string> = {};
    for (const line of body.subarray(pos, headEnd).toString('utf8').split('\r\n')) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delim]), headEnd + 4);
    if (next < 0) throw new Error('unterminated part');
    parts.push({ headers, data: body.subarray(headEnd + 4, next) });
    pos = next + 2;
  }
}

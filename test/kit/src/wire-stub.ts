import http from 'node:http';
import type { Test } from 'tap';
import { closeServer, listenOnLoopback } from './local-server.js';

/** What a form stub answers. */
export interface StubAnswer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * A local HTTP server standing in for a token or credentials service that
 * takes form-encoded POSTs (AWS STS, Google STS): each request's body is
 * parsed as `URLSearchParams` and passed to `answer` with the request. Its
 * URL is `http://127.0.0.1:<port>`; it is closed at `t`'s teardown.
 */
export async function startFormStub(
  t: Test,
  answer: (params: URLSearchParams, req: http.IncomingMessage) => StubAnswer,
): Promise<{ url: string; port: number }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const a = answer(new URLSearchParams(body), req);
      res.writeHead(a.status, { 'content-type': a.contentType });
      res.end(a.body);
    });
  });
  const port = await listenOnLoopback(server);
  t.teardown(() => closeServer(server));
  return { url: `http://127.0.0.1:${port}`, port };
}

/** Sets an environment variable until `t`'s teardown, which restores it (or deletes it when it was unset). */
export function setEnvForTest(t: Test, name: string, value: string): void {
  const saved = process.env[name];
  process.env[name] = value;
  t.teardown(() => {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  });
}

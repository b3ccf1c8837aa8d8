import type { Readable } from 'node:stream';
import { BodyReader, sameBytes, spool, type SpooledContent } from './body.js';
import type { IcapConnection } from './connection.js';
import type { IcapEndpoint } from './endpoint.js';
import {
  formatEncapsulated,
  hasBlockHeader,
  HeaderFields,
  IcapProtocolError,
  lastChunk,
  parseEncapsulated,
  parseHead,
  parseStatusLine,
  threatNames,
} from './wire.js';

/** The service answered with an error status, or refused the method. */
export class IcapServiceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'IcapServiceError';
  }
}

export type ScanMethod = 'RESPMOD' | 'REQMOD';

export interface ScanRequest {
  method: ScanMethod;
  /** Virtual path of the file: the encapsulated HTTP request's target (what the service logs and names). */
  path: string;
  size: number;
  /** Content-Type of the encapsulated HTTP message. */
  contentType: string;
  /**
   * Opens the bytes to scan. Called once for the scan, and once more only
   * when the service sends a message back, to tell an unchanged one (a
   * service that does not answer 204) from a modified one.
   */
  open(): Promise<Readable>;
}

export type ScanResult =
  | { outcome: 'clean'; istag?: string; /** 200 with the message unchanged instead of 204. */ echoed?: boolean }
  | { outcome: 'blocked'; threat: string; threats: string[]; httpStatus?: number; istag?: string }
  | { outcome: 'adapted'; httpStatus?: number; istag?: string; content: SpooledContent };

export interface IcapHead {
  status: number;
  reason: string;
  headers: HeaderFields;
}

export const closes = (h: HeaderFields) => h.tokens('Connection').some((t) => t.toLowerCase() === 'close');
export const hostHeader = (ep: IcapEndpoint) => (ep.host.includes(':') ? `[${ep.host}]` : ep.host) + (ep.port === 1344 ? '' : `:${ep.port}`);

export async function readResponse(conn: IcapConnection): Promise<IcapHead> {
  const head = parseHead(await conn.readHead());
  const st = parseStatusLine(head.startLine, 'ICAP');
  return { status: st.status, reason: st.reason, headers: head.headers };
}

/** Reads and drops an answer's encapsulated heads and body (OPTIONS opt-body, error pages). */
export async function drainEncapsulated(conn: IcapConnection, h: HeaderFields): Promise<void> {
  const enc = h.get('Encapsulated');
  if (!enc) return;
  const parts = parseEncapsulated(enc);
  const body = parts[parts.length - 1]!;
  if (body.offset) await conn.readExact(body.offset);
  if (body.name !== 'null-body') for await (const piece of conn.readChunked()) void piece;
}

export interface ExchangeOptions {
  userAgent: string;
  /** Preview size to send (undefined: none). */
  preview?: number;
  spoolDir: string;
}

/** The request head: ICAP head then the encapsulated HTTP head(s). */
function requestHead(ep: IcapEndpoint, req: ScanRequest, o: ExchangeOptions): Buffer {
  const target = encodeURI(req.path).replace(/[?#]/g, encodeURIComponent);
  const heads: { name: 'req-hdr' | 'res-hdr'; text: string }[] =
    req.method === 'RESPMOD'
      ? [
          { name: 'req-hdr', text: `GET ${target} HTTP/1.1\r\nHost: ferry\r\n\r\n` },
          { name: 'res-hdr', text: `HTTP/1.1 200 OK\r\nContent-Type: ${req.contentType}\r\nContent-Length: ${req.size}\r\n\r\n` },
        ]
      : [{ name: 'req-hdr', text: `PUT ${target} HTTP/1.1\r\nHost: ferry\r\nContent-Type: ${req.contentType}\r\nContent-Length: ${req.size}\r\n\r\n` }];
  const encapsulated = formatEncapsulated(
    heads.map((h) => ({ name: h.name, length: Buffer.byteLength(h.text, 'latin1') })),
    req.method === 'RESPMOD' ? 'res-body' : 'req-body',
  );
  let head = `${req.method} ${ep.url} ICAP/1.0\r\nHost: ${hostHeader(ep)}\r\nUser-Agent: ${o.userAgent}\r\nAllow: 204\r\n`;
  if (o.preview !== undefined) head += `Preview: ${o.preview}\r\n`;
  head += `Encapsulated: ${encapsulated}\r\n\r\n`;
  return Buffer.from(head + heads.map((h) => h.text).join(''), 'latin1');
}

/**
 * One RESPMOD/REQMOD transaction on a connection. With a preview, the first
 * bytes go alone (`0; ieof` when they are the whole body) and the rest only
 * after `100 Continue`. The rest of the body is sent while the answer is
 * read: a service may answer (and stream its message back) before it has
 * everything. Returns whether the connection can carry another request.
 */
export async function exchange(
  conn: IcapConnection,
  ep: IcapEndpoint,
  req: ScanRequest,
  o: ExchangeOptions,
): Promise<{ result: ScanResult; reusable: boolean }> {
  await conn.write(requestHead(ep, req, o));
  const body = new BodyReader(await req.open());
  let sentAll = false;
  let sending: Promise<void> | undefined;
  const sendRest = () => {
    sending = (async () => {
      for await (const piece of body.rest()) await conn.writeChunk(piece);
      await conn.write(lastChunk());
      sentAll = true;
    })();
    // a backend read error must end the transaction: the answer would never come
    sending.catch((err: Error) => conn.fail(err));
  };
  try {
    let res: IcapHead;
    if (o.preview !== undefined) {
      await conn.writeChunk(await body.readUpTo(o.preview));
      const whole = await body.atEnd();
      await conn.write(lastChunk(whole));
      if (whole) sentAll = true;
      res = await readResponse(conn);
      if (res.status === 100) {
        if (whole) throw new IcapProtocolError('the ICAP service asked to continue after the whole body was sent (ieof)');
        sendRest();
        res = await readResponse(conn);
        if (res.status === 100) throw new IcapProtocolError('the ICAP service sent 100 Continue twice');
      } else {
        // a final answer to the preview: the message is complete as it is
        sentAll = true;
      }
    } else {
      sendRest();
      res = await readResponse(conn);
      if (res.status === 100) throw new IcapProtocolError('the ICAP service sent 100 Continue without a preview');
    }
    const { result, inStep } = await interpret(conn, res, req, o.spoolDir, () => sending);
    // a body still being sent after the final answer leaves the connection out of step
    return { result, reusable: sentAll && inStep && !closes(res.headers) };
  } catch (err) {
    // a body still being sent would wait for a service that stopped reading: end the connection
    // (a backend read failure already failed it with its own error, which the reads then threw)
    if (!sentAll) conn.fail(err as Error);
    throw err;
  } finally {
    body.destroy();
  }
}

/**
 * Reads the final answer's encapsulated message and decides the outcome;
 * `inStep` is false when the answer was not read to its end.
 */
async function interpret(
  conn: IcapConnection,
  res: IcapHead,
  req: ScanRequest,
  spoolDir: string,
  sending: () => Promise<void> | undefined,
): Promise<{ result: ScanResult; inStep: boolean }> {
  const istag = res.headers.get('ISTag');
  if (res.status === 204) return { result: { outcome: 'clean', istag }, inStep: true };
  if (res.status !== 200) {
    await drainEncapsulated(conn, res.headers).catch(() => {});
    throw new IcapServiceError(`the ICAP service answered ${res.status} ${res.reason}`.trim(), res.status);
  }
  const enc = res.headers.get('Encapsulated');
  if (!enc) throw new IcapProtocolError('a 200 answer without an Encapsulated header');
  const parts = parseEncapsulated(enc);
  const bodyPart = parts[parts.length - 1]!;
  const heads = bodyPart.offset ? (await conn.readExact(bodyPart.offset)).toString('latin1') : '';
  let httpStatus: number | undefined;
  const resHdr = parts.find((p) => p.name === 'res-hdr');
  if (resHdr) {
    const text = heads.slice(resHdr.offset, bodyPart.offset).replace(/(\r?\n)+$/, '');
    httpStatus = parseStatusLine(parseHead(text).startLine, 'HTTP').status;
  }
  const hasBody = bodyPart.name === 'res-body' || bodyPart.name === 'req-body';
  if (hasBlockHeader(res.headers) || httpStatus === 403) {
    if (hasBody) for await (const piece of conn.readChunked()) void piece;
    // a service may block before it has the whole body: then the rest is not sent (the connection is not reused)
    const threats = threatNames(res.headers);
    const threat = threats[0] ?? (httpStatus === 403 ? 'HTTP 403 from the ICAP service' : 'unnamed threat');
    return { result: { outcome: 'blocked', threat, threats, httpStatus, istag }, inStep: true };
  }
  const content = await spool(spoolDir, hasBody ? conn.readChunked() : noPieces());
  try {
    await sending();
    if (content.size === req.size && (await sameBytes(content.open(), await req.open()))) {
      await content.dispose();
      return { result: { outcome: 'clean', istag, echoed: true }, inStep: true };
    }
  } catch (err) {
    await content.dispose();
    throw err;
  }
  return { result: { outcome: 'adapted', httpStatus, istag, content }, inStep: true };
}

async function* noPieces(): AsyncGenerator<Buffer> {
  return;
}

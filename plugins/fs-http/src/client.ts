import type { Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';
import { FsError, FsErrorCode, onAbort } from '@ferry/core';
import type { HttpFsSettings } from './config.schema.js';
import { errorFromResponse, transportError } from './errors.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type Body = Dispatcher.ResponseData['body'];

export interface RequestSpec {
  method: Method;
  /** Protocol operation: stat, open, create, rename, ... */
  op: string;
  /** Normalised Ferry path ('/a/b'); sent percent-encoded as one segment, like SFTPGo does. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: Readable;
  contentType?: string;
  signal?: AbortSignal;
  /**
   * Deadline for the whole exchange, body included (metadata calls). 0: none,
   * for transfers, which rely on headersTimeoutMs and the idle timeout.
   */
  deadlineMs?: number;
  /** Wait for the response headers; 0 disables (uploads answer after the last byte). */
  headersTimeoutMs?: number;
}

export interface OpenResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Body;
  /** True once the caller's signal (or Fs.close()) fired. */
  aborted(): boolean;
  /** Maps an error met while reading the body. */
  mapError(err: unknown): FsError;
  /** Detaches the abort listeners; call once the body is consumed or dropped. */
  release(): void;
}

/** Largest JSON answer read into memory (a readdir of a few hundred thousand entries). */
export const MAX_JSON_BYTES = 128 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;

/** An AbortSignal fed by several sources plus an optional deadline, detachable. */
function linkSignals(sources: (AbortSignal | undefined)[], deadlineMs: number) {
  const ac = new AbortController();
  let timedOut = false;
  const detach = sources.map((s) => onAbort(s, (reason) => ac.abort(reason)));
  const timer =
    deadlineMs > 0
      ? setTimeout(() => {
          timedOut = true;
          ac.abort(new Error('deadline exceeded'));
        }, deadlineMs)
      : undefined;
  timer?.unref();
  return {
    signal: ac.signal,
    timedOut: () => timedOut,
    release() {
      clearTimeout(timer);
      for (const d of detach) d();
    },
  };
}

/**
 * The httpfs protocol client: builds `{endpoint}/{op}/{encoded path}` URLs,
 * authenticates every request (Basic and/or X-API-KEY), applies deadlines
 * and abort signals, and turns non-2xx answers into FsErrors.
 */
export class HttpFsClient {
  private readonly auth: Record<string, string> = {};

  constructor(
    readonly settings: HttpFsSettings,
    private readonly dispatcher: Dispatcher,
    /** Fires when the owning Fs closes: every in-flight request is cancelled. */
    private readonly lifetime: AbortSignal,
  ) {
    if (settings.apiKey !== '') this.auth['x-api-key'] = settings.apiKey;
    if (settings.username !== '' || settings.password !== '') {
      const token = Buffer.from(`${settings.username}:${settings.password}`, 'utf8').toString('base64');
      this.auth.authorization = `Basic ${token}`;
    }
  }

  url(op: string, path: string, query?: RequestSpec['query']): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const q = qs.toString();
    return `${this.settings.endpoint}/${op}/${encodeURIComponent(path)}${q ? `?${q}` : ''}`;
  }

  /** Sends a request; resolves once a 2xx answer's headers arrived. */
  async open(spec: RequestSpec): Promise<OpenResponse> {
    const deadline = spec.deadlineMs ?? this.settings.requestTimeoutMs;
    const link = linkSignals([spec.signal, this.lifetime], deadline);
    const aborted = () => (spec.signal?.aborted ?? false) || this.lifetime.aborted;
    const mapError = (err: unknown) =>
      transportError(err, spec.path, {
        aborted: aborted(),
        timedOutMs: link.timedOut() ? deadline : undefined,
      });
    if (aborted()) {
      link.release();
      throw FsError.aborted(spec.path);
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await request(this.url(spec.op, spec.path, spec.query), {
        method: spec.method,
        dispatcher: this.dispatcher,
        signal: link.signal,
        headers: {
          ...this.auth,
          ...(spec.contentType ? { 'content-type': spec.contentType } : {}),
          accept: spec.op === 'open' ? '*/*' : 'application/json',
        },
        body: spec.body,
        headersTimeout: spec.headersTimeoutMs ?? this.settings.requestTimeoutMs,
        bodyTimeout: this.settings.transferIdleTimeoutMs,
      });
    } catch (err) {
      link.release();
      throw mapError(err);
    }
    if (res.statusCode < 200 || res.statusCode > 299) {
      const body = await readLimited(res.body, MAX_ERROR_BYTES).catch(() => '');
      link.release();
      let parsed: { message?: unknown; error?: unknown } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        parsed = {};
      }
      throw errorFromResponse(res.statusCode, parsed ?? {}, spec.path);
    }
    return {
      status: res.statusCode,
      headers: res.headers,
      body: res.body,
      aborted,
      mapError,
      release: link.release,
    };
  }

  /** A call whose answer is JSON (stat, readdir, dirsize, ...). */
  async json<T>(spec: RequestSpec, maxBytes = 1024 * 1024): Promise<T> {
    const res = await this.open(spec);
    try {
      const text = await readLimited(res.body, maxBytes, spec.path);
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new FsError(FsErrorCode.Unavailable, `${spec.path}: httpfs server sent malformed JSON`, {
          path: spec.path,
          cause: err,
        });
      }
    } catch (err) {
      throw err instanceof FsError ? err : res.mapError(err);
    } finally {
      res.release();
    }
  }

  /** A call answered by an ApiResponse that only says "done". */
  async call(spec: RequestSpec): Promise<void> {
    const res = await this.open(spec);
    try {
      await readLimited(res.body, MAX_ERROR_BYTES);
    } catch {
      // The operation succeeded; an unreadable acknowledgement does not undo it.
    } finally {
      res.release();
    }
  }
}

/** Reads a body as text, failing (and dropping the connection) past maxBytes. */
async function readLimited(body: Body, maxBytes: number, path = ''): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (total > maxBytes) {
      body.destroy();
      throw new FsError(FsErrorCode.Unavailable, `${path}: httpfs answer larger than ${maxBytes} bytes`, { path });
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

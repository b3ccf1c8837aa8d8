import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bucket } from '@google-cloud/storage';
import { crc32c } from '@ferry/crc';
import { crc32cBase64 } from './gcs-client.js';

/**
 * Keep-alive agents of the plugin's own requests: object bodies (below) and
 * resumable upload sessions (gcs-resumable.ts).
 *
 * Object bodies (the JSON API's `alt=media`) are read on these connections
 * instead of through the client's read streams. When one of
 * the client's read streams ends early (a download given up by its client,
 * a read aborted), the client destroys its HTTP agent: the agent every
 * request of every Storage client of the process shares. Every other read
 * in flight was then cut without an error and hung, and the next request
 * failed with "socket hang up". Here giving up a body closes that body's
 * connection only.
 */
export const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

export interface MediaRequest {
  range?: { start: number; end?: number };
  signal?: AbortSignal;
  /** Whether to send the client's credentials (not to an emulator without endpoint_auth). */
  auth: boolean;
  /** Attempts after a transient failure (429, 5xx, a connection dropped before any answer). */
  maxRetries: number;
}

export interface MediaAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: http.IncomingMessage;
}

const transient = (status: number) => status === 408 || status === 429 || status >= 500;

/** True for a request that failed because its connection closed before any answer (a reused keep-alive one). */
function isConnectionDropped(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'ECONNRESET' || e?.code === 'EPIPE' || /socket hang up/i.test(String(e?.message ?? ''));
}

/** The URL of an object's body in the JSON API. */
export function mediaUrl(bucket: Bucket, key: string): URL {
  const base = bucket.storage.apiEndpoint.replace(/\/+$/, '');
  return new URL(`${base}/storage/v1/b/${encodeURIComponent(bucket.name)}/o/${encodeURIComponent(key)}?alt=media`);
}

function once(url: URL, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<MediaAnswer> {
  const secure = url.protocol === 'https:';
  return new Promise<MediaAnswer>((resolve, reject) => {
    const req = (secure ? https : http).request(url, { method: 'GET', headers, agent: secure ? agents.https : agents.http, signal }, (res) =>
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }),
    );
    req.on('error', reject);
    req.end();
  });
}

/** The error of a failed answer as the client raises it (`code` the status), so mapGcsError maps it the same way; its body is read. */
async function answerError(a: MediaAnswer): Promise<Error> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of a.body) {
    size += (c as Buffer).length;
    if (size <= 64 * 1024) parts.push(c as Buffer);
  }
  const text = Buffer.concat(parts).toString('utf8');
  let message = text.slice(0, 500) || `HTTP ${a.status}`;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    if (parsed.error?.message) message = parsed.error.message;
  } catch {
    // not JSON: the text itself
  }
  return Object.assign(new Error(message), { code: a.status });
}

/**
 * Asks an object's body (bytes `range` when given) and resolves once the
 * answer's headers arrived: 2xx, 404 and 416 are answers (404 and 416 with
 * their body already discarded), other statuses reject as the client would.
 * The bytes are the stored ones (`Accept-Encoding: gzip`: no decompressive
 * transcoding), so a whole body can be checked against `x-goog-hash`.
 */
export async function getMedia(bucket: Bucket, key: string, o: MediaRequest): Promise<MediaAnswer> {
  const url = mediaUrl(bucket, key);
  const headers: Record<string, string> = { 'accept-encoding': 'gzip' };
  if (o.range) headers.range = `bytes=${o.range.start}-${o.range.end ?? ''}`;
  if (o.auth) Object.assign(headers, await bucket.storage.authClient.getRequestHeaders(url.href));
  for (let attempt = 0; ; attempt++) {
    let answer: MediaAnswer;
    try {
      answer = await once(url, headers, o.signal);
    } catch (err) {
      if (o.signal?.aborted) throw err;
      // a connection the server closed while idle: sent again at once, as HTTP clients do for a GET
      if (isConnectionDropped(err) && attempt === 0) continue;
      if (attempt < o.maxRetries) {
        await sleep(100 * 2 ** attempt);
        continue;
      }
      throw err;
    }
    if (answer.status < 300) return answer;
    if (answer.status === 404 || answer.status === 416) {
      answer.body.resume();
      return answer;
    }
    if (transient(answer.status) && attempt < o.maxRetries) {
      answer.body.resume();
      await sleep(100 * 2 ** attempt);
      continue;
    }
    throw await answerError(answer);
  }
}

/** The CRC-32C of `x-goog-hash` (`crc32c=...,md5=...`), or undefined. */
export function crc32cOf(headers: http.IncomingHttpHeaders): string | undefined {
  const raw = headers['x-goog-hash'];
  for (const part of (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',')) {
    const m = /^\s*crc32c=(.+?)\s*$/.exec(part);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * Passes a whole body through and checks its CRC-32C against `expected`
 * (base64, as x-goog-hash spells it) at its end: a mismatch fails the stream.
 */
export function crc32cCheck(expected: string): Transform {
  let c = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      c = crc32c(chunk, c);
      cb(null, chunk);
    },
    flush(cb) {
      const got = crc32cBase64(c);
      cb(got === expected ? null : new Error(`the bytes read do not match the object's CRC-32C (${got}, expected ${expected})`));
    },
  });
}

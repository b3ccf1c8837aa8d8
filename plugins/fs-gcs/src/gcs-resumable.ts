import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CreateResumableUploadOptions, File } from '@google-cloud/storage';
import { crc32c } from '@ferry/crc';
import { FsError, FsErrorCode, startPartUpload, type WriteHandle } from '@ferry/core';
import { mapGcsError } from './gcs-errors.js';
import { crc32cBase64 } from './gcs-client.js';
import { agents } from './gcs-media.js';

export interface ResumableParams {
  file: File;
  /** Ferry path, for errors. */
  path: string;
  /** Bytes per request, a multiple of 256 KiB (Cloud Storage refuses other chunk sizes but the last). */
  partSize: number;
  /** Time limit of one request, ms (0: none). */
  partMaxTimeMs: number;
  /** Attempts after a transient failure (network, 408, 429, 5xx) of one request. */
  maxRetries: number;
  /** Session options: the object's metadata, predefined ACL, `ifGenerationMatch: 0` for overwrite: false. */
  session: CreateResumableUploadOptions;
  signal?: AbortSignal;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The answer to one request on the upload's session URI (its body read, at most 1 MiB). */
function send(uri: string, headers: Record<string, string>, body: Buffer | undefined, signal: AbortSignal): Promise<Answer> {
  const url = new URL(uri);
  const secure = url.protocol === 'https:';
  return new Promise<Answer>((resolve, reject) => {
    const req = (secure ? https : http).request(url, { method: 'PUT', headers, agent: secure ? agents.https : agents.http, signal }, (res) => {
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 1024 * 1024) parts.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Bytes the server holds, from a 308 answer's `Range: bytes=0-N` (none: 0). */
function persistedOf(a: Answer): number {
  const m = /^bytes=0-(\d+)$/.exec(String(a.headers.range ?? ''));
  return m ? Number(m[1]) + 1 : 0;
}

const transient = (status: number) => status === 408 || status === 429 || status >= 500;

/** An error answer as the SDK would raise it, so mapGcsError maps it the same way. */
function answerError(a: Answer): Error {
  let message = a.body.slice(0, 500) || `HTTP ${a.status}`;
  try {
    const parsed = JSON.parse(a.body) as { error?: { message?: string } };
    if (parsed.error?.message) message = parsed.error.message;
  } catch {
    // not JSON: the text itself
  }
  return Object.assign(new Error(message), { code: a.status });
}

/**
 * A streamed upload in Cloud Storage's resumable protocol: requests of
 * `partSize` bytes, one after the other, from two buffers reused for the
 * whole upload (core's startPartUpload: one sent while the next fills). The
 * client's own resumable writer kept every received chunk until its request
 * was acknowledged, long enough for the collector to move them to the old
 * generation: 55-62 MB of dead chunks per 256 MiB upload before V8 freed
 * them.
 *
 * An upload that fits in one part is one request with its metadata (no
 * session). Otherwise the object is created only by the last request, which
 * carries the CRC-32C of every byte (x-goog-hash: the server refuses a
 * mismatch), checked against the stored object's once more: an aborted or
 * failed write leaves nothing. A transient failure (network, 408, 429, 5xx)
 * asks the server how many bytes it holds and sends the rest of the buffer
 * again, `maxRetries` times at most. The session URI is the upload's
 * credential: requests on it carry no other.
 */
export function startGcsResumableUpload(p: ResumableParams): WriteHandle {
  let session: Promise<string> | undefined;
  let crc = 0;

  const timeLimit = (signal: AbortSignal) => (p.partMaxTimeMs > 0 ? AbortSignal.any([signal, AbortSignal.timeout(p.partMaxTimeMs)]) : signal);
  const backoff = (n: number, signal: AbortSignal) => sleep(Math.min(100 * 2 ** (n - 1), 2000) + Math.random() * 100, undefined, { signal });

  /**
   * Sends bytes [start, start + len) from `buf` (the last request when
   * `total` is set) until the server holds them; resolves to the final
   * answer's object metadata, or undefined for an intermediate request.
   */
  const put = async (
    uri: string,
    buf: Buffer | undefined,
    start: number,
    len: number,
    total: number | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> => {
    let from = 0;
    let failures = 0;
    let query = false;
    for (;;) {
      signal.throwIfAborted();
      let a: Answer;
      try {
        if (query) {
          a = await send(uri, { 'content-range': `bytes */${total ?? '*'}`, 'content-length': '0' }, undefined, timeLimit(signal));
        } else {
          const headers: Record<string, string> = {
            'content-range': len > from ? `bytes ${start + from}-${start + len - 1}/${total ?? '*'}` : `bytes */${total ?? '*'}`,
            'content-length': String(len - from),
          };
          if (total !== undefined) headers['x-goog-hash'] = `crc32c=${crc32cBase64(crc)}`;
          a = await send(uri, headers, len > from ? buf!.subarray(from, len) : undefined, timeLimit(signal));
        }
      } catch (err) {
        if (signal.aborted) throw err;
        if (++failures > p.maxRetries) {
          // what stopped the request was its time limit (the upload itself was not aborted)
          const timedOut = (err as { name?: string } | null)?.name === 'AbortError';
          throw timedOut
            ? new FsError(FsErrorCode.Unavailable, `${p.path}: an upload request took longer than ${p.partMaxTimeMs} ms (upload_part_max_time)`, {
                path: p.path,
                cause: err,
              })
            : err;
        }
        await backoff(failures, signal);
        query = true;
        continue;
      }
      if (a.status === 200 || a.status === 201) {
        if (total === undefined) throw new Error(`the upload completed before its last request (HTTP ${a.status})`);
        return JSON.parse(a.body) as Record<string, unknown>;
      }
      if (a.status === 308) {
        const held = persistedOf(a);
        if (held < start) throw new Error(`the server holds ${held} bytes, fewer than the ${start} already released`);
        if (held >= start + len && total === undefined) return undefined;
        if (query) query = false;
        else if (held - start <= from && ++failures > p.maxRetries) throw new Error(`the server keeps ${held} bytes and takes no more`);
        from = Math.min(held - start, len);
        continue;
      }
      if (transient(a.status) && ++failures <= p.maxRetries) {
        await backoff(failures, signal);
        query = true;
        continue;
      }
      throw answerError(a);
    }
  };

  const startSession = async (): Promise<string> => {
    const [uri] = await p.file.createResumableUpload(p.session);
    return uri;
  };

  return startPartUpload({
    path: p.path,
    partSize: p.partSize,
    concurrency: 1,
    signal: p.signal,
    mapError: (err) => mapGcsError(err, 'upload', p.path),
    async sendPart(buf, len, _index, offset, signal) {
      crc = crc32c(buf.subarray(0, len), crc); // parts go one after the other, in the order of the bytes
      session ??= startSession();
      await put(await session, buf, offset, len, undefined, signal);
    },
    async complete(last, len, parts, offset, signal) {
      const body = last ? last.subarray(0, len) : Buffer.alloc(0);
      if (parts === 0) {
        // it all fits in one request (an empty object too): no session, one upload of the buffer with its metadata
        await p.file.save(body, { ...p.session, resumable: false, validation: 'crc32c' });
        const etag = (p.file.metadata as { etag?: unknown } | undefined)?.etag;
        return typeof etag === 'string' ? { etag } : {};
      }
      crc = crc32c(body, crc);
      const md = await put(await session!, last, offset, len, offset + len, signal);
      const stored = typeof md?.crc32c === 'string' ? md.crc32c : undefined;
      if (stored !== undefined && stored !== crc32cBase64(crc)) {
        // the server took other bytes than were sent (it did not check x-goog-hash): no such object stays
        await p.file.delete({ ignoreNotFound: true }).catch(() => undefined);
        throw new FsError(FsErrorCode.Unavailable, `${p.path}: the stored object's CRC-32C ${stored} is not the upload's ${crc32cBase64(crc)}`, {
          path: p.path,
        });
      }
      return typeof md?.etag === 'string' ? { etag: md.etag } : {};
    },
    async cancel() {
      const uri = session && (await session.catch(() => undefined));
      if (uri) await cancel(uri);
    },
  });
}

/** Cancels a session (DELETE on its URI); a server that cannot is left to expire it. */
async function cancel(uri: string): Promise<void> {
  const url = new URL(uri);
  const secure = url.protocol === 'https:';
  await new Promise<void>((resolve) => {
    const req = (secure ? https : http).request(url, { method: 'DELETE', agent: secure ? agents.https : agents.http, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', resolve);
      res.on('error', () => resolve());
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve());
    req.end();
  });
}

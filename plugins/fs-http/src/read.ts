import { Transform, type Readable } from 'node:stream';
import { resolveReadRange, throwIfFsAborted, type ReadOptions } from '@ferry/core';
import type { HttpFsClient } from './client.js';

/**
 * GET /open/{name}?offset=start. The protocol has no end offset, so a range
 * with an end stops reading after end-start+1 bytes and drops the response
 * (the connection is not reused; the server sees the client go away).
 */
export async function openRange(client: HttpFsClient, path: string, o: ReadOptions): Promise<Readable> {
  throwIfFsAborted(o.signal, path);
  // Validates bounds (INVALID for negative, non-integer, start > end) before any request.
  resolveReadRange(o, Number.MAX_SAFE_INTEGER, path);
  const start = o.start ?? 0;
  const res = await client.open({
    method: 'GET',
    op: 'open',
    path,
    query: { offset: start > 0 ? start : undefined },
    signal: o.signal,
    deadlineMs: 0,
  });
  let left = o.end === undefined ? Infinity : o.end - start + 1;
  let complete = false;
  const body = res.body;
  const out = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (left <= 0) return cb();
      const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
      left -= part.length;
      cb(null, part);
      if (left <= 0) {
        complete = true;
        body.unpipe(out);
        out.end();
        body.destroy();
      }
    },
  });
  body.on('error', (err) => {
    if (!complete) out.destroy(res.mapError(err));
  });
  body.on('end', () => {
    complete = true;
  });
  out.on('close', () => {
    res.release();
    if (!body.destroyed && !complete) body.destroy();
  });
  body.pipe(out);
  return out;
}

import { Writable } from 'node:stream';
import { FsError } from '../fs/fs-error.js';
import type { WriteHandle, WriteResult } from '../fs/fs.contract.js';
import { PartBuffers } from './part-buffers.js';

/** What a backend does with the parts of one upload (see {@link startPartUpload}). */
export interface PartUploadSpec {
  /** Ferry path, for errors. */
  path: string;
  /** Bytes per part. */
  partSize: number;
  /** Parts sent at once (1: one after the other, in the order of the bytes). */
  concurrency: number;
  /** Aborts the upload (client disconnect, connection closed by an admin). */
  signal?: AbortSignal;
  /** The error `done` rejects with for a backend's error. */
  mapError(err: unknown): Error;
  /**
   * Sends part `index` (0 first): `len` bytes of `buf` that begin at byte
   * `offset` of the upload. Every part but the last is full. `buf` is lent:
   * it is reused once the promise settles. `signal` aborts on a failure or
   * abort of the upload.
   */
  sendPart(buf: Buffer, len: number, index: number, offset: number, signal: AbortSignal): Promise<void>;
  /**
   * Every byte was written and every part sent succeeded: stores the upload
   * with the bytes not sent yet (`len` bytes of `last`, which begin at byte
   * `offset`: the last part, or the whole upload when `parts` is 0; `last` is
   * undefined for an empty upload). Resolves to the stored object's entity
   * tag, if any.
   */
  complete(last: Buffer | undefined, len: number, parts: number, offset: number, signal: AbortSignal): Promise<{ etag?: string }>;
  /** After a failure or abort, once no part is in flight: drops what the backend started (best effort). */
  cancel?(): Promise<void>;
}

/**
 * A streamed upload in parts (S3 multipart, Azure blocks, Cloud Storage
 * resumable requests): bytes written to `stream` are copied into part
 * buffers of `partSize`, allocated once per upload and reused, so an upload
 * holds at most `partSize × (concurrency + 1)` bytes, the chunks it receives
 * are garbage at once (a young collection frees them), and the writer waits
 * (backpressure) while every buffer is in use. A full buffer is sent once
 * more bytes follow it; the bytes left at the end go to `complete`. Nothing
 * is stored before `complete`, so an aborted or failed write leaves nothing
 * (then `cancel` runs).
 *
 * An SDK's own streaming uploader keeps the chunks it received until their
 * part was sent or acknowledged: long enough for V8 to promote them, and it
 * frees promoted buffers only at its next full collection, 40-60 MB later
 * (docs/remote-storage.md).
 */
export function startPartUpload(spec: PartUploadSpec): WriteHandle {
  const ctrl = new AbortController();
  const buffers = new PartBuffers(spec.partSize, spec.concurrency + 1);
  let bytes = 0;
  let queued = 0;
  let parts = 0;
  let current: Buffer | undefined;
  let filled = 0;
  const inflight = new Set<Promise<void>>();
  let failure: Error | undefined;
  let completed = false;

  const fail = (err: unknown): Error => {
    failure ??= err instanceof FsError ? err : spec.mapError(err);
    if (!ctrl.signal.aborted) ctrl.abort(failure);
    return failure;
  };
  const checkFailed = () => {
    if (failure) throw failure;
  };

  /** Parts being sent, and the parts waiting for one of them to end (first come, first sent). */
  let sending = 0;
  const turns: Array<() => void> = [];
  const turn = (): Promise<void> | void => {
    if (sending < spec.concurrency) {
      sending++;
      return;
    }
    return new Promise<void>((resolve) => turns.push(resolve));
  };
  const endTurn = () => {
    const next = turns.shift();
    if (next) next();
    else sending--;
  };

  /** Sends `buf[0, len)` as the next part once fewer than `concurrency` are being sent. */
  const send = (buf: Buffer, len: number): void => {
    const index = parts++;
    const offset = queued;
    queued += len;
    const task = (async () => {
      await turn();
      try {
        if (failure) return;
        await spec.sendPart(buf, len, index, offset, ctrl.signal);
      } catch (err) {
        fail(err);
      } finally {
        endTurn();
        buffers.release(buf);
      }
    })();
    inflight.add(task);
    void task.finally(() => inflight.delete(task));
  };

  /** Copies `chunk` into part buffers, sending each full buffer once more bytes follow it. */
  const take = async (chunk: Buffer): Promise<void> => {
    let off = 0;
    while (off < chunk.length) {
      checkFailed();
      if (current && filled === current.length) {
        send(current, filled);
        current = undefined;
      }
      if (!current) {
        current = await buffers.acquire();
        filled = 0;
        checkFailed();
      }
      const n = chunk.copy(current, filled, off);
      filled += n;
      off += n;
    }
  };

  const finish = async (): Promise<WriteResult> => {
    while (inflight.size) await Promise.all([...inflight]);
    checkFailed();
    const last = current;
    const out = await spec.complete(last, last ? filled : 0, parts, queued, ctrl.signal);
    current = undefined;
    buffers.dispose(last);
    return { size: bytes, ...(out.etag ? { etag: out.etag } : {}) };
  };

  let resolveDone!: (r: WriteResult) => void;
  let rejectDone!: (e: Error) => void;
  const done = new Promise<WriteResult>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  done.catch(() => undefined); // callers that abort need not await `done`

  /** After a failure: the parts in flight end, then the backend drops what was started (never awaited by writers). */
  const settleFailure = async (err: Error) => {
    while (inflight.size) await Promise.all([...inflight]);
    await spec.cancel?.().catch(() => undefined);
    rejectDone(err);
  };

  const stream = new Writable({
    highWaterMark: 256 * 1024,
    write(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      take(chunk).then(
        () => cb(),
        (err: unknown) => cb(fail(err)),
      );
    },
    final(cb) {
      finish().then(
        (r) => {
          completed = true;
          resolveDone(r);
          cb();
        },
        (err: unknown) => cb(fail(err)),
      );
    },
    destroy(err, cb) {
      // An error, the writer going away (client disconnect) or abort(): the upload is cancelled.
      if (!completed) void settleFailure(fail(failure ?? err ?? FsError.aborted(spec.path)));
      cb(err);
    },
  });
  // failures are reported through `done` (and to a pipeline writing here): never an unhandled 'error' event
  stream.on('error', () => undefined);

  const onSignal = () => stream.destroy(FsError.aborted(spec.path));
  if (spec.signal?.aborted) queueMicrotask(onSignal);
  spec.signal?.addEventListener('abort', onSignal, { once: true });
  const unlisten = () => spec.signal?.removeEventListener('abort', onSignal);
  void done.then(unlisten, unlisten);

  return {
    stream,
    done,
    async abort(reason?: unknown) {
      if (!completed) {
        fail(reason instanceof FsError ? reason : FsError.aborted(spec.path));
        stream.destroy(failure);
      }
      await done.then(
        () => undefined,
        () => undefined,
      );
    },
  };
}

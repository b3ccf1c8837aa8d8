import type { Readable, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { WriteHandle } from '../fs/fs.contract.js';
import { FsError } from '../fs/fs-error.js';
import { noteShortLived } from './gc-pacer.js';
import { isLentToWriter } from './read-buffers.js';
import type { Throttle } from './throttle.js';

/**
 * Moves a client stream into a write handle (through the throttle when
 * there is one), calling `onChunk` for every chunk first: a returned error
 * stops the transfer. Data is pumped by hand (no extra stream stage) with
 * backpressure. The source is only paused on failure, never destroyed, so
 * the caller can still answer the client.
 */
export async function pump(
  source: Readable,
  onChunk: (n: number) => Error | null,
  throttle: Throttle | undefined,
  handle: WriteHandle,
  signal: AbortSignal,
): Promise<void> {
  const dest: Writable = throttle ?? handle.stream;
  const tail = throttle ? pipeline(throttle, handle.stream) : finished(handle.stream);
  tail.catch(() => undefined);
  let failure: Error | undefined;
  const detach = () => {
    source.off('data', onData);
    source.off('end', onEnd);
    source.off('error', onError);
    source.off('aborted', onAborted);
    source.off('close', onClose);
    dest.off('drain', onDrain);
    signal.removeEventListener('abort', onAborted);
  };
  const stop = (err: Error) => {
    if (failure) return;
    failure = err;
    detach();
    source.pause();
    if (!dest.destroyed) dest.destroy(err);
  };
  function onData(chunk: Buffer) {
    const err = onChunk(chunk.length);
    if (err) return stop(err);
    // a copy made by node's HTTP parser (or a slice of one), garbage once written; not a pooled
    // buffer a front-end lent (leaseUploadBuffers), read into again once written
    if (!isLentToWriter(chunk)) noteShortLived(chunk.length);
    if (!dest.write(chunk)) source.pause();
  }
  function onDrain() {
    if (!failure) source.resume();
  }
  function onEnd() {
    detach();
    dest.end();
  }
  function onError(err: unknown) {
    stop(err instanceof Error ? err : FsError.aborted());
  }
  function onAborted() {
    stop(FsError.aborted());
  }
  function onClose() {
    if (!source.readableEnded) stop(FsError.aborted());
  }
  if (signal.aborted) throw FsError.aborted();
  source.on('data', onData);
  source.on('end', onEnd);
  source.on('error', onError);
  source.on('aborted', onAborted);
  source.on('close', onClose);
  dest.on('drain', onDrain);
  signal.addEventListener('abort', onAborted, { once: true });
  // A source destroyed before the listeners were attached (a multipart part ended with the
  // request's error while this upload was still opening its file) sends no event any more:
  // without this the transfer would wait for ever with its temporary file.
  if (source.destroyed && !source.readableEnded) stop(source.errored ?? FsError.aborted());
  source.resume();
  try {
    await tail;
  } catch (err) {
    throw failure ?? err;
  }
  if (failure) throw failure;
}

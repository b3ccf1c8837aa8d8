import { FsError } from '../fs/fs-error.js';

/** Throws FsError ABORTED (about `path`) when the signal has already fired. */
export function throwIfFsAborted(signal: AbortSignal | undefined, path?: string): void {
  if (signal?.aborted) throw FsError.aborted(path);
}

/**
 * Runs `onAbort` once when `signal` fires (immediately if it already has).
 * Returns a function that removes the listener; call it once the operation
 * settles so long-lived signals do not accumulate listeners.
 */
export function onAbort(signal: AbortSignal | undefined, onAbort: (reason: unknown) => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    onAbort(signal.reason);
    return () => undefined;
  }
  const listener = (): void => onAbort(signal.reason);
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/**
 * Destroys `stream` with FsError ABORTED (about `path`) when `signal` fires;
 * the listener is removed when the stream closes.
 */
export function destroyOnAbort<S extends { destroy(err?: Error): unknown; once(ev: 'close', fn: () => void): unknown }>(
  stream: S,
  signal: AbortSignal | undefined,
  path?: string,
): S {
  const stop = onAbort(signal, () => stream.destroy(FsError.aborted(path)));
  stream.once('close', stop);
  return stream;
}

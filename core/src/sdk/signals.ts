import { FsError } from '../fs/fs-error.js';

/** Throws FsError ABORTED (about `path`) when the signal has already fired. */
export function throwIfFsAborted(signal: AbortSignal | undefined, path?: string): void {
  if (signal?.aborted) throw FsError.aborted(path);
}

/**
 * The callbacks waiting on each signal, behind one real 'abort' listener per
 * signal. EventTarget's addEventListener walks the signal's listeners to skip
 * duplicates, so a long-lived signal shared by many operations (a request's,
 * with 1,000 uploads of a multipart body held on it) made each registration
 * cost as much as the listeners already there; a Set adds and removes in
 * constant time. The real listener is removed with the last callback: a
 * listener left on a composite or timeout signal (AbortSignal.any,
 * AbortSignal.timeout) would keep that signal, and everything its listeners
 * reach, in Node's set of signals that must outlive collection until it
 * aborts, which a signal fed by a long-lived one may never do.
 */
const waiting = new WeakMap<AbortSignal, { callbacks: Set<(reason: unknown) => void>; listener: () => void }>();

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
  let entry = waiting.get(signal);
  if (!entry) {
    const callbacks = new Set<(reason: unknown) => void>();
    const listener = (): void => {
      waiting.delete(signal);
      for (const cb of [...callbacks]) if (callbacks.has(cb)) cb(signal.reason);
    };
    entry = { callbacks, listener };
    waiting.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  // a wrapper per registration: the same function registered twice runs twice, as before
  const cb = (reason: unknown): void => onAbort(reason);
  entry.callbacks.add(cb);
  const registered = entry;
  return () => {
    if (!registered.callbacks.delete(cb) || registered.callbacks.size > 0) return;
    if (waiting.get(signal) === registered) waiting.delete(signal);
    signal.removeEventListener('abort', registered.listener);
  };
}

/**
 * A signal that fires when any of `sources` does, with every registration on
 * the sources removed by dispose(): unlike AbortSignal.any, nothing is left
 * on a long-lived source (a connection's, an execution's) once the operation
 * that needed the signal is over.
 */
export function linkedSignal(...sources: (AbortSignal | undefined)[]): { signal: AbortSignal; dispose(): void; abort(reason: unknown): void } {
  const ac = new AbortController();
  const offs = sources.map((s) => onAbort(s, (reason) => ac.abort(reason)));
  return {
    signal: ac.signal,
    dispose() {
      for (const off of offs) off();
    },
    /** Fires the signal itself (a source of its own that needs no signal of its own, such as a socket's 'close'). */
    abort(reason: unknown) {
      ac.abort(reason);
    },
  };
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

/** The signal of one run: aborted by the run's timeout or by the execution's (long-lived) signal. */
export interface RunSignal {
  readonly signal: AbortSignal;
  /** True when the timeout, not the execution, aborted the run. */
  readonly timedOut: boolean;
  /** Clears the timer and the registration on the execution's signal (call when the run settles). */
  dispose(): void;
}

/**
 * One controller per run fed by a timer and by `parent` through onAbort (a
 * registration removed by dispose()), rather than AbortSignal.any, which
 * would leave a registration on the long-lived execution signal per run.
 */
export function runSignal(parent: AbortSignal, timeoutMs: number): RunSignal {
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error('timeout'));
  }, timeoutMs);
  const off = onAbort(parent, (reason) => ac.abort(reason instanceof Error ? reason : new Error('aborted')));
  return {
    signal: ac.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      off();
    },
  };
}

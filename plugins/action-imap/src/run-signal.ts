import { onAbort } from '@ferry/core';

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

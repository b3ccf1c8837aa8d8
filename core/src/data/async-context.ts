import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * MikroORM's async contexts, switched off between their uses.
 *
 * MikroORM keeps its transaction context (TransactionContext), the "inside a
 * flush" marker of its unit of work and its raw query fragments in
 * AsyncLocalStorage instances. Up to Node 22, an AsyncLocalStorage that has
 * run once enables async_hooks' promise hooks for good: from the first
 * em.flush() or em.transactional() (the first admin is created at startup)
 * every promise of the process, in every request, got an async id and a
 * resource its context was copied into. A profile of 4 KiB downloads put a
 * fifth of all allocations there (41 of 239 KB per request, in
 * promiseInitHook) and 3% of the event loop's time in the hooks
 * (docs/performance-history.md), for contexts only MikroORM reads, and only
 * while one of its own calls runs.
 *
 * So each run() of such an instance is counted, and when the last one
 * settles (the promise its callback returned), the instance is disabled;
 * with no AsyncLocalStorage enabled Node turns the promise hooks off. The
 * next run() enables it again, as Node does on its own. What changes:
 * getStore() of a MikroORM context answers undefined once no call of it is
 * in progress, where it would have answered the store of a finished
 * transaction to work that call left running unawaited (never ours: a
 * query after its transaction has committed must not join it anyway).
 *
 * Only instances MikroORM itself runs are managed (the caller of their
 * first run() is a MikroORM module); an instance someone enters with
 * enterWith() is left alone for good. Node versions whose
 * AsyncLocalStorage does not use async_hooks (AsyncContextFrame, the
 * default from Node 24) pay nothing for an enabled instance: nothing is
 * installed there.
 */

type Storage = AsyncLocalStorage<unknown>;

/** Per instance: true when managed here (MikroORM's), false when never (decided on its first run()). */
const managed = new WeakMap<Storage, boolean>();
/** Runs in progress of a managed instance. */
const running = new WeakMap<Storage, number>();
const FROM_ORM = /[\\/]@mikro-orm[\\/]/;
let installed = false;

/** True when this Node's AsyncLocalStorage keeps its stores through async_hooks (see above). */
export function storageUsesAsyncHooks(): boolean {
  const proto = AsyncLocalStorage.prototype as unknown as Record<string, unknown>;
  return typeof proto['_enable'] === 'function' && typeof proto['_propagate'] === 'function';
}

function isManaged(s: Storage): boolean {
  let m = managed.get(s);
  if (m === undefined) {
    // once per instance: frames of isManaged(), of run() below, then of run()'s caller
    m = FROM_ORM.test((new Error().stack ?? '').split('\n')[3] ?? '');
    managed.set(s, m);
  }
  return m;
}

/**
 * Installs the switching off (idempotent; before the ORM runs anything).
 * Returns false when this Node needs none (see above).
 */
export function releaseOrmContextsWhenIdle(): boolean {
  if (installed) return true;
  if (!storageUsesAsyncHooks()) return false;
  installed = true;
  const proto = AsyncLocalStorage.prototype as unknown as {
    run(this: Storage, store: unknown, cb: (...args: unknown[]) => unknown, ...args: unknown[]): unknown;
    enterWith(this: Storage, store: unknown): void;
  };
  const run = proto.run;
  const enterWith = proto.enterWith;
  proto.enterWith = function (this: Storage, store: unknown): void {
    managed.set(this, false);
    enterWith.call(this, store);
  };
  proto.run = function (this: Storage, store: unknown, cb: (...args: unknown[]) => unknown, ...args: unknown[]): unknown {
    if (!isManaged(this)) return run.call(this, store, cb, ...args);
    running.set(this, (running.get(this) ?? 0) + 1);
    const settled = (): void => {
      const left = (running.get(this) ?? 1) - 1;
      running.set(this, left);
      if (left === 0 && managed.get(this)) this.disable();
    };
    let result: unknown;
    try {
      result = run.call(this, store, cb, ...args);
    } catch (err) {
      settled();
      throw err;
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(settled, settled);
    } else {
      settled();
    }
    return result;
  };
  return true;
}

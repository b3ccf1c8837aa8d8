/**
 * A module imported on first use, for plugins whose package entry must stay
 * light (the plugin loader imports every configured plugin at start; the
 * heavy SDK of a storage backend loads only when its provider is first used).
 */
export interface LazyModule<T> {
  /** Imports the module once; a failed import is tried again on the next call. */
  load(): Promise<T>;
  /** The module when it was imported already (for teardown: nothing to close when it never was). */
  loaded(): T | undefined;
}

/** `lazyModule(() => import('./lib.js'))`. */
export function lazyModule<T>(importer: () => Promise<T>): LazyModule<T> {
  let pending: Promise<T> | undefined;
  let value: T | undefined;
  return {
    load() {
      pending ??= importer().then(
        (m) => (value = m),
        (err: unknown) => {
          pending = undefined;
          throw err;
        },
      );
      return pending;
    },
    loaded: () => value,
  };
}

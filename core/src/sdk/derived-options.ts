/**
 * What a filesystem provider derives from a filesystem's options (its
 * validated settings, a client's identity), kept per options object.
 *
 * A file session creates its filesystems on every request, so a provider's
 * create() runs once per request with the same options: the core hands it
 * the same frozen object for one user's filesystem until the account
 * changes (vfs/fs-factory.ts). `derive` then runs once per such object
 * (a joi validation took about 0.1 ms of each small SFTP download). An
 * object that is not frozen (a caller of the provider other than the
 * core: a test, a tool) is derived every time, as it may change. A
 * `derive` that throws is not kept: the next call throws again. The value
 * is shared by every Fs made from the same options: treat it as read-only.
 */
export function derivedFromOptions<O extends object, T>(derive: (options: O) => T): (options: O) => T {
  const kept = new WeakMap<O, { value: T }>();
  return (options) => {
    if (!Object.isFrozen(options)) return derive(options);
    const hit = kept.get(options);
    if (hit) return hit.value;
    const value = derive(options);
    kept.set(options, { value });
    return value;
  };
}

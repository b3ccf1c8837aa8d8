import { useCallback, useRef } from 'react';

/**
 * For a loader whose answers may come back out of order (a folder left, a
 * page turned, a filter or range changed while the previous request was
 * out): `begin()` at the start of each call returns `current()`, true until
 * a later call begins, so an earlier answer arriving last is dropped instead
 * of replacing the newer one.
 */
export function useLatestCall(): () => () => boolean {
  const last = useRef(0);
  return useCallback(() => {
    const mine = ++last.current;
    return () => mine === last.current;
  }, []);
}

import { useEffect, useRef } from 'react';

/**
 * Calls `load` now and every `everyMs` while the tab is visible (the dashboard's live data); stops on unmount.
 * A change of `key` (what is loaded, e.g. a chosen time range) loads again at once and restarts the period.
 */
export function usePolling(load: () => Promise<void>, everyMs: number, key: unknown = null): void {
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    let stopped = false;
    let timer = 0;
    const tick = async () => {
      if (document.visibilityState === 'visible') await latest.current().catch(() => {});
      if (!stopped) timer = window.setTimeout(() => void tick(), everyMs);
    };
    void tick();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [everyMs, key]);
}

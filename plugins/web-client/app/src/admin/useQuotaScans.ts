import { useRef, useState } from 'react';
import { usePolling } from './usePolling';

/**
 * The quota scans started from a page (users or virtual folders): a name is
 * "scanning" from its start until the server's list of running scans no
 * longer holds it (read every `everyMs` while any is scanning); then its
 * `onEnd` runs (e.g. the used quota read again).
 */
export function useQuotaScans(running: () => Promise<string[] | null>, everyMs = 1000): { scanning: string[]; started(name: string, onEnd: () => void): void } {
  const [scanning, setScanning] = useState<string[]>([]);
  const ends = useRef(new Map<string, () => void>());
  usePolling(
    async () => {
      if (ends.current.size === 0) return;
      const now = await running();
      if (!now) return;
      for (const [name, onEnd] of [...ends.current]) {
        if (now.includes(name)) continue;
        ends.current.delete(name);
        onEnd();
      }
      setScanning([...ends.current.keys()]);
    },
    everyMs,
    scanning.length > 0,
  );
  return {
    scanning,
    started(name, onEnd) {
      ends.current.set(name, onEnd);
      setScanning([...ends.current.keys()]);
    },
  };
}

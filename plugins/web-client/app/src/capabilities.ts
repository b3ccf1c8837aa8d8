/** The capabilities of a folder (GET /api/v2/user/capabilities): the actions allowed there and the quota. */
import { useCallback, useEffect, useState } from 'react';
import { capabilities } from './early';
import { allowedActions, NOTHING, type Allowed } from './permissions';

export interface Quota {
  size: { used: number; limit: number };
  files: { used: number; limit: number };
}

export interface Capabilities {
  allowed: Allowed;
  webClient: string[];
  quota: Quota | null;
  reload(): void;
}

/** The capabilities of folder `dir`, read again on `reload()` (after a change of its contents). */
export function useCapabilities(dir: string): Capabilities {
  const [state, setState] = useState<{ allowed: Allowed; webClient: string[]; quota: Quota | null }>({ allowed: NOTHING, webClient: [], quota: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    void capabilities(dir).then(({ data }) => {
      if (!live) return;
      if (data) setState({ allowed: allowedActions(data.permissions, data.web_client), webClient: data.web_client, quota: data.quota });
      else setState({ allowed: NOTHING, webClient: [], quota: null });
    });
    return () => {
      live = false;
    };
  }, [dir, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

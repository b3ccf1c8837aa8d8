/** The names of existing objects a name input suggests (a datalist: any name can still be typed; the server checks it). */
import { useEffect, useState } from 'react';

/** How many names are suggested: the first ones of the list. */
export const SUGGESTED = 500;

/** The names `load` gives once `enabled` (the admin may list them); none while loading or when refused. */
export function useKnownNames(enabled: boolean, load: () => Promise<string[] | undefined>): string[] {
  const [known, setKnown] = useState<string[]>([]);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    void load().then((names) => {
      if (live) setKnown(names ?? []);
    });
    return () => {
      live = false;
    };
  }, [enabled, load]);
  return known;
}

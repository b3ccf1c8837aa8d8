/** Sorting and filtering of a directory listing (pure: unit-tested under node). */
export interface Entry {
  name: string;
  size: number;
  mode: number;
  last_modified: string;
}

export type SortKey = 'name' | 'size' | 'modified';
export interface Sort {
  key: SortKey;
  asc: boolean;
}

/** A directory: Unix mode bits with the file type S_IFDIR (0o040000), as the API lists it. */
export const isDir = (e: Entry): boolean => (e.mode & 0o170000) === 0o040000;

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** Folders first, then files, each by the sort key (names compared as a person reads them). */
export function sortEntries(list: readonly Entry[], sort: Sort): Entry[] {
  const dir = sort.asc ? 1 : -1;
  const key = (a: Entry, b: Entry): number => {
    if (sort.key === 'size') return a.size - b.size;
    if (sort.key === 'modified') return Date.parse(a.last_modified) - Date.parse(b.last_modified);
    return 0;
  };
  return [...list].sort((a, b) => {
    const d = Number(isDir(b)) - Number(isDir(a));
    if (d) return d;
    return (key(a, b) || collator.compare(a.name, b.name)) * dir;
  });
}

export function filterEntries(list: readonly Entry[], filter: string): Entry[] {
  const f = filter.trim().toLocaleLowerCase();
  return f ? list.filter((e) => e.name.toLocaleLowerCase().includes(f)) : [...list];
}

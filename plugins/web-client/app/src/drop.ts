/**
 * Files and folders a user picks or drops, as relative paths: the folder
 * picker (`<input webkitdirectory>`, webkitRelativePath) and drag and drop
 * (DataTransferItem.webkitGetAsEntry, walked recursively).
 */

/** A picked file and its path relative to the drop (`dir/sub/name`). */
export interface PickedFile {
  file: File;
  path: string;
}

/** What was picked: the files and every directory (relative paths, parents first). */
export interface Picked {
  files: PickedFile[];
  dirs: string[];
  /** Dropped entries the browser could not read (gone or changed since the drop), with the reason: the others still go. */
  unreadable?: { path: string; error: string }[];
}

/** The part of FileSystemEntry this module uses (so tests can walk a tree of plain objects). */
export interface EntryLike {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  file?(ok: (f: File) => void, fail?: (e: unknown) => void): void;
  createReader?(): { readEntries(ok: (entries: EntryLike[]) => void, fail?: (e: unknown) => void): void };
}

const fileOf = (e: EntryLike) => new Promise<File>((resolve, reject) => e.file!(resolve, reject));

/** Every child of a directory entry (readEntries answers in batches until an empty one). */
async function children(e: EntryLike): Promise<EntryLike[]> {
  const reader = e.createReader!();
  const out: EntryLike[] = [];
  for (;;) {
    const batch = await new Promise<EntryLike[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) return out;
    out.push(...batch);
  }
}

const reason = (err: unknown) => (err instanceof Error ? err.message || err.name : String(err));

/** Walks dropped entries depth-first: their files and directories with relative paths (an entry that cannot be read is told in `unreadable`). */
export async function walkEntries(entries: EntryLike[], prefix = ''): Promise<Picked> {
  const picked: Picked = { files: [], dirs: [] };
  const unreadable = (path: string, err: unknown) => (picked.unreadable ??= []).push({ path, error: reason(err) });
  for (const e of entries) {
    const path = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory && e.createReader) {
      let kids: EntryLike[];
      try {
        kids = await children(e);
      } catch (err) {
        unreadable(path, err);
        continue;
      }
      picked.dirs.push(path);
      const sub = await walkEntries(kids, path);
      picked.files.push(...sub.files);
      picked.dirs.push(...sub.dirs);
      for (const u of sub.unreadable ?? []) unreadable(u.path, new Error(u.error));
    } else if (e.isFile && e.file) {
      try {
        picked.files.push({ file: await fileOf(e), path });
      } catch (err) {
        unreadable(path, err);
      }
    }
  }
  return picked;
}

/** What a drop holds: entries when the browser gives them (folders), else its plain files. */
export async function fromDataTransfer(dt: DataTransfer): Promise<Picked> {
  // entries must be taken during the drop event, before any await
  const entries = Array.from(dt.items).map((i) => (i.kind === 'file' ? (i.webkitGetAsEntry?.() as EntryLike | null) : null));
  if (entries.length && entries.every((e) => e)) return walkEntries(entries as EntryLike[]);
  return fromFiles(Array.from(dt.files));
}

/** Files of an input (a folder picker's carry webkitRelativePath), with their directories. */
export function fromFiles(files: File[]): Picked {
  const dirs = new Set<string>();
  const picked = files.map((file) => {
    const path = file.webkitRelativePath || file.name;
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    return { file, path };
  });
  return { files: picked, dirs: [...dirs].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b)) };
}

/** Directories that hold no picked file, however deep (they must be made on their own; the others come with their files). */
export function emptyDirs(p: Picked): string[] {
  const used = new Set<string>();
  for (const f of p.files) {
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) used.add(parts.slice(0, i).join('/'));
  }
  const empty = p.dirs.filter((d) => !used.has(d));
  // only the deepest: their parents come with them (mkdir_parents)
  return empty.filter((d) => !empty.some((o) => o.startsWith(`${d}/`)));
}

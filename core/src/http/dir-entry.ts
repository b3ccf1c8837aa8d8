import type { FileInfo } from '../fs/fs.contract.js';

/** A DirEntry as the REST API renders it (GET /user/dirs, GET /shares/{id}/dirs). */
export interface DirEntry {
  name: string;
  size: number;
  mode: number;
  last_modified: string;
}

export function toDirEntry(i: FileInfo): DirEntry {
  return { name: i.name, size: i.isDir ? 0 : i.size, mode: i.mode, last_modified: i.mtime.toISOString() };
}

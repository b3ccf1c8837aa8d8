/**
 * The paths and URLs of actions on a selection of entries: where an entry
 * goes, what may not be done, the zip of a selection (pure: unit-tested
 * under node; the requests are in file-actions.ts).
 */
import { joinPath } from './format.js';

/** One entry of a selection: its full path and whether it is a folder. */
export interface Target {
  path: string;
  dir: boolean;
}

/** What an action did to one entry: nothing to say, or why it failed. */
export interface Outcome {
  path: string;
  error?: string;
}

export type BulkAction = 'move' | 'copy' | 'delete';

/** The last segment of a path. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The parent folder of a path ('/' for a top-level entry). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Where `path` goes when moved or copied into folder `dir`. */
export function destinationOf(path: string, dir: string): string {
  return joinPath(dir, baseName(path));
}

/**
 * Why `path` cannot go into `dir`, or '' when it can: into the folder it is
 * already in (move), or into itself or one of its own subfolders (a folder).
 */
export function placementProblem(path: string, dir: string, action: 'move' | 'copy'): 'same-folder' | 'into-itself' | '' {
  if (dir === path || dir.startsWith(`${path}/`)) return 'into-itself';
  if (action === 'move' && parentOf(path) === dir) return 'same-folder';
  return '';
}

/** The URL of a zip of `paths` (GET /api/v2/user/streamzip, repeated `path`): a link the browser streams to disk. */
export function zipUrl(paths: readonly string[]): string {
  const q = new URLSearchParams();
  for (const p of paths) q.append('path', p);
  return `/api/v2/user/streamzip?${q.toString()}`;
}

/** The failed outcomes only. */
export const failures = (outcomes: readonly Outcome[]): Outcome[] => outcomes.filter((o) => o.error !== undefined);

/**
 * Actions on a selection of entries (move, copy, delete), one REST request
 * per entry; the URL of a file (a download, or inline for previews); the
 * checksum of a file.
 */
import { api, errorMessage, routeUrl } from './api';
import { destinationOf, type BulkAction, type Outcome, type Target } from './file-paths';

/** The URL of a file's bytes: a download (attachment) or, `inline`, for the browser to show. */
export function fileUrl(path: string, inline = false): string {
  return routeUrl('/api/v2/user/files', 'get', inline ? { path, inline: true } : { path });
}

type Answer = { error?: unknown; response: Response };

function request(action: BulkAction, t: Target, dir: string): Promise<Answer> {
  if (action === 'delete') {
    const query = { path: t.path };
    return t.dir ? api.DELETE('/api/v2/user/dirs', { params: { query } }) : api.DELETE('/api/v2/user/files', { params: { query } });
  }
  const query = { path: t.path, target: destinationOf(t.path, dir) };
  return action === 'move'
    ? api.POST('/api/v2/user/file-actions/move', { params: { query } })
    : api.POST('/api/v2/user/file-actions/copy', { params: { query } });
}

/**
 * Runs `action` on each target in turn (into folder `dir` for a move or a
 * copy) and tells, per entry, whether it failed and why: one refusal does
 * not stop the others.
 */
export async function runBulk(action: BulkAction, targets: readonly Target[], dir = '/', onProgress?: (done: number) => void): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const t of targets) {
    try {
      const { error, response } = await request(action, t, dir);
      out.push(response.ok ? { path: t.path } : { path: t.path, error: errorMessage(error, `HTTP ${response.status}`) });
    } catch (err) {
      out.push({ path: t.path, error: err instanceof Error ? err.message : String(err) });
    }
    onProgress?.(out.length);
  }
  return out;
}

export type ChecksumAlgo = 'sha256' | 'md5';

/** The checksum of a file, computed by the server as it streams the file (GET /api/v2/user/files/checksum). */
export async function checksumOf(path: string, algo: ChecksumAlgo): Promise<{ checksum: string } | { error: string }> {
  const { data, error, response } = await api.GET('/api/v2/user/files/checksum', { params: { query: { path, algo } } });
  return data ? { checksum: data.checksum } : { error: errorMessage(error, `HTTP ${response.status}`) };
}

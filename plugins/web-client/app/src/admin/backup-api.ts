/** The backup routes of the admin API (GET /api/v2/dumpdata, POST /api/v2/loaddata: admins with "*" and no role). */
import { getCsrfToken, routeUrl, xhrError } from '../api';
import { t } from './strings';

export type RestoreMode = 0 | 1 | 2;
export const RESTORE_MODES: readonly RestoreMode[] = [0, 1, 2];

/** The URL that downloads the whole backup as JSON (the session cookie authenticates it). */
export const backupUrl = (): string => routeUrl('/api/v2/dumpdata', 'get', { 'output-data': 1, indent: 1 });

/**
 * Sends a backup file to POST /api/v2/loaddata as it is (streamed by the
 * browser, not parsed here): the server's answer, or why it refused.
 */
export async function restoreBackup(file: Blob, mode: RestoreMode): Promise<{ ok: boolean; message: string }> {
  try {
    const r = await fetch(routeUrl('/api/v2/loaddata', 'post', { mode }), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': getCsrfToken() },
      body: file,
    });
    const text = await r.text();
    if (!r.ok) return { ok: false, message: xhrError(r.status, text) };
    return { ok: true, message: (JSON.parse(text) as { message: string }).message };
  } catch {
    return { ok: false, message: t.actionFailed('network') };
  }
}

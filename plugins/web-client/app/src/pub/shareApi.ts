/**
 * The REST calls of a public share page (no user session): the share web
 * session (POST/GET /api/v2/shares/{id}/web-session sets the HttpOnly cookie
 * ferry_share_<id>; its CSRF token goes with every state-changing request),
 * listings, download links and uploads (TUS when the binding offers it, else
 * one request per file), each with its progress.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { operations } from '../../generated/api';
import { answerMessage, errorMessage, postWithProgress, routeUrl, type Paths, type UploadHandle } from '../api';
import { tusChunkSize, tusUpload, type TusTarget } from '../tus';
import type { UploadBackend } from '../upload-queue';

export type PublicShare = operations['get_api_v2_shares_id_web_session']['responses'][200]['content']['application/json']['share'];
export type Refusal = 'expired' | 'address' | 'denied';

/** What the share answered: open (its description), credentials wanted, access refused, or no such share. */
export type ShareState =
  | { kind: 'open'; share: PublicShare }
  | { kind: 'credentials'; password: boolean; emailCodes: boolean; message: string }
  | { kind: 'refused'; reason: Refusal; message: string }
  | { kind: 'not-found' }
  | { kind: 'error'; status: number; message: string };

let csrfToken = '';

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
};

const api = createClient<Paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(csrf);

function stateOf(status: number, body: unknown, data: { share: PublicShare; csrf_token?: string } | undefined): ShareState {
  if (data) {
    csrfToken = data.csrf_token ?? '';
    return { kind: 'open', share: data.share };
  }
  const b = (body ?? {}) as { password_required?: boolean; email_codes?: boolean; reason?: Refusal };
  const message = errorMessage(body, '');
  if (status === 401) return { kind: 'credentials', password: !!b.password_required, emailCodes: !!b.email_codes, message };
  if (status === 403) return { kind: 'refused', reason: b.reason ?? 'denied', message };
  if (status === 404) return { kind: 'not-found' };
  return { kind: 'error', status, message };
}

/** The share as the cookie (or no credentials) opens it; renews the session. */
export async function shareState(id: string): Promise<ShareState> {
  const { data, error, response } = await api.GET('/api/v2/shares/{id}/web-session', { params: { path: { id } } });
  return stateOf(response.status, error, data);
}

/** Opens a share web session with the password, or an address and its one-time code. */
export async function openShare(id: string, creds: { password: string } | { email: string; code: string }): Promise<ShareState> {
  const { data, error, response } = await api.POST('/api/v2/shares/{id}/web-session', { params: { path: { id } }, body: creds });
  return stateOf(response.status, error, data);
}

/** Asks for a one-time code mailed to `email` (the same answer whether or not the address is allowed); an error message or null. */
export async function requestCode(id: string, email: string): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/shares/{id}/codes', { params: { path: { id } }, body: { email } });
  return response.ok ? null : errorMessage(error, `HTTP ${response.status}`);
}

/** The folder `dir` of the share: its entries, or the status and message of the refusal (400: not a one-folder share). */
export async function listDir(id: string, dir: string) {
  const { data, error, response } = await api.GET('/api/v2/shares/{id}/dirs', { params: { path: { id }, query: { path: dir } } });
  return { entries: data, status: response.status, message: errorMessage(error, `HTTP ${response.status}`) };
}

const enc = encodeURIComponent;
/** Link to one file of the share. */
export const fileUrl = (id: string, path: string): string => routeUrl(`/api/v2/shares/${enc(id)}/files` as '/api/v2/shares/{id}/files', 'get', { path });
/** Link to the whole share (a zip, or the file itself for a share of one file), or to one folder of it zipped. */
export const shareUrl = (id: string, compress: boolean, folder?: string): string =>
  routeUrl(`/api/v2/shares/${enc(id)}` as '/api/v2/shares/{id}', 'get', { compress, path: folder });

/** Uploads of the share go with its web session's CSRF token; `share_id` names the share. */
const shareTus = (id: string): TusTarget => ({
  endpoint: '/api/v2/shares-chunked-uploads',
  meta: { share_id: id },
  csrf: () => csrfToken || undefined,
  message: answerMessage,
});

/**
 * Uploads `file` to `path` (relative to the share's folder): resumable over
 * TUS in chunks when the binding offers it (a cancel deletes what the server
 * holds), else in one POST /api/v2/shares/{id}/files/{path}.
 */
export function uploadToShare(id: string, path: string, file: File, onProgress: (sent: number) => void): UploadHandle {
  let inner: UploadHandle | undefined;
  let cancelled = false;
  const done = (async () => {
    const target = shareTus(id);
    const chunk = await tusChunkSize(target.endpoint);
    if (cancelled) throw new Error('cancelled');
    if (chunk) {
      inner = tusUpload(path, file, { chunk, mkdirParents: false, target }, (sent) => onProgress(sent));
    } else {
      const url = `/api/v2/shares/${enc(id)}/files/${path.split('/').filter(Boolean).map(enc).join('/')}`;
      const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
      if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
      inner = postWithProgress(url, file, headers, (sent) => onProgress(sent), answerMessage);
    }
    return inner.done;
  })();
  return {
    done,
    abort() {
      cancelled = true;
      inner?.abort();
    },
  };
}

/**
 * The upload queue's server side for a share (Uploads.tsx useUploads): names
 * from the listing where the share is readable (none otherwise: a write-only
 * share shows nothing, so no conflict is asked), no overwrite offered,
 * folders made with the share's mkdir, files sent by uploadToShare.
 */
export function shareUploads(id: string, readable: boolean): UploadBackend {
  const mkdir = async (path: string) => {
    const { response } = await api.POST('/api/v2/shares/{id}/actions/mkdir', { params: { path: { id }, query: { path, mkdir_parents: true } } });
    // 409: it exists already
    if (!response.ok && response.status !== 409) throw new Error(`HTTP ${response.status}`);
  };
  return {
    async names(dir) {
      if (!readable) return new Set();
      const { entries } = await listDir(id, dir);
      return new Set((entries ?? []).map((e) => e.name));
    },
    canOverwrite: async () => false,
    mkdir,
    send(dest, file, onProgress, mkdirParents) {
      const parent = dest.slice(0, dest.lastIndexOf('/'));
      if (!mkdirParents || !parent) return uploadToShare(id, dest, file, onProgress);
      let inner: UploadHandle | undefined;
      let aborted = false;
      const done = (async () => {
        await mkdir(parent);
        if (aborted) throw new Error('cancelled');
        inner = uploadToShare(id, dest, file, onProgress);
        return inner.done;
      })();
      return {
        done,
        abort() {
          aborted = true;
          inner?.abort();
        },
      };
    },
  };
}

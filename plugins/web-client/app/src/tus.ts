/**
 * Resumable uploads of large files: TUS 1.0.0 on the user-side endpoint
 * (/api/v2/user/chunked-uploads) or a share's (/api/v2/shares-chunked-uploads,
 * the public share pages). The upload's URL is remembered in localStorage per
 * endpoint and file fingerprint (target, name, size, modification time; a URL
 * only, never a credential), so a network drop or a reload continues from the
 * server's offset; a cancelled upload is deleted on the server (termination).
 */
import { getCsrfToken, type Paths, type UploadHandle, xhrError } from './api';
import { fingerprint } from './upload-math';

/** Files larger than this go through TUS (when the server offers it); smaller ones in one request. */
export const TUS_THRESHOLD = 8 * 1024 * 1024;
/**
 * Chunks: the server's maximum. The server keeps what arrived of a cut chunk, so big chunks lose
 * nothing on a network error; and chromium sends a File whole about twice as fast as a slice of it
 * (bench/web-upload.bench.mjs), so a file that fits in one chunk goes unsliced.
 */
/** Waits before retrying after a network error (then the upload fails; picking the file again resumes it). */
const RETRY_MS = [500, 1000, 2000, 4000, 8000, 15000];

const STORE_PREFIX = 'ferry-tus:';

/**
 * Where uploads go: the endpoint, the metadata it needs besides the file's,
 * the CSRF token of the session they belong to, how a refusal is worded (and
 * acted on: a 401 ends the user's session).
 */
export interface TusTarget {
  endpoint: keyof Paths;
  meta?: Record<string, string>;
  csrf: () => string | undefined;
  message: (status: number, text: string) => string;
}

/** The signed-in user's uploads. */
export const USER_TUS: TusTarget = { endpoint: '/api/v2/user/chunked-uploads', csrf: getCsrfToken, message: xhrError };

const discovery = new Map<string, Promise<number>>();
/** The server's maximum chunk size on `endpoint`, 0 when resumable uploads are off on this binding. */
export function tusChunkSize(endpoint: keyof Paths = USER_TUS.endpoint): Promise<number> {
  let known = discovery.get(endpoint);
  if (!known) {
    known = fetch(endpoint, { method: 'OPTIONS', credentials: 'same-origin' })
      .then((r) => (r.ok ? Number(r.headers.get('Tus-Max-Chunk-Size')) || 0 : 0))
      .catch(() => {
        discovery.delete(endpoint);
        return 0;
      });
    discovery.set(endpoint, known);
  }
  return known;
}

const b64 = (s: string) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/** Uploads `file` to `dest` through TUS in chunks of `chunk` bytes; progress counts from the server's offset. */
export function tusUpload(
  dest: string,
  file: File,
  o: { chunk: number; mkdirParents: boolean; storage?: Storage; target?: TusTarget },
  onProgress: (sent: number, total: number) => void,
): UploadHandle {
  const { chunk, storage = localStorage, target = USER_TUS } = o;
  const key = STORE_PREFIX + (target === USER_TUS ? '' : JSON.stringify([target.endpoint, target.meta ?? {}])) + fingerprint(dest, file);
  const tusHeaders = (extra: Record<string, string> = {}): Headers => {
    const h = new Headers({ 'Tus-Resumable': '1.0.0', ...extra });
    const csrf = target.csrf();
    if (csrf) h.set('X-CSRF-Token', csrf);
    return h;
  };
  let xhr: XMLHttpRequest | undefined;
  let cancelled = false;
  let wake: (() => void) | undefined;

  /** The server's offset of a remembered upload, or undefined when it is gone (expired, finished elsewhere). */
  const offsetOf = async (url: string): Promise<number | undefined> => {
    const r = await fetch(url, { method: 'HEAD', headers: tusHeaders(), credentials: 'same-origin', cache: 'no-store' });
    if (r.status === 404 || r.status === 410) return undefined;
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    if (Number(r.headers.get('Upload-Length')) !== file.size) return undefined;
    return Number(r.headers.get('Upload-Offset'));
  };

  const createUpload = async (): Promise<string> => {
    const meta = Object.entries({ ...target.meta, path: dest, mtime: String(file.lastModified), mkdir_parents: String(o.mkdirParents) })
      .map(([k, v]) => `${k} ${b64(v)}`)
      .join(',');
    const r = await fetch(target.endpoint, {
      method: 'POST',
      credentials: 'same-origin',
      headers: tusHeaders({ 'Upload-Length': String(file.size), 'Upload-Metadata': meta }),
    });
    if (r.status !== 201) throw new Error(target.message(r.status, await r.text()));
    const url = new URL(r.headers.get('Location') ?? '', location.origin).pathname;
    storage.setItem(key, url);
    return url;
  };

  const sendChunk = (url: string, offset: number) =>
    new Promise<number>((resolve, reject) => {
      const req = new XMLHttpRequest();
      xhr = req;
      const end = Math.min(offset + chunk, file.size);
      const body = offset === 0 && end === file.size ? file : file.slice(offset, end);
      req.open('PATCH', url);
      tusHeaders({ 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }).forEach((v, k) => req.setRequestHeader(k, v));
      req.upload.onprogress = (e) => onProgress(offset + e.loaded, file.size);
      req.onload = () =>
        req.status === 204 ? resolve(Number(req.getResponseHeader('Upload-Offset'))) : reject(new Error(target.message(req.status, req.responseText)));
      req.onerror = () => reject(new TypeError('network error'));
      req.onabort = () => reject(new Cancelled());
      req.send(body);
    });

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        removeEventListener('online', done);
        wake = undefined;
        resolve();
      }
      addEventListener('online', done);
      wake = done;
    });

  const run = async () => {
    let url = storage.getItem(key) ?? undefined;
    let offset = url ? await offsetOf(url) : undefined;
    if (offset === undefined) {
      url = await createUpload();
      offset = 0;
    }
    onProgress(offset, file.size);
    let failures = 0;
    while (offset < file.size || file.size === 0) {
      if (cancelled) throw new Cancelled();
      try {
        offset = await sendChunk(url!, offset);
        failures = 0;
        if (file.size === 0) break;
      } catch (err) {
        if (cancelled || err instanceof Cancelled) throw new Cancelled();
        // a network error or a conflict (another tab, a cut chunk): wait, then ask the server where it is
        const retryable = err instanceof TypeError || /^HTTP 409\b|offset|another chunk/i.test((err as Error).message);
        if (!retryable || failures >= RETRY_MS.length) throw err;
        await pause(RETRY_MS[failures++]!);
        const now = await offsetOf(url!).catch(() => offset);
        if (now === undefined) throw new Error('the upload expired on the server');
        offset = now;
      }
    }
    storage.removeItem(key);
    onProgress(file.size, file.size);
  };

  const done = run().catch(async (err: unknown) => {
    if (err instanceof Cancelled || cancelled) {
      const url = storage.getItem(key);
      storage.removeItem(key);
      if (url) await fetch(url, { method: 'DELETE', headers: tusHeaders(), credentials: 'same-origin' }).catch(() => undefined);
      throw new Error('cancelled');
    }
    throw err;
  });
  return {
    done,
    abort() {
      cancelled = true;
      xhr?.abort();
      wake?.();
    },
  };
}

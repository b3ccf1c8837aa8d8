/**
 * The typed REST client: openapi-fetch over the types generated from Ferry's
 * OpenAPI document (generated/api.d.ts), so a route or schema change that
 * breaks a call fails the build's typecheck. The session is the HttpOnly
 * cookie `ferry_web` (the web admin's: `ferry_admin`; never readable here); state-changing requests carry
 * the CSRF token the session answered.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../generated/api';

export type Paths = paths;

let csrfToken = '';
/** Called when a session starts or is refreshed, and with '' at logout. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}
export function getCsrfToken(): string {
  return csrfToken;
}

let onSessionLost: () => void = () => {};
/** What to do when an authenticated request answers 401 (the session expired or was revoked). */
export function onUnauthorized(fn: () => void): void {
  onSessionLost = fn;
}

const session: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
  onResponse({ request, response }) {
    // a refused sign-in (POST) or a session check (GET) of either app's session route is no lost session
    if (response.status === 401 && !/\/(user|admin)\/web-session$/.test(new URL(request.url).pathname)) onSessionLost();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(session);
/** The same client without the lost-session hook: for reads sent before the session is known (early.ts), whose 401 means "not signed in". */
export const quietApi = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });

/** The message of an API error answer ({"message","error"}), or a fallback. */
export function errorMessage(body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && 'message' in body && typeof (body as { message: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return fallback;
}

/** Query parameters of a route, from the generated types. */
type QueryOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The URL of a route with its query (a typed path and query: for links and XHR uploads, which openapi-fetch does not make). */
export function routeUrl<P extends keyof paths, M extends keyof paths[P]>(path: P, _method: M, query: QueryOf<P, M>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) if (v !== undefined) q.set(k, String(v));
  return `${path}?${q.toString()}`;
}

export interface UploadHandle {
  done: Promise<void>;
  abort(): void;
}

/** The message of a failed XHR or fetch answer: the API's {"message"} when it sent one. */
export function xhrError(status: number, text: string): string {
  if (status === 401) onSessionLost();
  return answerMessage(status, text);
}

/** The message of an answer's JSON body (`HTTP <status>` when it has none), without acting on a 401. */
export function answerMessage(status: number, text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return errorMessage(body, `HTTP ${status}`);
}

/** One POST of `body` to `url` with these headers, its progress reported; `message` words a refusal. */
export function postWithProgress(
  url: string,
  body: Blob,
  headers: Record<string, string>,
  onProgress: (sent: number, total: number) => void,
  message: (status: number, text: string) => string = xhrError,
): UploadHandle {
  const xhr = new XMLHttpRequest();
  const done = new Promise<void>((resolve, reject) => {
    xhr.open('POST', url);
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error(message(xhr.status, xhr.responseText))));
    xhr.onerror = () => reject(new Error('network error'));
    xhr.onabort = () => reject(new Error('cancelled'));
    xhr.send(body);
  });
  return { done, abort: () => xhr.abort() };
}

/**
 * Uploads one file's bytes to `path` (POST /api/v2/user/files/upload) with
 * progress: XHR, since fetch reports no upload progress. `mkdirParents`
 * makes the missing folders (folder uploads); the file keeps its
 * modification time.
 */
export function uploadFile(path: string, file: Blob, onProgress: (sent: number, total: number) => void, o: { mkdirParents?: boolean } = {}): UploadHandle {
  const headers: Record<string, string> = { 'X-CSRF-Token': csrfToken, 'Content-Type': 'application/octet-stream' };
  if (file instanceof File) headers['X-SERVICE-MTIME'] = String(file.lastModified);
  return postWithProgress(routeUrl('/api/v2/user/files/upload', 'post', { path, mkdir_parents: o.mkdirParents || undefined }), file, headers, onProgress);
}

/**
 * TUS 1.0.0 (https://tus.io/protocols/resumable-upload) as Ferry speaks it on
 * /api/v2/shares-chunked-uploads and /api/v2/user/chunked-uploads: the header
 * rules, parsed and checked in one place (the routes: endpoint.ts).
 */
import type { Request, ResponseObject } from '@hapi/hapi';
import Boom from '@hapi/boom';
import type { HttpBinding } from '../../config/schema.js';
import { stringProblem } from '../../util/well-formed.js';

export const TUS_VERSION = '1.0.0';
export const TUS_PATH = '/api/v2/shares-chunked-uploads';
/** Resumable uploads of signed-in users (an addition to the API). */
export const USER_TUS_PATH = '/api/v2/user/chunked-uploads';
const MB = 1024 * 1024;

function header(request: Request, name: string): string | undefined {
  const v = request.headers[name] as string | string[] | undefined;
  return Array.isArray(v) ? v[0] : v;
}

/** Maximum chunk of a TUS upload on the request's binding (upload_chunk_size MB); 404 when TUS is off there. */
export function tusChunkSize(request: Request): number {
  const b = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
  if (!b?.upload_chunk_size) throw Boom.notFound('resumable uploads are not enabled on this binding');
  return b.upload_chunk_size * MB;
}

/**
 * The request's `Tus-Resumable` must be the version this server speaks: a
 * create is refused 400 (the API's answer to a bad create), HEAD and PATCH
 * 412 Precondition Failed, as TUS says; both carry `Tus-Version`.
 */
export function requireTusVersion(request: Request, status: 400 | 412): void {
  const sent = header(request, 'tus-resumable');
  if (sent === TUS_VERSION) return;
  const message =
    sent === undefined
      ? `"Tus-Resumable" is required (${TUS_VERSION})`
      : `"Tus-Resumable" ${JSON.stringify(sent)} is not supported: this server speaks ${TUS_VERSION}`;
  const err = status === 412 ? Boom.preconditionFailed(message) : Boom.badRequest(message);
  err.output.headers['Tus-Version'] = TUS_VERSION;
  throw err;
}

/** An unsigned integer header (up to 15 digits). */
export function intHeader(request: Request, name: string, label: string): number {
  const v = header(request, name);
  if (v === undefined || !/^\d{1,15}$/.test(v.trim())) throw Boom.badRequest(`"${label}" must be a non-negative integer`);
  return Number(v);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Upload-Metadata: comma-separated `key base64value` pairs (a key may come without value). */
export function tusMetadata(request: Request): Map<string, string> {
  const out = new Map<string, string>();
  const raw = header(request, 'upload-metadata') ?? '';
  for (const pair of raw.split(',')) {
    const item = pair.trim();
    if (!item) continue;
    const [key, value, extra] = item.split(/\s+/);
    if (!key || extra !== undefined || (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value))) {
      throw Boom.badRequest('"Upload-Metadata" must hold comma-separated "key base64value" pairs');
    }
    if (out.has(key)) throw Boom.badRequest(`"Upload-Metadata": "${key}" is sent twice`);
    let decoded = '';
    try {
      decoded = value === undefined ? '' : strictUtf8.decode(Buffer.from(value, 'base64'));
    } catch {
      throw Boom.badRequest(`"Upload-Metadata": "${key}" is not UTF-8`);
    }
    const problem = stringProblem(decoded);
    if (problem) throw Boom.badRequest(`"Upload-Metadata": "${key}" ${problem}`);
    out.set(key, decoded);
  }
  return out;
}

/** A body of a TUS request: `application/offset+octet-stream` (415 otherwise). */
export function requireChunkBody(request: Request): void {
  const type = (header(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/offset+octet-stream') throw Boom.unsupportedMediaType('chunks must be sent as application/offset+octet-stream');
}

/** `Upload-Offset` of an upload on a response (HEAD, PATCH, creation). */
export function withOffset(r: ResponseObject, offset: number): ResponseObject {
  return r.header('Upload-Offset', String(offset));
}

/**
 * Route extension of every TUS route: `Tus-Resumable` on every answer but
 * OPTIONS, error answers included (they are built by the server's error
 * handler, which keeps the headers of the error).
 */
export function tusResumableOnEveryAnswer(request: Request): void {
  if (request.method === 'options') return;
  const res = request.response;
  if (!res) return;
  if (Boom.isBoom(res)) res.output.headers['Tus-Resumable'] = TUS_VERSION;
  else (res as ResponseObject).header('Tus-Resumable', TUS_VERSION);
}

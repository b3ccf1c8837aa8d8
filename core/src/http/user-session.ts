import type { Request } from '@hapi/hapi';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream';
import Joi from 'joi';
import { clientIp, loadedUserOf, userOf } from './auth-strategies.js';
import type { CachedUser } from '../accounts/account-cache.js';
import { FileSessions } from '../vfs/file-sessions.service.js';
import type { FileSession } from '../vfs/file-session.js';
import type { DownloadStream } from '../vfs/downloads.js';
import { toWellFormed } from '../util/well-formed.js';
import { Protocol } from '../sdk/protocols.js';
import { onAbort } from '../sdk/signals.js';

/** Query `path` as clients send it (normalised and checked by the file session). */
export const pathQuery = Joi.string().allow('').max(4096);
export const boolQuery = Joi.boolean().truthy('1', 'true').falsy('0', 'false', '');

/**
 * Opens the file session of a user request. The session's signal fires when
 * the client goes away before the response is complete, or when an admin
 * closes the connection; in the latter case the socket is destroyed too, so
 * a running upload or download stops at once.
 */
export async function openUserSession(sessions: FileSessions, request: Request, command: string): Promise<FileSession> {
  const creds = userOf(request);
  const ip = clientIp(request);
  const key = creds.jti
    ? `jwt:${creds.jti}`
    : creds.webSession
      ? `web:${creds.webSession}`
      : creds.apiKeyId
        ? `key:${creds.apiKeyId}:${ip}`
        : `ip:${ip}:${creds.user.id}`;
  return openFileSession(
    sessions,
    request,
    { username: creds.user.username, key, protocol: Protocol.HTTP, loaded: loadedUserOf(request, creds.user.id) },
    command,
  );
}

/**
 * Opens a file session of `username` for a request; requests with the same
 * `key` share one connection. Public share requests use the share owner's
 * account with protocol HTTPShare.
 */
export async function openFileSession(
  sessions: FileSessions,
  request: Request,
  o: { username: string; key: string; protocol: typeof Protocol.HTTP | typeof Protocol.HTTPShare; loaded?: CachedUser },
  command: string,
): Promise<FileSession> {
  const ip = clientIp(request);
  const session = await sessions.open({
    username: o.username,
    loaded: o.loaded,
    ip,
    sessionKey: FileSessions.sessionKey([o.key]),
    protocol: o.protocol,
    clientVersion: String(request.headers['user-agent'] ?? '').slice(0, 255),
    command: `${request.method.toUpperCase()} ${command}`,
  });
  // the client going away aborts the session itself (no signal of its own: one fewer per request)
  const res = request.raw.res;
  const onClose = () => {
    if (!res.writableEnded) session.abort(new Error('the client went away'));
  };
  res.once('close', onClose);
  // the client may have gone while the session was opened (a share password check takes a while): no 'close' will come
  const req = request.raw.req;
  if (res.destroyed || req.readableAborted || req.socket?.destroyed === true) onClose();
  const offAdminClose = onAbort(session.conn.controller.signal, () => {
    // interrupt the exchange at once: the client sees the connection drop
    request.raw.req.socket?.destroy();
  });
  const close = session.close.bind(session);
  session.close = async () => {
    res.off('close', onClose);
    offAdminClose();
    await close();
  };
  return session;
}

/** Runs a handler with a session closed when it returns. */
export async function withUserSession<T>(sessions: FileSessions, request: Request, command: string, fn: (s: FileSession) => Promise<T>): Promise<T> {
  const s = await openUserSession(sessions, request, command);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** Closes a session once a response stream is done (consumed, failed or destroyed). */
export function closeAfter(s: FileSession, stream: Readable, extra?: Promise<unknown>): void {
  finished(stream, () => {
    void (async () => {
      await extra?.catch(() => undefined);
      await s.close();
    })();
  });
}

/**
 * The stream of a download as hapi's response payload: hapi hands a stream
 * payload to its writeToStream() when it has one, so a download opened with
 * `recycle` writes its chunks itself and gets its read buffers back once the
 * socket took them (DownloadStream.writeTo).
 */
export function hapiPayload(dl: DownloadStream): Readable {
  if (dl.writeTo) (dl.stream as Readable & { writeToStream?: (dest: Writable) => void }).writeToStream = dl.writeTo;
  return dl.stream;
}

/** Destroys a response stream when the client goes away, so the backend read stops. */
export function destroyOnDisconnect(request: Request, stream: Readable): void {
  const res = request.raw.res;
  const onClose = () => {
    if (!res.writableFinished && !stream.destroyed) stream.destroy();
  };
  res.once('close', onClose);
  finished(stream, () => res.off('close', onClose));
}

/** Files go out as stored: hapi must not gzip them (Content-Length and ranges stay exact). */
export function sendAsStored(request: Request): void {
  (request.info as { acceptEncoding: string }).acceptEncoding = 'identity';
}

/** Longest file name a Content-Disposition header suggests, in UTF-8 bytes (what file systems take). */
export const MAX_SUGGESTED_NAME_BYTES = 255;

/**
 * The name cut to MAX_SUGGESTED_NAME_BYTES at a character boundary, its extension (up to 16 characters) kept.
 * A stored name can be longer than any client takes in a header (a share name of 1 MiB made a 3 MiB
 * Content-Disposition: clients refused the answer after its 200 status line).
 */
function suggestedName(name: string): string {
  if (Buffer.byteLength(name) <= MAX_SUGGESTED_NAME_BYTES) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  const room = MAX_SUGGESTED_NAME_BYTES - Buffer.byteLength(ext);
  let kept = '';
  let bytes = 0;
  for (const ch of name.slice(0, Math.min(name.length - ext.length, room))) {
    if (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff') break; // half of a pair the cut split
    bytes += Buffer.byteLength(ch);
    if (bytes > room) break;
    kept += ch;
  }
  return kept + ext;
}

/** A file name safe in a Content-Disposition header: quoted ASCII fallback plus the RFC 5987 UTF-8 form, at most 255 bytes of name. */
export function contentDisposition(kind: 'attachment' | 'inline', fileName: string): string {
  const name = suggestedName(fileName);
  const fallback = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_') || 'download';
  const encoded = encodeURIComponent(toWellFormed(name)).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

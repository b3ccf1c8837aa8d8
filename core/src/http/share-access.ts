import type { Request } from '@hapi/hapi';
import Boom from '@hapi/boom';
import type { DependencyContainer } from 'tsyringe';
import { clientIp } from './auth-strategies.js';
import { FsError, FsErrorCode } from '../fs/fs-error.js';
import { normalizeVirtualPath, parentPath } from '../fs/path.js';
import type { Share } from '../data/entities/index.js';
import { FileSessions } from '../vfs/file-sessions.service.js';
import { ShareService, type ShareCredentials } from '../shares/share.service.js';
import type { FileSession } from '../vfs/file-session.js';
import { openFileSession } from './user-session.js';
import { Protocol } from '../sdk/protocols.js';
import { shareCookieOf } from './share-web-session.js';
import { CSRF_HEADER } from './web-session.js';

/**
 * The credentials of a public share request: HTTP basic (the password, or an
 * allowed address and its one-time code) or a share token (Bearer).
 */
export function basicCredentials(request: Request): ShareCredentials {
  const h = request.headers.authorization;
  if (typeof h !== 'string') return {};
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (bearer) return { bearer: bearer[1]! };
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(h);
  if (!m) return {};
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? {} : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

const SAFE_METHODS = new Set(['get', 'head', 'options']);

/**
 * The credentials of a request on share `id`: the Authorization header
 * (basic or bearer) when it has one, else the share's web session cookie
 * (share-web-session.ts) with the request's X-CSRF-Token when the request
 * changes something.
 */
export function shareCredentials(request: Request, id: string): ShareCredentials {
  if (request.headers.authorization !== undefined) return basicCredentials(request);
  const token = shareCookieOf(request, id);
  if (!token) return {};
  const sent = request.headers[CSRF_HEADER];
  const csrf = SAFE_METHODS.has(request.method) ? null : typeof sent === 'string' ? sent : '';
  return { web: { token, csrf } };
}

/** A path sent to a public share route, inside the share's directory (relative to it whether or not it starts with a separator). */
export function insideShare(root: string, rel: string | undefined): string {
  const p = normalizeVirtualPath(rel);
  if (p === '/') return root;
  return root === '/' ? p : root + p;
}

/** The share's directory, for the routes that need a share of exactly one directory. */
export async function shareDir(s: FileSession, share: Share): Promise<string> {
  const root = share.paths.length === 1 ? share.paths[0]! : undefined;
  const info = root ? await s.vfs.statOrNull(root, { signal: s.signal }) : null;
  if (!root || !info?.isDir) throw Boom.badRequest('this operation needs a share of exactly one directory');
  return root;
}

/**
 * Refuses now what storing `vpath` would refuse (name, permission, a missing
 * parent directory, a directory in the way), so that a refused upload takes
 * no use of the share.
 */
export async function uploadCheck(s: FileSession, vpath: string): Promise<void> {
  s.ensureWritable();
  s.checkName(vpath, 'write');
  const [existing, parent] = await Promise.all([s.vfs.statOrNull(vpath, { signal: s.signal }), s.vfs.statOrNull(parentPath(vpath), { signal: s.signal })]);
  if (existing?.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  if (!parent?.isDir) throw new FsError(FsErrorCode.NotFound, `${parentPath(vpath)}: the parent directory does not exist`, { path: vpath });
  s.requirePerm(parentPath(vpath), existing ? `overwriting ${vpath}` : `uploading to ${vpath}`, existing ? 'overwrite' : 'upload');
}

export interface ShareAccess {
  shares: ShareService;
  /**
   * Checks a public request on share `id` (address, password, expiration,
   * scope, uses unless `ignoreTokens`) and opens a file session of the
   * share's owner (protocol HTTPShare); the caller closes it.
   */
  open(
    request: Request,
    id: string,
    scopeOk: (scope: number) => boolean,
    command: string,
    o?: { ignoreTokens?: boolean },
  ): Promise<{ share: Share; s: FileSession }>;
}

/**
 * How the public share routes and the TUS uploads reach a share: public
 * requests work on the owner's files through a file session of the owner, so
 * the owner's permissions, file patterns, quotas, limits and events apply.
 */
export function shareAccess(c: DependencyContainer): ShareAccess {
  const shares = c.resolve(ShareService);
  const sessions = c.resolve(FileSessions);
  return {
    shares,
    async open(request, id, scopeOk, command, o = {}) {
      const ip = clientIp(request);
      const { share, owner } = await shares.authorize(id, ip, shareCredentials(request, id), scopeOk, { ...o, protocol: Protocol.HTTPShare });
      const s = await openFileSession(
        sessions,
        request,
        { username: owner.username, key: `share:${share.share_id}:${ip}`, protocol: Protocol.HTTPShare },
        `${command} share ${share.share_id}`,
      );
      return { share, s };
    },
  };
}

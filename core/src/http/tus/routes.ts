import { Protocol } from '../../sdk/protocols.js';
import type { ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import type { DependencyContainer } from 'tsyringe';
import { canWrite } from '../../shares/share.service.js';
import type { ChunkedUpload } from '../../vfs/chunked-uploads.service.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { shareId } from '../../shares/share.input.js';
import { clientIp, USER_AUTH, userOf } from '../auth-strategies.js';
import { insideShare, shareAccess, shareCredentials, shareDir } from '../share-access.js';
import { openUserSession } from '../user-session.js';
import { tusEndpoint } from './endpoint.js';
import { TUS_PATH, USER_TUS_PATH } from './protocol.js';

const unknownUpload = () => Boom.notFound('unknown or expired upload');

/** The share of a share upload (404 for a user's upload). */
function shareOf(u: ChunkedUpload): string {
  if (!u.owner.startsWith('share:')) throw unknownUpload();
  return u.owner.slice('share:'.length);
}

/**
 * Resumable uploads (TUS 1.0.0, tusEndpoint) on bindings whose
 * upload_chunk_size > 0:
 * - to shares, /api/v2/shares-chunked-uploads: no hapi auth, the share
 *   password (when the share has one) comes with every request; the share's
 *   use is taken once, at creation; the file is stored with the share owner's
 *   permissions, quotas and events; termination (DELETE, an addition) with
 *   the same credentials;
 * - of signed-in users (an addition to the API), /api/v2/user/chunked-uploads:
 *   a bearer token, an API key or the web session cookie (with X-CSRF-Token);
 *   `path` is the user's virtual path; termination (DELETE) too. An upload is
 *   continued only by its user.
 */
export function tusRoutes(c: DependencyContainer): ServerRoute[] {
  const access = shareAccess(c);
  const { shares } = access;
  const sessions = c.resolve(FileSessions);

  const shareRoutes = tusEndpoint(c, {
    path: TUS_PATH,
    auth: false,
    // termination is an addition: the share's credentials (or its web session) cancel an upload to it
    extensions: ['creation', 'creation-with-upload', 'termination'],
    async begin(request, meta, target) {
      const id = meta.get('share_id');
      if (!id) throw Boom.badRequest('"Upload-Metadata": "share_id" is required');
      if (shareId.validate(id).error) throw Boom.badRequest('"Upload-Metadata": "share_id" is not a share id');
      const { share, s } = await access.open(request, id, canWrite, 'upload');
      try {
        return { s, dest: insideShare(await shareDir(s, share), target.path), owner: `share:${id}`, commit: () => shares.consume(id) };
      } catch (err) {
        await s.close();
        throw err;
      }
    },
    async resume(request, u) {
      const { share, s } = await access.open(request, shareOf(u), canWrite, 'upload', { ignoreTokens: true });
      try {
        return { s, dest: insideShare(await shareDir(s, share), u.path) };
      } catch (err) {
        await s.close();
        throw err;
      }
    },
    async authorize(request, u) {
      await shares.authorize(shareOf(u), clientIp(request), shareCredentials(request, shareOf(u)), canWrite, {
        protocol: Protocol.HTTPShare,
        ignoreTokens: true,
      });
    },
  });

  const ownUpload = (request: Parameters<typeof userOf>[0], u: ChunkedUpload) => {
    if (u.owner !== `user:${userOf(request).user.username}`) throw unknownUpload();
  };
  const userSession = async (request: Parameters<typeof userOf>[0], rel: string) => {
    const s = await openUserSession(sessions, request, `upload ${rel}`);
    try {
      return { s, dest: s.path(rel) };
    } catch (err) {
      await s.close();
      throw err;
    }
  };
  const userRoutes = tusEndpoint(c, {
    path: USER_TUS_PATH,
    auth: USER_AUTH,
    extensions: ['creation', 'creation-with-upload', 'termination'],
    async begin(request, _meta, target) {
      return { ...(await userSession(request, target.path)), owner: `user:${userOf(request).user.username}` };
    },
    async resume(request, u) {
      ownUpload(request, u);
      return userSession(request, u.path);
    },
    authorize: async (request, u) => ownUpload(request, u),
  });
  return [...shareRoutes, ...userRoutes];
}

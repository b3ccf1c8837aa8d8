import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { clientIp, USER_AUTH, userOf } from '../../auth/strategies.js';
import { FsError, FsErrorCode } from '../../fs/fs-error.js';
import { normalizeVirtualPath } from '../../fs/path.js';
import type { Share } from '../../data/entities/index.js';
import { FileSessions } from '../../services/file-sessions.service.js';
import { canRead, canWrite, ShareService, type ShareCredentials } from '../../services/share.service.js';
import type { FileSession } from '../../vfs/file-session.js';
import { streamZip, uploadFile } from '../../vfs/transfers.js';
import { actorOf } from '../server.js';
import { listParams, listQuery, pathParam } from '../schemas/common.js';
import { shareId, shareInput, sharePathQuery, type ShareInput } from '../schemas/shares.js';
import { boolQuery, closeAfter, contentDisposition, destroyOnDisconnect, openFileSession, pathQuery, sendAsStored, withUserSession } from '../user-session.js';
import { jsonArray } from './user-dirs.js';
import { declaredLength, mtimeHeader, receiveMultipart, sendFile, STREAMED_PAYLOAD } from './user-files.js';

const idParams = Joi.object({ id: shareId.required() });

/** The password of an HTTP basic Authorization header (the user name is not checked). */
function basicCredentials(request: Request): ShareCredentials {
  const h = request.headers.authorization;
  const m = typeof h === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(h) : null;
  if (!m) return {};
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? {} : { password: decoded.slice(colon + 1) };
}

/** A path sent to a public share route, inside the share's directory (relative to it whether or not it starts with a separator). */
function insideShare(root: string, rel: string | undefined): string {
  const p = normalizeVirtualPath(rel);
  if (p === '/') return root;
  return root === '/' ? p : root + p;
}

/** The share's directory, for the routes that need a share of exactly one directory. */
async function shareDir(s: FileSession, share: Share): Promise<string> {
  const root = share.paths.length === 1 ? share.paths[0]! : undefined;
  const info = root ? await s.vfs.statOrNull(root, { signal: s.signal }) : null;
  if (!root || !info?.isDir) throw Boom.badRequest('this operation needs a share of exactly one directory');
  return root;
}

/**
 * /user/shares (the owner's share management, user JWT or API key) and the
 * public /shares routes (basic authentication with the share password when
 * the share has one). Public requests work on the owner's files through a
 * file session of the owner (protocol HTTPShare): the owner's permissions,
 * file patterns, quotas, limits and events apply.
 */
export function shareRoutes(c: DependencyContainer): ServerRoute[] {
  const shares = c.resolve(ShareService);
  const sessions = c.resolve(FileSessions);

  /** A download takes one use of the share once the file is checked (a HEAD request takes none). */
  const useOf = (request: Request, share: Share) => (request.method === 'head' ? undefined : () => shares.consume(share.share_id));

  /** Checks a public request and opens a file session of the share's owner. */
  const publicSession = async (request: Request, scopeOk: (scope: number) => boolean, command: string) => {
    const id = pathParam(request, 'id');
    const ip = clientIp(request);
    const { share, owner } = await shares.authorize(id, ip, basicCredentials(request), scopeOk);
    const s = await openFileSession(sessions, request, { username: owner.username, key: `share:${id}:${ip}`, protocol: 'HTTPShare' }, `${command} share ${id}`);
    return { share, s };
  };

  /** Runs `fn` in a public session closed when it returns. */
  const withShare = async <T>(request: Request, scopeOk: (scope: number) => boolean, command: string, fn: (share: Share, s: FileSession) => Promise<T>): Promise<T> => {
    const { share, s } = await publicSession(request, scopeOk, command);
    try {
      return await fn(share, s);
    } finally {
      await s.close();
    }
  };

  const downloadAll = async (request: Request, h: ResponseToolkit) => {
    const q = request.query as { compress: boolean };
    const { share, s } = await publicSession(request, canRead, 'download');
    try {
      const single = share.paths.length === 1 ? await s.vfs.statOrNull(share.paths[0]!, { signal: s.signal }) : null;
      if (!q.compress && single && !single.isDir) {
        return await sendFile(request, h, s, share.paths[0]!, { ready: useOf(request, share) });
      }
      // a zip leaves out what the owner may not download: the shared directories themselves must allow it
      for (const p of share.paths) {
        const info = await s.vfs.stat(p, { signal: s.signal });
        if (info.isDir) s.requirePerm(p, `downloading ${p}`, 'download');
      }
      const disposition = contentDisposition('attachment', `${share.name}.zip`);
      if (request.method === 'head') {
        await s.close();
        return h.response().type('application/zip').header('Content-Disposition', disposition);
      }
      const zip = await streamZip(s, share.paths);
      await shares.consume(share.share_id).catch(async (err: unknown) => {
        zip.stream.destroy();
        throw err;
      });
      destroyOnDisconnect(request, zip.stream);
      closeAfter(s, zip.stream, zip.done);
      sendAsStored(request);
      return h
        .response(zip.stream)
        .type('application/zip')
        .header('Content-Disposition', disposition);
    } catch (err) {
      await s.close();
      throw err;
    }
  };

  return [
    // ---- the owner's share management ----------------------------------------------
    {
      method: 'GET',
      path: '/api/v2/user/shares',
      options: { auth: USER_AUTH, validate: { query: listQuery } },
      handler: async (request) => {
        const username = userOf(request).user.username;
        await shares.owner(username);
        return (await shares.listOf(username, listParams(request))).map((x) => shares.render(x));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/user/shares',
      options: { auth: USER_AUTH, validate: { payload: shareInput } },
      handler: async (request, h) =>
        withUserSession(sessions, request, 'add share', async (s) => {
          const share = await shares.add(s, request.payload as ShareInput, actorOf(request));
          return h
            .response({ message: 'share created' })
            .code(201)
            .header('X-Object-ID', share.share_id)
            .header('Location', `/api/v2/user/shares/${share.share_id}`);
        }),
    },
    {
      method: 'GET',
      path: '/api/v2/user/shares/{id}',
      options: { auth: USER_AUTH, validate: { params: idParams } },
      handler: async (request) => {
        const username = userOf(request).user.username;
        await shares.owner(username);
        return shares.render(await shares.get(username, pathParam(request, 'id')));
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/user/shares/{id}',
      options: { auth: USER_AUTH, validate: { params: idParams, payload: shareInput } },
      handler: async (request) =>
        withUserSession(sessions, request, 'update share', async (s) => {
          await shares.update(s, pathParam(request, 'id'), request.payload as ShareInput, actorOf(request));
          return { message: 'share updated' };
        }),
    },
    {
      method: 'DELETE',
      path: '/api/v2/user/shares/{id}',
      options: { auth: USER_AUTH, validate: { params: idParams } },
      handler: async (request) => {
        const username = userOf(request).user.username;
        await shares.owner(username);
        await shares.remove(username, pathParam(request, 'id'), actorOf(request));
        return { message: 'share deleted' };
      },
    },

    // ---- public share routes -----------------------------------------------------------
    {
      method: 'GET',
      path: '/api/v2/shares/{id}',
      options: {
        auth: false,
        validate: { params: idParams, query: Joi.object({ compress: boolQuery.default(true) }) },
        response: { ranges: false },
      },
      handler: downloadAll,
    },
    {
      method: 'POST',
      path: '/api/v2/shares/{id}',
      options: { auth: false, payload: STREAMED_PAYLOAD, validate: { params: idParams } },
      handler: async (request, h) =>
        withShare(request, canWrite, 'upload', async (share, s) => {
          const dir = await shareDir(s, share);
          const names = await receiveMultipart(request, s, dir, false, () => shares.consume(share.share_id));
          return h.response({ message: `${names.length} file(s) uploaded` }).code(201);
        }),
    },
    {
      method: 'GET',
      path: '/api/v2/shares/{id}/files',
      options: {
        auth: false,
        validate: { params: idParams, query: Joi.object({ path: pathQuery.required() }) },
        response: { ranges: false },
      },
      handler: async (request, h) => {
        const q = request.query as { path: string };
        const { share, s } = await publicSession(request, canRead, 'download');
        let vpath: string;
        try {
          vpath = insideShare(await shareDir(s, share), q.path);
        } catch (err) {
          await s.close();
          throw err;
        }
        return sendFile(request, h, s, vpath, { ready: useOf(request, share) });
      },
    },
    {
      method: 'GET',
      path: '/api/v2/shares/{id}/dirs',
      options: { auth: false, validate: { params: idParams, query: Joi.object({ path: sharePathQuery.default('') }) } },
      handler: async (request, h) => {
        const q = request.query as { path: string };
        const { share, s } = await publicSession(request, canRead, 'list');
        try {
          const pages = await s.list(insideShare(await shareDir(s, share), q.path));
          const body = jsonArray(pages);
          destroyOnDisconnect(request, body);
          closeAfter(s, body);
          return h.response(body).type('application/json');
        } catch (err) {
          await s.close();
          throw err;
        }
      },
    },
    {
      method: 'POST',
      path: '/api/v2/shares/{id}/actions/mkdir',
      options: {
        auth: false,
        validate: { params: idParams, query: Joi.object({ path: pathQuery.required(), mkdir_parents: boolQuery.default(false) }) },
      },
      handler: async (request, h) => {
        const q = request.query as { path: string; mkdir_parents: boolean };
        return withShare(request, canWrite, 'mkdir', async (share, s) => {
          const root = await shareDir(s, share);
          const vpath = insideShare(root, q.path);
          if (vpath === root) throw new FsError(FsErrorCode.Exists, 'the directory of the share exists');
          await s.mkdir(vpath, q.mkdir_parents);
          return h.response({ message: 'directory created' }).code(201);
        });
      },
    },
    {
      method: 'POST',
      path: '/api/v2/shares/{id}/files/{filePath*}',
      options: {
        auth: false,
        payload: STREAMED_PAYLOAD,
        validate: { params: Joi.object({ id: shareId.required(), filePath: Joi.string().min(1).max(4096).required() }) },
      },
      handler: async (request, h) => {
        const mtime = mtimeHeader(request);
        return withShare(request, canWrite, 'upload', async (share, s) => {
          const root = await shareDir(s, share);
          const vpath = insideShare(root, pathParam(request, 'filePath'));
          if (vpath === root) throw Boom.badRequest('a file name is required');
          await shares.consume(share.share_id);
          await uploadFile(s, vpath, request.payload as Readable, { size: declaredLength(request), mtime });
          return h.response({ message: 'upload completed' }).code(201);
        });
      },
    },
  ];
}

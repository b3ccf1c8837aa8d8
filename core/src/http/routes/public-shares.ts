import { Protocol } from '../../sdk/protocols.js';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { FsError, FsErrorCode } from '../../fs/fs-error.js';
import type { Share } from '../../data/entities/index.js';
import { canRead, canWrite } from '../../shares/share.service.js';
import type { FileSession } from '../../vfs/file-session.js';
import { uploadFile } from '../../vfs/transfers.js';
import { streamZip } from '../../vfs/zip-download.js';
import { pathParam } from '../../util/common.input.js';
import { shareCodeRequest, shareId, sharePathQuery } from '../../shares/share.input.js';
import { ShareCodesService } from '../../shares/share-codes.service.js';
import { clientIp } from '../auth-strategies.js';
import { basicCredentials, insideShare, shareAccess, shareDir, uploadCheck } from '../share-access.js';
import { boolQuery, closeAfter, contentDisposition, destroyOnDisconnect, pathQuery, sendAsStored } from '../user-session.js';
import { listingResponse } from './user-dirs.js';
import { declaredLength, mtimeHeader, receiveMultipart, sendFile, STREAMED_PAYLOAD } from './user-files.js';

const idParams = Joi.object({ id: shareId.required() });

/**
 * The public /shares routes: basic authentication with the share password
 * when the share has one; everything works on the owner's files through a
 * file session of the owner (see share-access.ts).
 */
export function publicShareRoutes(c: DependencyContainer): ServerRoute[] {
  const access = shareAccess(c);
  const { shares } = access;
  const codes = c.resolve(ShareCodesService);

  /** A download takes one use of the share once the file is checked (a HEAD request takes none). */
  const useOf = (request: Request, share: Share) => (request.method === 'head' ? undefined : () => shares.consume(share.share_id));

  const publicSession = (request: Request, scopeOk: (scope: number) => boolean, command: string) =>
    access.open(request, pathParam(request, 'id'), scopeOk, command);

  /** Runs `fn` in a public session closed when it returns. */
  const withShare = async <T>(
    request: Request,
    scopeOk: (scope: number) => boolean,
    command: string,
    fn: (share: Share, s: FileSession) => Promise<T>,
  ): Promise<T> => {
    const { share, s } = await publicSession(request, scopeOk, command);
    try {
      return await fn(share, s);
    } finally {
      await s.close();
    }
  };

  const downloadAll = async (request: Request, h: ResponseToolkit) => {
    const q = request.query as { compress: boolean; path?: string };
    const { share, s } = await publicSession(request, canRead, 'download');
    try {
      const single = share.paths.length === 1 ? await s.vfs.statOrNull(share.paths[0]!, { signal: s.signal }) : null;
      if (!q.compress && single && !single.isDir && q.path === undefined) {
        return await sendFile(request, h, s, share.paths[0]!, { ready: useOf(request, share) });
      }
      // `path` (an addition): one folder inside a share of one directory, zipped
      const folder = q.path === undefined ? undefined : insideShare(await shareDir(s, share), q.path);
      const zipped = folder === undefined ? share.paths : [folder];
      if (folder !== undefined && !(await s.vfs.stat(folder, { signal: s.signal })).isDir) {
        throw Boom.badRequest(`"path": ${q.path} is a file, not a folder (GET /api/v2/shares/{id}/files downloads a file)`);
      }
      // a zip leaves out what the owner may not download: the zipped directories themselves must allow it
      for (const p of zipped) {
        const info = await s.vfs.stat(p, { signal: s.signal });
        if (info.isDir) s.requirePerm(p, `downloading ${p}`, 'download');
      }
      const zipName = folder === undefined || folder === share.paths[0] ? share.name : folder.slice(folder.lastIndexOf('/') + 1);
      const disposition = contentDisposition('attachment', `${zipName}.zip`);
      if (request.method === 'head') {
        await s.close();
        return h.response().type('application/zip').header('Content-Disposition', disposition);
      }
      const zip = await streamZip(s, zipped);
      await shares.consume(share.share_id).catch(async (err: unknown) => {
        zip.stream.destroy();
        throw err;
      });
      destroyOnDisconnect(request, zip.stream);
      closeAfter(s, zip.stream, zip.done);
      sendAsStored(request);
      return h.response(zip.stream).type('application/zip').header('Content-Disposition', disposition);
    } catch (err) {
      await s.close();
      throw err;
    }
  };

  return [
    {
      method: 'GET',
      path: '/api/v2/shares/{id}',
      options: {
        auth: false,
        validate: {
          params: idParams,
          query: Joi.object({
            compress: boolQuery.default(true),
            path: sharePathQuery.description(
              'an addition: a folder inside a share of one directory (relative to it), zipped alone; 400 for a file or another kind of share',
            ),
          }),
        },
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
          let taken = 0;
          let names: string[];
          try {
            names = await receiveMultipart(request, s, dir, false, async (vpath) => {
              await uploadCheck(s, vpath);
              await shares.consume(share.share_id);
              taken++;
            });
          } catch (err) {
            // all or nothing: a refused request stores no file, and takes no use (a publication failing
            // after others were published gives their uses back too: rare, and to the client's benefit)
            if (taken) await shares.release(share.share_id, taken).catch(() => undefined);
            throw err;
          }
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
        return listingResponse(request, h, s, async () => insideShare(await shareDir(s, share), q.path));
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
          await uploadCheck(s, vpath);
          await shares.consume(share.share_id);
          try {
            await uploadFile(s, vpath, request.payload as Readable, { size: declaredLength(request), mtime });
          } catch (err) {
            // a refused or cut upload takes no use of the share
            await shares.release(share.share_id).catch(() => undefined);
            throw err;
          }
          return h.response({ message: 'upload completed' }).code(201);
        });
      },
    },
    {
      // email-restricted shares: a one-time code mailed to an allowed address (the same answer for any address)
      method: 'POST',
      path: '/api/v2/shares/{id}/codes',
      options: { auth: false, validate: { params: idParams, payload: shareCodeRequest } },
      handler: async (request, h) => {
        const { email } = request.payload as { email: string };
        await codes.request(pathParam(request, 'id'), email, clientIp(request));
        return h.response({ message: 'if the address is allowed for this share, a one-time code has been mailed to it' }).code(200);
      },
    },
    {
      // a short-lived share token for the next requests, for the share password or an address and its code (spent)
      method: 'POST',
      path: '/api/v2/shares/{id}/token',
      options: { auth: false, validate: { params: idParams } },
      handler: async (request) => {
        const creds = basicCredentials(request);
        if (creds.bearer !== undefined)
          throw Boom.badRequest('a share token is obtained with basic credentials (the share password, or an address and its one-time code)');
        const { share, email } = await shares.authorize(pathParam(request, 'id'), clientIp(request), creds, () => true, {
          protocol: Protocol.HTTPShare,
          ignoreTokens: true,
        });
        if (!share.password_hash && !share.emails.length) throw Boom.badRequest('this share has no password: it needs no token');
        return codes.issueToken(share, email);
      },
    },
  ];
}

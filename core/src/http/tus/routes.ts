import { Protocol } from '../../sdk/protocols.js';
import type { Request, ResponseToolkit, RouteOptions, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { FsError, FsErrorCode } from '../../fs/fs-error.js';
import { parentPath } from '../../fs/path.js';
import type { Share } from '../../data/entities/index.js';
import { canWrite } from '../../shares/share.service.js';
import { ShareUploads, type ShareUpload } from '../../shares/share-uploads.service.js';
import type { FileSession } from '../../vfs/file-session.js';
import { maxUploadSize, uploadFile } from '../../vfs/transfers.js';
import { quotaScope, StorageReservation } from '../../vfs/quota-guard.js';
import { pathParam } from '../../util/common.input.js';
import { shareId } from '../../shares/share.input.js';
import { clientIp } from '../auth-strategies.js';
import { insideShare, shareAccess, shareCredentials, shareDir } from '../share-access.js';
import { declaredLength, STREAMED_PAYLOAD } from '../routes/user-files.js';
import {
  TUS_EXTENSIONS,
  TUS_PATH,
  TUS_VERSION,
  intHeader,
  requireChunkBody,
  requireTusVersion,
  tusChunkSize,
  tusMetadata,
  tusResumableOnEveryAnswer,
  withOffset,
} from './protocol.js';

const uploadParams = Joi.object({ id: Joi.string().max(64).required() });

/** Options every TUS route shares: no hapi auth (the share password is checked per request), Tus-Resumable on every answer. */
const tusRoute = (o: RouteOptions = {}): RouteOptions => ({
  auth: false,
  ...o,
  ext: {
    onPreResponse: {
      method: (request: Request, h: ResponseToolkit) => {
        tusResumableOnEveryAnswer(request);
        return h.continue;
      },
    },
  },
});

/**
 * Resumable uploads to shares: TUS 1.0.0 with creation and
 * creation-with-upload, on bindings whose upload_chunk_size > 0. The share
 * password (when the share has one) comes with every request; the share's use
 * is taken once, at creation; the complete file is stored with the share
 * owner's permissions, quotas and events, as any upload.
 */
export function tusRoutes(c: DependencyContainer): ServerRoute[] {
  const access = shareAccess(c);
  const { shares } = access;
  const uploads = c.resolve(ShareUploads);

  /** Stores a complete TUS upload into the share (permissions, quotas and events as any upload), then forgets it. */
  const finish = async (s: FileSession, share: Share, u: ShareUpload) => {
    // no other chunk, on any node, while the file is stored (it would find the upload complete)
    await uploads.lock(u);
    let source: Readable | undefined;
    try {
      // another node may have stored and forgotten it in the meantime (404 then)
      await uploads.get(u.id);
      const vpath = insideShare(await shareDir(s, share), u.path);
      source = uploads.read(u);
      await uploadFile(s, vpath, source, { size: u.length, mtime: u.mtime, mkdirParents: u.mkdirParents });
    } finally {
      source?.destroy();
      await uploads.drop(u);
      await uploads.unlock(u);
    }
  };

  const create = async (request: Request, h: ResponseToolkit) => {
    const maxChunk = tusChunkSize(request);
    requireTusVersion(request, 400);
    const length = intHeader(request, 'upload-length', 'Upload-Length');
    const meta = tusMetadata(request);
    const id = meta.get('share_id');
    const rel = meta.get('path');
    if (!id) throw Boom.badRequest('"Upload-Metadata": "share_id" is required');
    if (shareId.validate(id).error) throw Boom.badRequest('"Upload-Metadata": "share_id" is not a share id');
    if (!rel) throw Boom.badRequest('"Upload-Metadata": "path" is required');
    const mtimeRaw = meta.get('mtime');
    if (mtimeRaw !== undefined && !/^\d{1,15}$/.test(mtimeRaw)) throw Boom.badRequest('"Upload-Metadata": "mtime" must be unix time in milliseconds');
    const parents = meta.get('mkdir_parents');
    if (parents !== undefined && !['', 'true', 'false', '1', '0'].includes(parents))
      throw Boom.badRequest('"Upload-Metadata": "mkdir_parents" must be true or false');
    const withBody = (declaredLength(request) ?? 1) > 0 && request.headers['content-type'] !== undefined;
    if (withBody) requireChunkBody(request);
    const { share, s } = await access.open(request, id, canWrite, 'upload');
    try {
      // what the final upload will check, refused now rather than after the last chunk
      const vpath = insideShare(await shareDir(s, share), rel);
      s.ensureWritable();
      s.checkName(vpath, 'write');
      const existing = await s.vfs.statOrNull(vpath, { signal: s.signal });
      if (existing?.isDir || vpath === share.paths[0]) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
      s.requirePerm(parentPath(vpath), existing ? `overwriting ${vpath}` : `uploading to ${vpath}`, existing ? 'overwrite' : 'upload');
      const max = maxUploadSize(s);
      if (max && length > max) throw new FsError(FsErrorCode.Quota, `the file exceeds the maximum upload size of ${max} bytes`);
      const scope = quotaScope(s.user, s.vfs.resolve(vpath).mount, s.deps.usage, s.deps.quota);
      const check = new StorageReservation(s.deps.tracker, scope, existing?.size ?? 0, existing ? 0 : 1);
      await check.begin(length);
      check.release();
      await shares.consume(id);
      const u = await uploads.create({
        shareId: id,
        path: rel,
        length,
        mtime: mtimeRaw === undefined ? undefined : new Date(Number(mtimeRaw)),
        mkdirParents: parents === 'true' || parents === '1',
      });
      if (withBody) await uploads.append(u, request.payload as Readable, maxChunk);
      const offset = u.offset;
      if (offset === length) await finish(s, share, u);
      return withOffset(h.response().code(201), offset).header('Location', `${TUS_PATH}/${u.id}`);
    } finally {
      await s.close();
    }
  };

  return [
    {
      method: 'OPTIONS',
      path: TUS_PATH,
      options: tusRoute(),
      handler: (request, h) => {
        const max = tusChunkSize(request);
        return h
          .response()
          .code(200)
          .header('Tus-Resumable', TUS_VERSION)
          .header('Tus-Version', TUS_VERSION)
          .header('Tus-Extension', TUS_EXTENSIONS)
          .header('Tus-Max-Chunk-Size', String(max));
      },
    },
    {
      method: 'POST',
      path: TUS_PATH,
      options: tusRoute({ payload: STREAMED_PAYLOAD }),
      handler: create,
    },
    {
      // hapi answers HEAD with the GET route; a GET itself is not part of the protocol
      method: 'GET',
      path: `${TUS_PATH}/{id}`,
      options: tusRoute({ validate: { params: uploadParams } }),
      handler: async (request, h) => {
        tusChunkSize(request);
        if (request.method !== 'head') throw Boom.methodNotAllowed('use HEAD to read the offset of an upload');
        requireTusVersion(request, 412);
        const u = await uploads.get(pathParam(request, 'id'));
        await shares.authorize(u.shareId, clientIp(request), shareCredentials(request, u.shareId), canWrite, {
          protocol: Protocol.HTTPShare,
          ignoreTokens: true,
        });
        return withOffset(h.response().code(200), u.offset).header('Upload-Length', String(u.length)).header('Cache-Control', 'no-store');
      },
    },
    {
      method: 'PATCH',
      path: `${TUS_PATH}/{id}`,
      options: tusRoute({ payload: STREAMED_PAYLOAD, validate: { params: uploadParams } }),
      handler: async (request, h) => {
        const maxChunk = tusChunkSize(request);
        requireTusVersion(request, 412);
        const u = await uploads.get(pathParam(request, 'id'));
        const { share, s } = await access.open(request, u.shareId, canWrite, 'upload', { ignoreTokens: true });
        try {
          requireChunkBody(request);
          const offset = intHeader(request, 'upload-offset', 'Upload-Offset');
          if (offset !== u.offset) throw Boom.conflict(`"Upload-Offset" is ${offset}, the upload is at ${u.offset}`);
          const declared = declaredLength(request);
          if (declared !== undefined && (u.offset + declared > u.length || declared > maxChunk)) {
            throw Boom.entityTooLarge(`the chunk may hold at most ${Math.min(u.length - u.offset, maxChunk)} bytes`);
          }
          await uploads.append(u, request.payload as Readable, maxChunk);
          const now = u.offset;
          if (now === u.length) await finish(s, share, u);
          return withOffset(h.response().code(204), now);
        } finally {
          await s.close();
        }
      },
    },
  ];
}

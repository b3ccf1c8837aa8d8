import type { Request, ResponseToolkit, RouteOptions, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { FsError, FsErrorCode } from '../../fs/fs-error.js';
import { parentPath } from '../../fs/path.js';
import { ChunkedUploads, type ChunkedUpload, type UploadOwner } from '../../vfs/chunked-uploads.service.js';
import type { FileSession } from '../../vfs/file-session.js';
import { maxUploadSize, uploadFile } from '../../vfs/transfers.js';
import { quotaScope, StorageReservation } from '../../vfs/quota-guard.js';
import { pathParam } from '../../util/common.input.js';
import { declaredLength, STREAMED_PAYLOAD } from '../routes/user-files.js';
import { TUS_VERSION, intHeader, requireChunkBody, requireTusVersion, tusChunkSize, tusMetadata, tusResumableOnEveryAnswer, withOffset } from './protocol.js';

const uploadParams = Joi.object({ id: Joi.string().max(64).required() });

/** The metadata every TUS endpoint of Ferry reads: `path` (required), `mtime`, `mkdir_parents`. */
export interface UploadTarget {
  path: string;
  mtime?: Date;
  mkdirParents: boolean;
}

/** A file session opened for an upload, and the virtual path its file goes to. */
export interface OpenedUpload {
  s: FileSession;
  dest: string;
}

/**
 * What differs between the TUS endpoints (shares, signed-in users): who may
 * create and continue an upload, and where its file goes. The protocol, the
 * checks and the storage are the same (tusEndpoint).
 */
export interface TusTarget {
  /** Base path: the collection (OPTIONS, POST) and `<path>/{id}` (HEAD, PATCH, DELETE). */
  path: string;
  /** hapi auth of the routes but OPTIONS (discovery needs no credential). */
  auth: RouteOptions['auth'];
  /** Value of `Tus-Extension`; with `termination`, DELETE `<path>/{id}` is served. */
  extensions: readonly ('creation' | 'creation-with-upload' | 'termination')[];
  /** Opens the session of a new upload (credentials checked); `commit` runs once every check passed, before the upload is created. */
  begin(request: Request, meta: Map<string, string>, target: UploadTarget): Promise<OpenedUpload & { owner: UploadOwner; commit?: () => Promise<void> }>;
  /** Opens the session of a request on an existing upload; 404 when the upload is not the caller's. */
  resume(request: Request, u: ChunkedUpload): Promise<OpenedUpload>;
  /** Checks that the caller may read the upload's offset (HEAD); 404 when the upload is not the caller's. */
  authorize(request: Request, u: ChunkedUpload): Promise<void>;
}

/** The `path`, `mtime` and `mkdir_parents` metadata of a creation (400 when malformed). */
export function uploadTarget(meta: Map<string, string>): UploadTarget {
  const rel = meta.get('path');
  if (!rel) throw Boom.badRequest('"Upload-Metadata": "path" is required');
  const mtimeRaw = meta.get('mtime');
  if (mtimeRaw !== undefined && !/^\d{1,15}$/.test(mtimeRaw)) throw Boom.badRequest('"Upload-Metadata": "mtime" must be unix time in milliseconds');
  const parents = meta.get('mkdir_parents');
  if (parents !== undefined && !['', 'true', 'false', '1', '0'].includes(parents))
    throw Boom.badRequest('"Upload-Metadata": "mkdir_parents" must be true or false');
  return { path: rel, mtime: mtimeRaw === undefined ? undefined : new Date(Number(mtimeRaw)), mkdirParents: parents === 'true' || parents === '1' };
}

/**
 * Refuses at creation what storing the complete file would refuse (read-only
 * account, name, a directory in the way, a missing parent without
 * mkdir_parents, permission upload/overwrite/create_dirs, maximum upload size,
 * quota), rather than after the last chunk.
 */
async function creationCheck(s: FileSession, vpath: string, length: number, mkdirParents: boolean): Promise<void> {
  s.ensureWritable();
  s.checkName(vpath, 'write');
  const [existing, parent] = await Promise.all([s.vfs.statOrNull(vpath, { signal: s.signal }), s.vfs.statOrNull(parentPath(vpath), { signal: s.signal })]);
  if (existing?.isDir || vpath === '/') throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  if (!parent && !mkdirParents)
    throw new FsError(FsErrorCode.NotFound, `${parentPath(vpath)}: the parent directory does not exist (use mkdir_parents)`, { path: vpath });
  if (parent && !parent.isDir) throw new FsError(FsErrorCode.NotDirectory, `${parentPath(vpath)}: not a directory`, { path: vpath });
  if (!parent) s.requirePerm(parentPath(vpath), `creating ${parentPath(vpath)}`, 'create_dirs');
  s.requirePerm(parentPath(vpath), existing ? `overwriting ${vpath}` : `uploading to ${vpath}`, existing ? 'overwrite' : 'upload');
  const max = maxUploadSize(s);
  if (max && length > max) throw new FsError(FsErrorCode.Quota, `the file exceeds the maximum upload size of ${max} bytes`);
  const scope = quotaScope(s.user, s.vfs.resolve(vpath).mount, s.deps.usage, s.deps.quota);
  const check = new StorageReservation(s.deps.tracker, scope, existing?.size ?? 0, existing ? 0 : 1);
  await check.begin(length);
  check.release();
}

/**
 * TUS 1.0.0 routes of one target (creation, creation-with-upload and, when
 * the target lists it, termination) on bindings whose upload_chunk_size > 0.
 * Chunks are appended to a temporary file (ChunkedUploads); when the last byte
 * arrives the file is stored like any upload (permissions, quotas, atomic
 * publication, events), so nothing half-written is ever visible.
 */
export function tusEndpoint(c: DependencyContainer, target: TusTarget): ServerRoute[] {
  const uploads = c.resolve(ChunkedUploads);
  const route = (o: RouteOptions = {}): RouteOptions => ({
    auth: target.auth,
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

  /** Stores a complete upload (permissions, quotas and events as any upload), then forgets it. */
  const finish = async (o: OpenedUpload, u: ChunkedUpload) => {
    // no other chunk, on any node, while the file is stored (it would find the upload complete)
    await uploads.lock(u);
    let source: Readable | undefined;
    try {
      // another node may have stored and forgotten it in the meantime (404 then)
      await uploads.get(u.id);
      // local storage takes the file whole (a rename): opened only when the bytes must be copied
      const open = () => (source = uploads.read(u));
      await uploadFile(o.s, o.dest, open, { size: u.length, mtime: u.mtime, mkdirParents: u.mkdirParents, localFile: u.file });
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
    const wanted = uploadTarget(meta);
    const withBody = (declaredLength(request) ?? 1) > 0 && request.headers['content-type'] !== undefined;
    if (withBody) requireChunkBody(request);
    const opened = await target.begin(request, meta, wanted);
    try {
      await creationCheck(opened.s, opened.dest, length, wanted.mkdirParents);
      await opened.commit?.();
      const u = await uploads.create({ owner: opened.owner, length, ...wanted });
      if (withBody) await uploads.append(u, request.payload as Readable, maxChunk);
      const offset = u.offset;
      if (offset === length) await finish(opened, u);
      return withOffset(h.response().code(201), offset).header('Location', `${target.path}/${u.id}`);
    } finally {
      await opened.s.close();
    }
  };

  const routes: ServerRoute[] = [
    {
      method: 'OPTIONS',
      path: target.path,
      options: route({ auth: false }),
      handler: (request, h) => {
        const max = tusChunkSize(request);
        return h
          .response()
          .code(200)
          .header('Tus-Resumable', TUS_VERSION)
          .header('Tus-Version', TUS_VERSION)
          .header('Tus-Extension', target.extensions.join(','))
          .header('Tus-Max-Chunk-Size', String(max));
      },
    },
    { method: 'POST', path: target.path, options: route({ payload: STREAMED_PAYLOAD }), handler: create },
    {
      // hapi answers HEAD with the GET route; a GET itself is not part of the protocol
      method: 'GET',
      path: `${target.path}/{id}`,
      options: route({ validate: { params: uploadParams } }),
      handler: async (request, h) => {
        tusChunkSize(request);
        if (request.method !== 'head') throw Boom.methodNotAllowed('use HEAD to read the offset of an upload');
        requireTusVersion(request, 412);
        const u = await uploads.get(pathParam(request, 'id'));
        await target.authorize(request, u);
        return withOffset(h.response().code(200), u.offset).header('Upload-Length', String(u.length)).header('Cache-Control', 'no-store');
      },
    },
    {
      method: 'PATCH',
      path: `${target.path}/{id}`,
      options: route({ payload: STREAMED_PAYLOAD, validate: { params: uploadParams } }),
      handler: async (request, h) => {
        const maxChunk = tusChunkSize(request);
        requireTusVersion(request, 412);
        const u = await uploads.get(pathParam(request, 'id'));
        const opened = await target.resume(request, u);
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
          if (now === u.length) await finish(opened, u);
          return withOffset(h.response().code(204), now);
        } finally {
          await opened.s.close();
        }
      },
    },
  ];
  if (target.extensions.includes('termination')) {
    routes.push({
      method: 'DELETE',
      path: `${target.path}/{id}`,
      options: route({ validate: { params: uploadParams } }),
      handler: async (request, h) => {
        tusChunkSize(request);
        requireTusVersion(request, 412);
        const u = await uploads.get(pathParam(request, 'id'));
        const opened = await target.resume(request, u);
        try {
          // 409 while a chunk of it is received
          await uploads.lock(u);
          try {
            await uploads.drop(u);
          } finally {
            await uploads.unlock(u);
          }
          return h.response().code(204);
        } finally {
          await opened.s.close();
        }
      },
    });
  }
  return routes;
}

import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { clientIp, USER_AUTH, userOf } from '../../auth/strategies.js';
import { FsError, FsErrorCode } from '../../fs/fs-error.js';
import { normalizeVirtualPath, parentPath } from '../../fs/path.js';
import type { Share } from '../../data/entities/index.js';
import { FileSessions } from '../../services/file-sessions.service.js';
import { canRead, canWrite, ShareService, type ShareCredentials } from '../../services/share.service.js';
import { ShareUploads, type ShareUpload } from '../../services/share-uploads.service.js';
import type { HttpBinding } from '../../config/schema.js';
import type { FileSession } from '../../vfs/file-session.js';
import { maxUploadSize, uploadFile } from '../../vfs/transfers.js';
import { streamZip } from '../../vfs/zip-download.js';
import { quotaScope, StorageReservation } from '../../vfs/quota-guard.js';
import { actorOf } from '../server.js';
import { listParams, listQuery, pathParam } from '../schemas/common.js';
import { shareId, shareInput, sharePathQuery, type ShareInput } from '../schemas/shares.js';
import { boolQuery, closeAfter, contentDisposition, destroyOnDisconnect, openFileSession, pathQuery, sendAsStored, withUserSession } from '../user-session.js';
import { jsonArray } from './user-dirs.js';
import { declaredLength, mtimeHeader, receiveMultipart, sendFile, STREAMED_PAYLOAD } from './user-files.js';
import { locationOf } from '../location.js';
import { stringProblem } from '../../util/well-formed.js';

const idParams = Joi.object({ id: shareId.required() });

const TUS_VERSION = '1.0.0';
const TUS_PATH = '/api/v2/shares-chunked-uploads';
const MB = 1024 * 1024;

function header(request: Request, name: string): string | undefined {
  const v = request.headers[name] as string | string[] | undefined;
  return Array.isArray(v) ? v[0] : v;
}

/** Maximum chunk of a TUS upload on the request's binding (upload_chunk_size MB); 404 when TUS is off there. */
function tusChunkSize(request: Request): number {
  const b = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
  if (!b?.upload_chunk_size) throw Boom.notFound('resumable uploads are not enabled on this binding');
  return b.upload_chunk_size * MB;
}

function tusVersion(request: Request): void {
  if (header(request, 'tus-resumable') !== TUS_VERSION) throw Boom.badRequest(`"Tus-Resumable" must be ${TUS_VERSION}`);
}

/** An unsigned integer header (up to 15 digits). */
function intHeader(request: Request, name: string, label: string): number {
  const v = header(request, name);
  if (v === undefined || !/^\d{1,15}$/.test(v.trim())) throw Boom.badRequest(`"${label}" must be a non-negative integer`);
  return Number(v);
}

/** Upload-Metadata: comma-separated `key base64value` pairs (a key may come without value). */
function tusMetadata(request: Request): Map<string, string> {
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

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A body of a TUS request: `application/offset+octet-stream` (415 otherwise). */
function tusBody(request: Request): void {
  const type = (header(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/offset+octet-stream') throw Boom.unsupportedMediaType('chunks must be sent as application/offset+octet-stream');
}

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
 * Refuses now what storing `vpath` would refuse (name, permission, a missing
 * parent directory, a directory in the way), so that a refused upload takes
 * no use of the share.
 */
async function uploadCheck(s: FileSession, vpath: string): Promise<void> {
  s.ensureWritable();
  s.checkName(vpath, 'write');
  const [existing, parent] = await Promise.all([s.vfs.statOrNull(vpath, { signal: s.signal }), s.vfs.statOrNull(parentPath(vpath), { signal: s.signal })]);
  if (existing?.isDir) throw new FsError(FsErrorCode.IsDirectory, `${vpath} is a directory`, { path: vpath });
  if (!parent?.isDir) throw new FsError(FsErrorCode.NotFound, `${parentPath(vpath)}: the parent directory does not exist`, { path: vpath });
  s.requirePerm(parentPath(vpath), existing ? `overwriting ${vpath}` : `uploading to ${vpath}`, existing ? 'overwrite' : 'upload');
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
  const uploads = c.resolve(ShareUploads);

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

  /** The share and its owner's session for a request on a TUS upload (the share password again; the use was taken at creation). */
  const uploadSession = async (request: Request, u: ShareUpload) => {
    const ip = clientIp(request);
    const { share, owner } = await shares.authorize(u.shareId, ip, basicCredentials(request), canWrite, { ignoreTokens: true });
    const s = await openFileSession(sessions, request, { username: owner.username, key: `share:${share.share_id}:${ip}`, protocol: 'HTTPShare' }, `upload share ${share.share_id}`);
    return { share, s };
  };

  /** Stores a complete TUS upload into the share (permissions, quotas and events as any upload), then forgets it. */
  const finish = async (s: FileSession, share: Share, u: ShareUpload) => {
    // no other chunk while the file is stored (it would find the upload complete)
    u.busy = true;
    let source: Readable | undefined;
    try {
      const vpath = insideShare(await shareDir(s, share), u.path);
      source = uploads.read(u);
      await uploadFile(s, vpath, source, { size: u.length, mtime: u.mtime, mkdirParents: u.mkdirParents });
    } finally {
      source?.destroy();
      await uploads.drop(u);
    }
  };

  const tusHeaders = <T extends { header(k: string, v: string): T }>(r: T, u?: ShareUpload) => {
    r.header('Tus-Resumable', TUS_VERSION);
    if (u) r.header('Upload-Offset', String(u.offset));
    return r;
  };

  const tusCreate = async (request: Request, h: ResponseToolkit) => {
    const maxChunk = tusChunkSize(request);
    tusVersion(request);
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
    if (parents !== undefined && !['', 'true', 'false', '1', '0'].includes(parents)) throw Boom.badRequest('"Upload-Metadata": "mkdir_parents" must be true or false');
    const withBody = (declaredLength(request) ?? 1) > 0 && request.headers['content-type'] !== undefined;
    if (withBody) tusBody(request);
    const ip = clientIp(request);
    const { share, owner } = await shares.authorize(id, ip, basicCredentials(request), canWrite);
    const s = await openFileSession(sessions, request, { username: owner.username, key: `share:${id}:${ip}`, protocol: 'HTTPShare' }, `upload share ${id}`);
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
      return tusHeaders(h.response().code(201), { ...u, offset }).header('Location', `${TUS_PATH}/${u.id}`);
    } finally {
      await s.close();
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
            .header('Location', locationOf('/api/v2/user/shares', share.share_id));
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

    // ---- resumable uploads to shares (TUS 1.0.0, when the binding's upload_chunk_size > 0) ----
    {
      method: 'OPTIONS',
      path: TUS_PATH,
      options: { auth: false },
      handler: (request, h) => {
        const max = tusChunkSize(request);
        return tusHeaders(h.response().code(200))
          .header('Tus-Version', TUS_VERSION)
          .header('Tus-Extension', 'creation,creation-with-upload')
          .header('Tus-Max-Chunk-Size', String(max));
      },
    },
    {
      method: 'POST',
      path: TUS_PATH,
      options: { auth: false, payload: STREAMED_PAYLOAD },
      handler: tusCreate,
    },
    {
      // hapi answers HEAD with the GET route; a GET itself is not part of the protocol
      method: 'GET',
      path: `${TUS_PATH}/{id}`,
      options: { auth: false, validate: { params: Joi.object({ id: Joi.string().max(64).required() }) } },
      handler: async (request, h) => {
        tusChunkSize(request);
        if (request.method !== 'head') throw Boom.methodNotAllowed('use HEAD to read the offset of an upload');
        const u = await uploads.get(pathParam(request, 'id'));
        await shares.authorize(u.shareId, clientIp(request), basicCredentials(request), canWrite, { ignoreTokens: true });
        return tusHeaders(h.response().code(200), u).header('Upload-Length', String(u.length)).header('Cache-Control', 'no-store');
      },
    },
    {
      method: 'PATCH',
      path: `${TUS_PATH}/{id}`,
      options: { auth: false, payload: STREAMED_PAYLOAD, validate: { params: Joi.object({ id: Joi.string().max(64).required() }) } },
      handler: async (request, h) => {
        const maxChunk = tusChunkSize(request);
        tusVersion(request);
        const u = await uploads.get(pathParam(request, 'id'));
        const { share, s } = await uploadSession(request, u);
        try {
          tusBody(request);
          const offset = intHeader(request, 'upload-offset', 'Upload-Offset');
          if (offset !== u.offset) throw Boom.conflict(`"Upload-Offset" is ${offset}, the upload is at ${u.offset}`);
          const declared = declaredLength(request);
          if (declared !== undefined && (u.offset + declared > u.length || declared > maxChunk)) {
            throw Boom.entityTooLarge(`the chunk may hold at most ${Math.min(u.length - u.offset, maxChunk)} bytes`);
          }
          await uploads.append(u, request.payload as Readable, maxChunk);
          const now = u.offset;
          if (now === u.length) await finish(s, share, u);
          return tusHeaders(h.response().code(204), { ...u, offset: now });
        } finally {
          await s.close();
        }
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
  ];
}

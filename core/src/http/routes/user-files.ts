import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import busboy from 'busboy';
import Joi from 'joi';
import type { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH } from '../auth-strategies.js';
import { RequestFsBatch } from '../../fs/fs-batch.js';
import { FsError, FsErrorCode } from '../../fs/fs-error.js';
import { baseName, joinVirtualPath } from '../../fs/path.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import type { FileSession } from '../../vfs/file-session.js';
import { QuotaBatch } from '../../vfs/quota-guard.js';
import { uploadFile } from '../../vfs/transfers.js';
import { openDownload, prepareDownload } from '../../vfs/downloads.js';
import { entityTag, ifRangeMatches, noneMatch, notModifiedSince, parseRange } from '../range-header.js';
import {
  boolQuery,
  closeAfter,
  contentDisposition,
  destroyOnDisconnect,
  hapiPayload,
  openUserSession,
  pathQuery,
  sendAsStored,
  withUserSession,
} from '../user-session.js';

/** Streamed request bodies: hapi never buffers them; sizes are enforced while streaming. */
export const STREAMED_PAYLOAD = {
  output: 'stream' as const,
  parse: false,
  maxBytes: Number.MAX_SAFE_INTEGER,
  timeout: false as const,
};

const renameQuery = Joi.object({ path: pathQuery.required(), target: pathQuery.required() });

/** X-SERVICE-MTIME: unix milliseconds. */
export function mtimeHeader(request: Request): Date | undefined {
  const v = request.headers['x-service-mtime'];
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,15}$/.test(String(v))) throw Boom.badRequest('"X-SERVICE-MTIME" must be unix time in milliseconds');
  return new Date(Number(v));
}

/** Content-Length of a request body that is not chunked. */
export function declaredLength(request: Request): number | undefined {
  const v = request.headers['content-length'];
  if (v === undefined || request.headers['transfer-encoding']) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

async function download(sessions: FileSessions, request: Request, h: ResponseToolkit) {
  const q = request.query as { path: string; inline?: boolean };
  const s = await openUserSession(sessions, request, `download ${q.path}`);
  let vpath: string;
  try {
    vpath = s.path(q.path);
  } catch (err) {
    await s.close();
    throw err;
  }
  return sendFile(request, h, s, vpath, { inline: q.inline });
}

/**
 * Answers a GET or HEAD of one file of a session: conditional requests
 * (304), one byte range (206, 416), ETag, Last-Modified, Content-Disposition,
 * the body streamed from the backend. `ready` runs once the file is checked,
 * before anything is sent (a refusal there is the answer). The session is
 * closed when the response is done (or at once on failure).
 */
export async function sendFile(request: Request, h: ResponseToolkit, s: FileSession, vpath: string, o: { inline?: boolean; ready?: () => Promise<void> } = {}) {
  try {
    const header = (name: string): string | undefined => {
      const v = request.headers[name] as string | string[] | undefined;
      return Array.isArray(v) ? v[0] : v;
    };
    // the whole file, unconditionally: the backend may open it with the request that tells its metadata
    const whole = request.method === 'get' && !header('range') && !header('if-none-match') && !header('if-modified-since');
    const p = await prepareDownload(s, vpath, { openWhole: whole });
    try {
      await o.ready?.();
    } catch (err) {
      p.opened?.destroy();
      throw err;
    }
    const { info } = p;
    const etag = entityTag(info);
    const lastModified = info.mtime.toUTCString();
    const type = (request.server.mime.path(info.name) as { type?: string }).type || 'application/octet-stream';
    const common = (r: ReturnType<ResponseToolkit['response']>) => {
      r.header('ETag', etag).header('Last-Modified', lastModified).header('Accept-Ranges', 'bytes').header('Cache-Control', 'private, no-cache');
      if (!o.inline) return r;
      // a PDF sent inline may be framed by pages of this origin (the web client's preview), never by another;
      // every other answer keeps the server's X-Frame-Options: DENY
      if (type === 'application/pdf') return r.header('X-Frame-Options', 'SAMEORIGIN').header('Content-Security-Policy', "frame-ancestors 'self'");
      // anything else the browser shows runs nothing on this origin: an HTML or SVG file opened inline
      // would otherwise run its scripts with the user's session (images, media and fetched text are not affected)
      return r.header('Content-Security-Policy', 'sandbox');
    };
    const inm = header('if-none-match');
    if (inm ? noneMatch(inm, etag) : notModifiedSince(header('if-modified-since'), info.mtime)) {
      await s.close();
      return common(h.response().code(304));
    }
    let range = parseRange(header('range'), info.size);
    if (range.kind !== 'full' && !ifRangeMatches(header('if-range'), etag, info.mtime)) range = { kind: 'full' };
    if (range.kind === 'unsatisfiable') {
      await s.close();
      const err = Boom.rangeNotSatisfiable(`the range is not satisfiable for a file of ${info.size} bytes`);
      err.output.headers['Content-Range'] = `bytes */${info.size}`;
      throw err;
    }
    const part = range.kind === 'partial' ? { start: range.start, end: range.end } : undefined;
    const length = part ? part.end - part.start + 1 : info.size;
    const disposition = contentDisposition(o.inline ? 'inline' : 'attachment', baseName(vpath));
    if (request.method === 'head') {
      await s.close();
      const r = common(h.response().code(part ? 206 : 200))
        .type(type)
        .header('Content-Disposition', disposition)
        .header('Content-Length', String(length));
      if (part) r.header('Content-Range', `bytes ${part.start}-${part.end}/${info.size}`);
      return r;
    }
    // hapi writes the stream through its writeToStream(), which gives the read buffers back for reuse
    const dl = await openDownload(s, p, part, { recycle: true });
    destroyOnDisconnect(request, dl.stream);
    closeAfter(s, dl.stream, dl.done);
    const r = common(h.response(hapiPayload(dl)).code(part ? 206 : 200))
      .type(type)
      .header('Content-Disposition', disposition)
      .header('Content-Length', String(length));
    sendAsStored(request);
    if (part) r.header('Content-Range', `bytes ${part.start}-${part.end}/${info.size}`);
    return r;
  } catch (err) {
    await s.close();
    throw err;
  }
}

/**
 * Multipart upload of one or more files (field `filenames`) into a directory,
 * all or nothing. The parts are read in turn, each streamed into its file,
 * which is held back once stored (not visible, its quota reserved). Only
 * when the body ended well are the files published, one after the other, in
 * the order of the parts; when anything fails before (a part refused, more
 * than `maxFiles` file parts, a malformed body, the client gone), every file
 * of the request is discarded and the answer waits until they are. A file
 * failing at publication stops the others (those published before it stay).
 * `before` runs before each file is stored (a refusal there stops the
 * upload).
 */
export function receiveMultipart(
  request: Request,
  s: FileSession,
  dir: string,
  mkdirParents: boolean,
  before?: (vpath: string) => Promise<void>,
): Promise<string[]> {
  const maxFiles = s.deps.config.httpd.max_multipart_files;
  return new Promise((resolve, reject) => {
    const src = request.payload as Readable;
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: request.headers as busboy.BusboyConfig['headers'],
        preservePath: false,
        defParamCharset: 'utf8',
        limits: { files: maxFiles, fields: MAX_MULTIPART_FIELDS, fieldSize: 64 * 1024, parts: maxFiles + MAX_MULTIPART_FIELDS },
      });
    } catch (err) {
      reject(Boom.badRequest(`a multipart/form-data body is required: ${(err as Error).message}`));
      return;
    }
    const names = new Set<string>();
    // parts are read one after the other: each step ends once its file is stored (or failed)
    let chain = Promise.resolve();
    let failed = false;
    // file parts handed to uploadFile and not finished yet
    const active = new Set<Readable>();
    // settles once the whole body is read: publish (resolved) or discard (rejected) every held file
    let decide!: { publish(): void; discard(err: Error): void };
    const decision = new Promise<void>((publish, discard) => (decide = { publish, discard }));
    decision.catch(() => undefined);
    // every uploadFile of the request, and the last one (publications run in part order)
    const uploads: Promise<unknown>[] = [];
    let previous: Promise<unknown> = Promise.resolve();
    // once a file is stored, its directory (shared by every file of the request) is known to exist
    let parentReady = false;
    // files being stored at once: the next part's checks and opening overlap the previous parts' writes
    const slots = new Slots(MULTIPART_PARALLEL_FILES);
    // one per file: settles once the file is stored or failed (the decision waits for them all)
    const storing: Promise<void>[] = [];
    // the quota changes of all the files, stored once they are all over (one write per counter)
    const batch = new QuotaBatch();
    // what the backend opens once for all the files (the checked parent directory), closed once they are all over
    const fsBatch = new RequestFsBatch();
    const flush = () =>
      Promise.all([batch.flush().catch((err: unknown) => s.deps.logger.warn({ err }, 'cannot store the usage of a multipart upload')), fsBatch.close()]);
    const settled = () => chain.then(() => Promise.allSettled(uploads)).then(flush);
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      src.unpipe(bb);
      // the rest of the body is read and dropped: a client that sends it all before reading
      // the answer would otherwise wait for ever on a connection nobody reads
      src.resume();
      const reason = err instanceof Error ? err : new Error(String(err));
      decide.discard(reason);
      // An upload reading a part that will get no more data (the client went away, or the
      // request failed) would wait for ever with its temporary file: end it with the error.
      // The answer comes once every file of the request is discarded, while the session is open.
      for (const part of active) if (!part.destroyed) part.destroy(reason);
      void settled().then(() => reject(err));
    };
    const tooMany = () =>
      fail(
        Boom.entityTooLarge(
          `too many files in one request: at most ${maxFiles} files may be sent in one multipart upload (httpd.max_multipart_files); nothing of this request was kept`,
        ),
      );
    bb.on('filesLimit', tooMany);
    bb.on('partsLimit', tooMany);
    bb.on('fieldsLimit', () => fail(Boom.entityTooLarge(`too many form fields: at most ${MAX_MULTIPART_FIELDS} are accepted`)));
    bb.on('file', (field, stream, info) => {
      if (failed) {
        stream.resume();
        return;
      }
      if (field !== 'filenames') {
        stream.resume();
        fail(Boom.badRequest(`unexpected file field "${field}": files must be sent as "filenames"`));
        return;
      }
      const name = info.filename ?? '';
      let vpath: string;
      try {
        if (!name || /[/\\]/.test(name)) throw new FsError(FsErrorCode.Invalid, `invalid file name "${name}"`);
        vpath = joinVirtualPath(dir, name);
        if (baseName(vpath) !== name) throw new FsError(FsErrorCode.Invalid, `invalid file name "${name}"`);
      } catch (err) {
        stream.resume();
        fail(err);
        return;
      }
      if (names.has(vpath)) {
        stream.resume();
        fail(Boom.badRequest(`the file name "${name}" is sent more than once`));
        return;
      }
      names.add(vpath);
      active.add(stream);
      stream.once('close', () => active.delete(stream));
      // a part still queued behind another upload has no reader yet when fail() ends it
      stream.on('error', () => undefined);
      chain = chain
        .then(async () => {
          if (failed) return;
          await before?.(vpath);
          await slots.acquire();
          if (failed) {
            slots.release();
            throw FsError.aborted(vpath);
          }
          const after = previous;
          let stored!: () => void;
          const isStored = new Promise<void>((r) => (stored = r));
          const upload = uploadFile(s, vpath, stream, {
            mkdirParents,
            parentReady,
            batch,
            fsBatch,
            hold: async () => {
              parentReady = true;
              stored();
              await decision;
              // published in part order; a file that failed to publish stops the ones after it
              await after;
            },
          });
          uploads.push(upload);
          previous = upload;
          upload.catch((err: unknown) => {
            stream.resume();
            fail(err);
          });
          // the slot is free once the file is stored (held until the decision) or failed
          const over = Promise.race([isStored, upload]).then(slots.release, slots.release);
          storing.push(over);
        })
        .then(
          () => undefined,
          (err: unknown) => {
            stream.resume();
            fail(err);
          },
        );
    });
    bb.on('error', (err: Error) => fail(Boom.badRequest(`malformed multipart body: ${err.message}`)));
    bb.on('close', () => {
      void chain.then(async () => {
        await Promise.all(storing);
        if (failed) return;
        if (names.size === 0) {
          fail(Boom.badRequest('no files: send at least one file in the "filenames" field'));
          return;
        }
        decide.publish();
        const results = await Promise.allSettled(uploads);
        await flush();
        const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (refused) reject(refused.reason);
        else resolve([...names]);
      });
    });
    s.signal.addEventListener('abort', () => fail(FsError.aborted()), { once: true });
    src.on('error', (err) => fail(err));
    // A request cut while its session was being opened sent its events already (the abort, the
    // body's error): nothing would end the parse, and the session would stay open for ever.
    if (s.signal.aborted || (src.destroyed && !src.readableEnded)) {
      fail(FsError.aborted());
      return;
    }
    src.pipe(bb);
  });
}

/** Form fields (other than files) a multipart upload may carry. */
const MAX_MULTIPART_FIELDS = 100;

/**
 * Files of one multipart request stored at the same time. Parts arrive one
 * after the other, but storing one is mostly waiting for the disk or the
 * backend (a dozen filesystem calls on the local backend); with a few at once
 * those waits overlap. Each counts as a transfer of the connection while it
 * is being stored (common.max_per_host_transfers), hence a small number.
 */
const MULTIPART_PARALLEL_FILES = 4;

/** A counting semaphore: at most `size` holders; acquire() waits for a release. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}
  acquire(): Promise<void> {
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  /** Hands the slot to the next waiter, or frees it. */
  readonly release = (): void => {
    const next = this.waiting.shift();
    if (next) next();
    else this.used--;
  };
}

export function userFileRoutes(c: DependencyContainer): ServerRoute[] {
  const sessions = c.resolve(FileSessions);
  return [
    {
      method: 'GET',
      path: '/api/v2/user/files',
      options: {
        auth: USER_AUTH,
        validate: { query: Joi.object({ path: pathQuery.required(), inline: boolQuery.default(false) }) },
        response: { ranges: false },
      },
      handler: (request, h) => download(sessions, request, h),
    },
    {
      method: 'POST',
      path: '/api/v2/user/files',
      options: {
        auth: USER_AUTH,
        payload: STREAMED_PAYLOAD,
        validate: { query: Joi.object({ path: pathQuery.default('/'), mkdir_parents: boolQuery.default(false) }) },
      },
      handler: async (request, h) => {
        const q = request.query as { path: string; mkdir_parents: boolean };
        return withUserSession(sessions, request, `upload ${q.path}`, async (s) => {
          const dir = s.path(q.path);
          if (q.mkdir_parents) await s.mkdir(dir, true);
          const names = await receiveMultipart(request, s, dir, false);
          return h.response({ message: `${names.length} file(s) uploaded` }).code(201);
        });
      },
    },
    {
      method: 'POST',
      path: '/api/v2/user/files/upload',
      options: {
        auth: USER_AUTH,
        payload: STREAMED_PAYLOAD,
        validate: { query: Joi.object({ path: pathQuery.required(), mkdir_parents: boolQuery.default(false) }) },
      },
      handler: async (request, h) => {
        const q = request.query as { path: string; mkdir_parents: boolean };
        const mtime = mtimeHeader(request);
        return withUserSession(sessions, request, `upload ${q.path}`, async (s) => {
          const vpath = s.path(q.path);
          // a batch of one: the stat of the destination and the write use the parent opened and checked once
          const fsBatch = new RequestFsBatch();
          try {
            await uploadFile(s, vpath, request.payload as Readable, { size: declaredLength(request), mtime, mkdirParents: q.mkdir_parents, fsBatch });
          } finally {
            await fsBatch.close();
          }
          return h.response({ message: 'upload completed' }).code(201);
        });
      },
    },
    {
      method: 'PATCH',
      path: '/api/v2/user/files',
      options: { auth: USER_AUTH, validate: { query: renameQuery } },
      handler: async (request) => {
        const q = request.query as { path: string; target: string };
        return withUserSession(sessions, request, `rename ${q.path}`, async (s) => {
          await s.rename(s.path(q.path), s.path(q.target));
          return { message: 'file renamed' };
        });
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/user/files',
      options: { auth: USER_AUTH, validate: { query: Joi.object({ path: pathQuery.required() }) } },
      handler: async (request) => {
        const q = request.query as { path: string };
        return withUserSession(sessions, request, `delete ${q.path}`, async (s) => {
          await s.removeFile(s.path(q.path));
          return { message: 'file deleted' };
        });
      },
    },
    {
      method: 'PATCH',
      path: '/api/v2/user/files/metadata',
      options: {
        auth: USER_AUTH,
        validate: {
          query: Joi.object({ path: pathQuery.required() }),
          payload: Joi.object({ modification_time: Joi.number().integer().min(0).max(253402300799999).required() }),
        },
      },
      handler: async (request) => {
        const q = request.query as { path: string };
        const p = request.payload as { modification_time: number };
        return withUserSession(sessions, request, `setstat ${q.path}`, async (s) => {
          await s.setMtime(s.path(q.path), new Date(p.modification_time));
          return { message: 'modification time updated' };
        });
      },
    },
  ];
}

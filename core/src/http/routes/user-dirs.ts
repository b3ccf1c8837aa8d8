import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH } from '../auth-strategies.js';
import type { FileInfo } from '../../fs/fs.contract.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import type { FileSession } from '../../vfs/file-session.js';
import { toDirEntry } from '../dir-entry.js';
import { boolQuery, closeAfter, destroyOnDisconnect, openUserSession, pathQuery, withUserSession } from '../user-session.js';

/** A JSON array streamed page by page (a listing is never held whole). */
export function jsonArray(pages: AsyncGenerator<FileInfo[]>): Readable {
  return Readable.from(
    (async function* () {
      let first = true;
      yield '[';
      for await (const page of pages) {
        if (page.length === 0) continue;
        const body = page.map((e) => JSON.stringify(toDirEntry(e))).join(',');
        yield first ? body : ',' + body;
        first = false;
      }
      yield ']';
    })(),
    { objectMode: false },
  );
}

/**
 * Answers a directory listing of session `s` (the path resolved by
 * `dirOf`), streamed; the session closes when the body is sent, or at once
 * when the listing is refused.
 */
export async function listingResponse(request: Request, h: ResponseToolkit, s: FileSession, dirOf: () => Promise<string> | string): Promise<ResponseObject> {
  try {
    const body = jsonArray(await s.list(await dirOf()));
    destroyOnDisconnect(request, body);
    closeAfter(s, body);
    return h.response(body).type('application/json');
  } catch (err) {
    await s.close();
    throw err;
  }
}

export function userDirRoutes(c: DependencyContainer): ServerRoute[] {
  const sessions = c.resolve(FileSessions);
  return [
    {
      method: 'GET',
      path: '/api/v2/user/dirs',
      options: { auth: USER_AUTH, validate: { query: Joi.object({ path: pathQuery.default('/') }) } },
      handler: async (request, h) => {
        const q = request.query as { path: string };
        const s = await openUserSession(sessions, request, `list ${q.path}`);
        return listingResponse(request, h, s, () => s.path(q.path));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/user/dirs',
      options: {
        auth: USER_AUTH,
        validate: { query: Joi.object({ path: pathQuery.required(), mkdir_parents: boolQuery.default(false) }) },
      },
      handler: async (request, h) => {
        const q = request.query as { path: string; mkdir_parents: boolean };
        return withUserSession(sessions, request, `mkdir ${q.path}`, async (s) => {
          await s.mkdir(s.path(q.path), q.mkdir_parents);
          return h.response({ message: 'directory created' }).code(201);
        });
      },
    },
    {
      method: 'PATCH',
      path: '/api/v2/user/dirs',
      options: { auth: USER_AUTH, validate: { query: Joi.object({ path: pathQuery.required(), target: pathQuery.required() }) } },
      handler: async (request) => {
        const q = request.query as { path: string; target: string };
        return withUserSession(sessions, request, `rename ${q.path}`, async (s) => {
          await s.rename(s.path(q.path), s.path(q.target));
          return { message: 'directory renamed' };
        });
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/user/dirs',
      options: { auth: USER_AUTH, validate: { query: Joi.object({ path: pathQuery.required() }) } },
      handler: async (request) => {
        const q = request.query as { path: string };
        return withUserSession(sessions, request, `rmdir ${q.path}`, async (s) => {
          await s.removeDir(s.path(q.path));
          return { message: 'directory deleted' };
        });
      },
    },
  ];
}

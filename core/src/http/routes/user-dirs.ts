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

/**
 * A listing answered in one body when its JSON is at most this long (a small
 * directory: no stream, no chunked encoding); a longer one is streamed page
 * by page from there on.
 */
export const WHOLE_LISTING_MAX = 64 * 1024;

/** The JSON of a page of entries, without the array's brackets ('' for an empty page). */
function pageJson(page: FileInfo[]): string {
  return page.map((e) => JSON.stringify(toDirEntry(e))).join(',');
}

/** A JSON array streamed page by page (a listing is never held whole), after the pages' JSON already read (`head`). */
export function jsonArray(pages: AsyncGenerator<FileInfo[]>, head: string[] = []): Readable {
  return Readable.from(
    (async function* () {
      let first = head.length === 0;
      yield '[' + head.join(',');
      for await (const page of pages) {
        if (page.length === 0) continue;
        const body = pageJson(page);
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
 * `dirOf`): in one body when it ends within WHOLE_LISTING_MAX bytes of JSON,
 * streamed otherwise. The session closes when the listing is read whole, or
 * when the streamed body is sent, or at once when the listing is refused.
 */
export async function listingResponse(request: Request, h: ResponseToolkit, s: FileSession, dirOf: () => Promise<string> | string): Promise<ResponseObject> {
  let pages: AsyncGenerator<FileInfo[]>;
  const head: string[] = [];
  try {
    pages = await s.list(await dirOf());
    for (let bytes = 0; bytes <= WHOLE_LISTING_MAX;) {
      const page = await pages.next().catch(async (err: unknown) => {
        await pages.return(undefined).catch(() => undefined);
        throw err;
      });
      if (page.done) {
        await s.close();
        return h.response(`[${head.join(',')}]`).type('application/json');
      }
      const json = pageJson(page.value);
      if (!json) continue;
      head.push(json);
      bytes += json.length;
    }
  } catch (err) {
    await s.close();
    throw err;
  }
  const body = jsonArray(pages, head);
  destroyOnDisconnect(request, body);
  closeAfter(s, body);
  return h.response(body).type('application/json');
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

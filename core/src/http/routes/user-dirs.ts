import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { Readable } from 'node:stream';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH } from '../../auth/strategies.js';
import type { FileInfo } from '../../fs/fs.contract.js';
import { FileSessions } from '../../services/file-sessions.service.js';
import { toDirEntry } from '../../vfs/file-session.js';
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
        try {
          const pages = await s.list(s.path(q.path));
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

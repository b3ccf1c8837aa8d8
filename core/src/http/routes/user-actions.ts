import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH } from '../auth-strategies.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { streamZip } from '../../vfs/zip-download.js';
import { closeAfter, destroyOnDisconnect, openUserSession, pathQuery, sendAsStored, withUserSession } from '../user-session.js';

const twoPaths = Joi.object({ path: pathQuery.required(), target: pathQuery.required() });

export function userActionRoutes(c: DependencyContainer): ServerRoute[] {
  const sessions = c.resolve(FileSessions);
  return [
    {
      method: 'POST',
      path: '/api/v2/user/file-actions/copy',
      options: { auth: USER_AUTH, validate: { query: twoPaths } },
      handler: async (request) => {
        const q = request.query as { path: string; target: string };
        return withUserSession(sessions, request, `copy ${q.path}`, async (s) => {
          await s.copy(s.path(q.path), s.path(q.target));
          return { message: 'copied' };
        });
      },
    },
    {
      method: 'POST',
      path: '/api/v2/user/file-actions/move',
      options: { auth: USER_AUTH, validate: { query: twoPaths } },
      handler: async (request) => {
        const q = request.query as { path: string; target: string };
        return withUserSession(sessions, request, `move ${q.path}`, async (s) => {
          await s.rename(s.path(q.path), s.path(q.target));
          return { message: 'moved' };
        });
      },
    },
    {
      method: 'POST',
      path: '/api/v2/user/streamzip',
      options: {
        auth: USER_AUTH,
        validate: { payload: Joi.array().items(pathQuery.required()).min(1).max(1000).required() },
      },
      handler: async (request, h) => {
        const paths = request.payload as string[];
        const s = await openUserSession(sessions, request, 'streamzip');
        try {
          const zip = await streamZip(s, [...new Set(paths.map((p) => s.path(p)))]);
          destroyOnDisconnect(request, zip.stream);
          closeAfter(s, zip.stream, zip.done);
          sendAsStored(request);
          return h.response(zip.stream).type('application/zip').header('Content-Disposition', 'attachment; filename="download.zip"');
        } catch (err) {
          await s.close();
          throw err;
        }
      },
    },
  ];
}

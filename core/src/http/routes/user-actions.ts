import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH } from '../auth-strategies.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { streamZip } from '../../vfs/zip-download.js';
import { closeAfter, destroyOnDisconnect, openUserSession, pathQuery, sendAsStored, withUserSession } from '../user-session.js';

const twoPaths = Joi.object({ path: pathQuery.required(), target: pathQuery.required() });
const zipPaths = Joi.array().items(pathQuery.required()).min(1).max(1000);

/** A zip of `paths` of the caller's session, streamed (the session closes when it is sent). */
async function zipResponse(sessions: FileSessions, request: Request, h: ResponseToolkit, paths: string[]): Promise<ResponseObject> {
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
}

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
        validate: { payload: zipPaths.required() },
      },
      handler: (request, h) => zipResponse(sessions, request, h, request.payload as string[]),
    },
    {
      // an addition to v2.7 (docs/api-compatibility.md "Zip download by link"): the same zip for a link or a
      // form a browser follows, which streams the download to disk (a POST with a JSON body cannot be one)
      method: 'GET',
      path: '/api/v2/user/streamzip',
      options: {
        auth: USER_AUTH,
        description: 'Streams a zip of files and directories (the paths as repeated `path` query parameters)',
        validate: { query: Joi.object({ path: zipPaths.single().required() }) },
      },
      handler: (request, h) => zipResponse(sessions, request, h, (request.query as { path: string[] }).path),
    },
  ];
}

import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH } from '../auth-strategies.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { pathQuery, withUserSession } from '../user-session.js';

const usage = Joi.object({
  used: Joi.number().integer().min(0).required(),
  limit: Joi.number().integer().min(0).required().description('0: no limit'),
});

const capabilitiesAnswer = Joi.object({
  path: Joi.string().required(),
  permissions: Joi.array()
    .items(Joi.string())
    .required()
    .description('the permissions in force for the path (those of the deepest configured path that is it or one of its ancestors; "*" grants all)'),
  web_client: Joi.array().items(Joi.string()).required().description('the filters.webclient options of the account (groups merged)'),
  quota: Joi.object({ size: usage.required(), files: usage.required() })
    .required()
    .description("the quota the path counts against (the user's, or its virtual folder's own), with the stored usage"),
}).description('UserCapabilities');

/**
 * What the calling user may do in a folder, and the quota it counts
 * against (an addition to v2.7, docs/api-compatibility.md "User
 * capabilities"): front-ends hide what is not allowed; every file route
 * still checks the same permissions itself.
 */
export function userCapabilityRoutes(c: DependencyContainer): ServerRoute[] {
  const sessions = c.resolve(FileSessions);
  return [
    {
      method: 'GET',
      path: '/api/v2/user/capabilities',
      options: {
        auth: USER_AUTH,
        description: 'Permissions, web client options and quota usage of the user for a folder',
        plugins: { ferry: { responses: { 200: { description: 'the capabilities', schema: capabilitiesAnswer } } } },
        validate: { query: Joi.object({ path: pathQuery.default('/') }) },
      },
      handler: (request) => {
        const q = request.query as { path: string };
        return withUserSession(sessions, request, `capabilities ${q.path}`, async (s) => {
          const vpath = s.path(q.path);
          return {
            path: vpath,
            permissions: [...s.perms.forPath(vpath)].sort(),
            web_client: [...((s.user.filters.web_client as string[] | undefined) ?? [])].sort(),
            quota: await s.quota(vpath),
          };
        });
      },
    },
  ];
}

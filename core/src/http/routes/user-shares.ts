import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH, userOf } from '../auth-strategies.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { ShareService, canShare, sharePasswordRequired } from '../../shares/share.service.js';
import { actorOf } from '../server.js';
import { listParams, listQuery, pathParam } from '../../util/common.input.js';
import { shareId, shareInput, type ShareInput } from '../../shares/share.input.js';
import { UnauthorizedError } from '../../errors.js';
import { withUserSession } from '../user-session.js';
import { locationOf } from '../location.js';

const idParams = Joi.object({ id: shareId.required() });

const days = () => Joi.number().integer().min(0);
/** GET /api/v2/user/share-policy (an addition to v2.7, docs/api-compatibility.md): what the caller's shares may be. */
const sharePolicyAnswer = Joi.object({
  shares_allowed: Joi.boolean().required().description('false when the web client option shares-disabled applies: every /user/shares route answers 403'),
  password_required: Joi.boolean()
    .required()
    .description('true when shares-without-password-disabled (or share_no_password_disabled) applies: a share without password is a 400'),
  default_expiration_days: days()
    .required()
    .description('filters.default_shares_expiration: a new share without expires_at expires after so many days (0: none)'),
  max_expiration_days: days().required().description('filters.max_shares_expiration: every share must expire within so many days (0: no limit)'),
}).description('SharePolicy');

/** /user/shares: the owner's share management (user JWT or API key). */
export function userShareRoutes(c: DependencyContainer): ServerRoute[] {
  const shares = c.resolve(ShareService);
  const sessions = c.resolve(FileSessions);
  return [
    {
      method: 'GET',
      path: '/api/v2/user/share-policy',
      options: {
        auth: USER_AUTH,
        plugins: { ferry: { responses: { 200: { description: 'SharePolicy', schema: sharePolicyAnswer } }, errors: [401] } },
      },
      handler: async (request) => {
        const u = await sessions.effectiveUser(userOf(request).user.username);
        if (!u) throw new UnauthorizedError('the account no longer exists');
        const f = u.filters as { default_shares_expiration?: number; max_shares_expiration?: number };
        return {
          shares_allowed: canShare(u),
          password_required: sharePasswordRequired(u),
          default_expiration_days: f.default_shares_expiration ?? 0,
          max_expiration_days: f.max_shares_expiration ?? 0,
        };
      },
    },
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
  ];
}

import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { USER_AUTH, userOf } from '../auth-strategies.js';
import { FileSessions } from '../../vfs/file-sessions.service.js';
import { ShareService, canShare, sharePasswordRequired } from '../../shares/share.service.js';
import { policyChangeDisabled, policyScope, sharePolicies } from '../../shares/share-policy.js';
import { actorOf } from '../server.js';
import { listParams, listQuery, pathParam } from '../../util/common.input.js';
import { shareId, shareInput, type ShareInput } from '../../shares/share.input.js';
import { UnauthorizedError } from '../../errors.js';
import { withUserSession } from '../user-session.js';
import { locationOf } from '../location.js';

const idParams = Joi.object({ id: shareId.required() });

/** What POST and PUT /user/shares check against the owner's share policies (core/src/shares/share-policy.ts). */
const SHARE_RULES =
  'The share policies of the owner apply (GET /api/v2/user/share-policy): the rule of each share path is the filters.default_shares_policies ' +
  'entry whose path is its longest prefix, segment by segment; its permissions allow a scope (read: 1, write or upload: 2, both or *: 3). ' +
  'Without scope, the share takes the scope the rules of its paths allow (400 when none applies). With the web client option ' +
  'share_policy_change_disabled, a scope beyond the rule of one of its paths is a 400 naming the path and the rule; without it the rules ' +
  'are only that default. shares-without-password-disabled (share_no_password_disabled) refuses a share without password and ' +
  'max_shares_expiration one without expiry or expiring later (400).';

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
  policies: Joi.array()
    .items(
      Joi.object({
        path: Joi.string().required().description('the rule applies to the share paths it is the longest prefix of, segment by segment'),
        permissions: Joi.array().items(Joi.string()).required().description('as stored: read; write or upload; * for both'),
        scope: Joi.number()
          .integer()
          .valid(0, 1, 2, 3)
          .required()
          .description('the scope the permissions allow, as a bit set: 0 none, 1 read, 2 write, 3 read and write (so 1 and 2 too)'),
      }).description('SharePolicyRule'),
    )
    .required()
    .description(
      "filters.default_shares_policies (the user's, then its groups'): the scope of a share created without one; the allowed scopes of every share path is the intersection over its paths",
    ),
  policy_change_disabled: Joi.boolean()
    .required()
    .description('share_policy_change_disabled applies: a share whose scope goes beyond the rule of one of its paths is a 400 (create and update)'),
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
        description: "What the caller's shares may be",
        notes: SHARE_RULES,
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
          policies: sharePolicies(u).map((p) => ({ path: p.path, permissions: [...p.permissions], scope: policyScope(p.permissions) })),
          policy_change_disabled: policyChangeDisabled(u),
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
      options: { auth: USER_AUTH, description: 'Creates a share of the caller', notes: SHARE_RULES, validate: { payload: shareInput } },
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
      options: { auth: USER_AUTH, description: 'Replaces a share of the caller', notes: SHARE_RULES, validate: { params: idParams, payload: shareInput } },
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

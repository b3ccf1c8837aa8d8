import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { clientIp } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { objectName, pathParam } from '../../util/common.input.js';
import { PasswordResetService } from '../../auth/password-reset.service.js';
import type { AccountKind } from '../../auth/two-factor.service.js';

const usernameParam = Joi.object({ username: objectName.required() });
const resetInput = Joi.object({
  code: Joi.string().trim().min(1).max(64).required(),
  password: Joi.string().min(1).max(4096).required(),
});

/** The answer to every accepted forgot-password request, whether or not the account exists. */
const apiResponse = { description: 'ApiResponse', schema: Joi.object({ message: Joi.string() }) };
const SENT = { message: 'if the account exists and can reset its password, a code has been mailed to its email address' };

/** Forgot/reset password of admins and users: no credentials (api-spec.md "Authentication"). */
export function passwordResetRoutes(c: DependencyContainer): ServerRoute[] {
  const resets = c.resolve(PasswordResetService);
  const routes = (kind: AccountKind): ServerRoute[] => [
    {
      method: 'POST',
      path: `/api/v2/${kind}s/{username}/forgot-password`,
      options: { auth: false, plugins: { ferry: { responses: { 200: apiResponse }, errors: [429] } }, validate: { params: usernameParam } },
      handler: async (request) => {
        // the account's work starts once this answer is written (finish), or the client went away (close)
        const res = request.raw.res;
        const answered = new Promise<void>((resolve) => {
          res.once('finish', resolve);
          res.once('close', resolve);
        });
        await resets.forgot(kind, pathParam(request, 'username'), clientIp(request), answered);
        return SENT;
      },
    },
    {
      method: 'POST',
      path: `/api/v2/${kind}s/{username}/reset-password`,
      options: {
        auth: false,
        plugins: { ferry: { responses: { 200: apiResponse }, errors: [403] } },
        validate: { params: usernameParam, payload: resetInput },
      },
      handler: async (request) => {
        const p = request.payload as { code: string; password: string };
        const username = pathParam(request, 'username');
        await resets.reset(kind, username, p.code, p.password, clientIp(request), { ...actorOf(request), username });
        return { message: 'password reset: log in with the new password' };
      },
    },
  ];
  return [...routes('admin'), ...routes('user')];
}

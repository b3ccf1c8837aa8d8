import crypto from 'node:crypto';
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import type { Share } from '../../data/entities/index.js';
import { DomainError, ErrorKind } from '../../errors.js';
import { Protocol } from '../../sdk/protocols.js';
import { ShareCodesService } from '../../shares/share-codes.service.js';
import { shareEmail, shareId } from '../../shares/share.input.js';
import { ShareService, type ShareCredentials } from '../../shares/share.service.js';
import { pathParam } from '../../util/common.input.js';
import { clientIp } from '../auth-strategies.js';
import { ApiResponse } from '../openapi/answers.js';
import { shareCredentials } from '../share-access.js';
import { shareCookieOf, shareSessionCookie } from '../share-web-session.js';

const idParams = Joi.object({ id: shareId.required() });

const openInput = Joi.object({
  password: Joi.string().min(1).max(4096).description('the share password'),
  email: shareEmail.description('an address the share lists (email-restricted shares)'),
  code: Joi.string().trim().min(1).max(64).description('the one-time code mailed to that address (POST /api/v2/shares/{id}/codes)'),
})
  .xor('password', 'email')
  .and('email', 'code')
  .description('ShareWebSessionRequest: the password, or an address and its code');

const publicShare = Joi.object({
  id: Joi.string().required(),
  name: Joi.string().required(),
  description: Joi.string().allow('').required(),
  scope: Joi.number().integer().valid(1, 2, 3).required().description('1 read, 2 write, 3 read and write'),
  expires_at: Joi.number().integer().required().description('unix time in milliseconds; 0: never'),
  max_tokens: Joi.number().integer().required().description('maximum number of uses; 0: no limit'),
  used_tokens: Joi.number().integer().required(),
  protected: Joi.boolean().required().description('the share asks for a password or a one-time code'),
}).description('PublicShare');

const sessionAnswer = Joi.object({
  share: publicShare.required(),
  csrf_token: Joi.string().description('with a share web session: send it as X-CSRF-Token with every state-changing request the cookie authenticates'),
  expires_at: Joi.string().isoDate().description('with a share web session: when it ends (each GET renews it)'),
}).description('ShareWebSession');

const credentialsRefused = Joi.object({
  message: Joi.string().required(),
  error: Joi.string().required(),
  password_required: Joi.boolean().required().description('the share has a password'),
  email_codes: Joi.boolean().required().description('the share is email-restricted: one-time codes are mailed to its addresses'),
}).description('ShareCredentialsRequired');

const accessRefused = Joi.object({
  message: Joi.string().required(),
  error: Joi.string().required(),
  reason: Joi.string()
    .valid('expired', 'address', 'denied')
    .required()
    .description('expired: the share has expired; address: not reachable from the client address; denied: anything else (scope, owner)'),
}).description('ShareAccessRefused');

const info = (s: Share) => ({
  id: s.share_id,
  name: s.name,
  description: s.description,
  scope: s.scope,
  expires_at: s.expires_at,
  max_tokens: s.max_tokens,
  used_tokens: s.used_tokens,
  protected: !!(s.password_hash || s.emails.length),
});

/**
 * Share web sessions (an addition to v2.7, docs/api-compatibility.md "Share
 * web sessions", core/src/http/share-web-session.ts): POST opens one with
 * the share password or an address and its one-time code and sets the
 * HttpOnly cookie ferry_share_<id>; GET tells what the share page shows (and
 * renews the session); DELETE clears the cookie.
 */
export function shareWebSessionRoutes(c: DependencyContainer): ServerRoute[] {
  const shares = c.resolve(ShareService);
  const codes = c.resolve(ShareCodesService);
  const path = '/api/v2/shares/{id}/web-session';

  /**
   * A refused request as the page needs it: what to ask for (401, without a Basic challenge, which would make
   * the browser prompt) or why there is no access (403); the cookie cleared.
   */
  const refusal = async (request: Request, h: ResponseToolkit, id: string, err: unknown) => {
    if (!(err instanceof DomainError) || (err.kind !== ErrorKind.Unauthorized && err.kind !== ErrorKind.Forbidden)) throw err;
    const guards = await shares.guardsOf(id, clientIp(request));
    if (!guards) throw Boom.notFound(`share "${id}" not found`);
    const r =
      err.kind === ErrorKind.Unauthorized
        ? h.response({ message: err.message, error: 'Unauthorized', password_required: guards.password, email_codes: guards.emails }).code(401)
        : h
            .response({ message: err.message, error: 'Forbidden', reason: guards.expired ? 'expired' : !guards.addressAllowed ? 'address' : 'denied' })
            .code(403);
    if (shareCookieOf(request, id)) r.header('set-cookie', shareSessionCookie(request, id, '', 0));
    return r.header('cache-control', 'no-store');
  };

  /** Checks `creds` on the share (any scope; uses are shown, not taken) and answers its session with a fresh cookie when `csrf` is set. */
  const answer = async (request: Request, h: ResponseToolkit, creds: ShareCredentials, opening: boolean) => {
    const id = pathParam(request, 'id');
    let out;
    try {
      out = await shares.authorize(id, clientIp(request), creds, () => true, { protocol: Protocol.HTTPShare, ignoreTokens: true });
    } catch (err) {
      return refusal(request, h, id, err);
    }
    const { share, email } = out;
    if (opening && !share.password_hash && !share.emails.length) throw Boom.badRequest('this share has no password: it needs no web session');
    const csrf = opening ? crypto.randomBytes(24).toString('base64url') : out.csrf;
    if (!csrf) return h.response({ share: info(share) }).header('cache-control', 'no-store');
    const token = await codes.issueToken(share, email, { csrf });
    return h
      .response({ share: info(share), csrf_token: csrf, expires_at: token.expires_at })
      .header('cache-control', 'no-store')
      .header('set-cookie', shareSessionCookie(request, id, token.access_token, codes.tokenLifetimeSeconds));
  };

  return [
    {
      method: 'POST',
      path,
      options: {
        auth: false,
        // JSON only: a cross-site form cannot open a session in the browser (login CSRF)
        payload: { allow: 'application/json' },
        validate: { params: idParams, payload: openInput },
        plugins: {
          ferry: {
            responses: {
              200: {
                description: 'the share web session is open: cookie ferry_share_<id> set (HttpOnly, SameSite=Strict, Path=/api/v2/)',
                schema: sessionAnswer,
              },
              401: { description: 'wrong password or code: what the share asks for', schema: credentialsRefused },
              403: { description: 'no access to the share', schema: accessRefused },
            },
            errors: [400, 404, 415, 429],
          },
        },
      },
      handler: async (request, h) => {
        const p = request.payload as { password?: string; email?: string; code?: string };
        const creds: ShareCredentials = p.password !== undefined ? { password: p.password } : { username: p.email!, password: p.code! };
        return answer(request, h, creds, true);
      },
    },
    {
      method: 'GET',
      path,
      options: {
        auth: false,
        validate: { params: idParams },
        plugins: {
          ferry: {
            responses: {
              200: { description: 'the share as its page shows it; with the cookie, the session (renewed: a new cookie)', schema: sessionAnswer },
              401: { description: 'the share asks for a password or a one-time code (no session, or it ended)', schema: credentialsRefused },
              403: { description: 'no access to the share', schema: accessRefused },
            },
            errors: [404],
          },
        },
      },
      handler: (request, h) => answer(request, h, shareCredentials(request, pathParam(request, 'id')), false),
    },
    {
      method: 'DELETE',
      path,
      options: {
        auth: false,
        validate: { params: idParams },
        plugins: { ferry: { responses: { 200: { description: 'the cookie of the share web session is cleared', schema: ApiResponse } } } },
      },
      handler: (request, h) =>
        h
          .response({ message: 'share web session closed' })
          .header('set-cookie', shareSessionCookie(request, pathParam(request, 'id'), '', 0))
          .header('cache-control', 'no-store'),
    },
  ];
}

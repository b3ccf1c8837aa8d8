import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import type { HttpBinding } from '../../config/schema.js';
import type { OidcBindingConfig } from '../../config/oidc.schema.js';
import { clientIp } from '../auth-strategies.js';
import { OidcLoginError, OidcService, OIDC_CALLBACK_PATH, type OidcCallbackQuery } from '../../auth/oidc/oidc.service.js';
import type { OidcLoginKind } from '../../auth/oidc/oidc-claims.js';

const STATUS_ERROR: Record<OidcLoginError['status'], string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  502: 'Bad Gateway',
};

/** The OIDC settings of the binding serving the request; 404 when OIDC is off there. */
function oidcOf(request: Request): OidcBindingConfig {
  const b = (request.server.settings.app as { binding?: HttpBinding } | undefined)?.binding;
  if (!b?.oidc?.config_url) throw new OidcLoginError(404, 'OIDC login is not configured on this binding');
  return b.oidc;
}

/** Answers an OidcLoginError with its own status and message (also a 502, whose message names the provider, not a secret). */
function refuse(h: ResponseToolkit, err: unknown) {
  if (!(err instanceof OidcLoginError)) throw err;
  return h.response({ message: err.message, error: STATUS_ERROR[err.status] }).code(err.status).type('application/json');
}

/**
 * Identity-provider (OIDC) login for the REST API (docs/oidc.md):
 * GET /api/v2/oidc/login redirects to the provider, the provider redirects
 * the browser to GET /api/v2/oidc/callback, which answers a Ferry token.
 */
export function oidcRoutes(c: DependencyContainer): ServerRoute[] {
  const service = c.resolve(OidcService);
  return [
    {
      method: 'GET',
      path: '/api/v2/oidc/login',
      options: {
        auth: false,
        validate: { query: Joi.object({ target: Joi.string().valid('admin', 'user').default('user') }) },
      },
      handler: async (request, h) => {
        try {
          const url = await service.start(oidcOf(request), (request.query as { target: OidcLoginKind }).target);
          return h.redirect(url.href).code(302).header('cache-control', 'no-store');
        } catch (err) {
          return refuse(h, err);
        }
      },
    },
    {
      method: 'GET',
      path: OIDC_CALLBACK_PATH,
      options: {
        auth: false,
        validate: {
          // the provider may add parameters (iss, session_state, error_description...)
          query: Joi.object({
            state: Joi.string().min(1).max(512).required(),
            code: Joi.string().min(1).max(4096),
            error: Joi.string().max(256).pattern(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/),
          }).unknown(true),
        },
      },
      handler: async (request, h) => {
        try {
          const o = oidcOf(request);
          const token = await service.finish(o, request.query as unknown as OidcCallbackQuery, request.url.search, clientIp(request));
          return h.response(token).header('cache-control', 'no-store');
        } catch (err) {
          return refuse(h, err);
        }
      },
    },
  ];
}

import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { ApiKeyService } from '../../accounts/api-key.service.js';
import { USER_BEARER_OR_WEB, userOf } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { pathParam } from '../../util/common.input.js';
import { locationOf } from '../location.js';

const idParam = Joi.object({
  id: Joi.string()
    .pattern(/^[A-Za-z0-9_-]{1,64}$/)
    .required(),
});

const ownKeyInput = Joi.object({
  name: Joi.string().trim().min(1).max(255).required(),
  description: Joi.string().allow('').max(4096).default(''),
  expires_at: Joi.number().integer().min(0).default(0).description('Unix time in milliseconds (0: never)'),
});

/**
 * A user's own API keys (an addition to v2.7, docs/web-client.md "Profile"):
 * user-scoped keys bound to the caller, listed, created (the key shown once)
 * and deleted by the user. Bearer token or web session only (an API key
 * cannot manage API keys); creation needs the account's API key login on.
 */
export function userApiKeyRoutes(c: DependencyContainer): ServerRoute[] {
  const keys = c.resolve(ApiKeyService);
  const auth = USER_BEARER_OR_WEB;
  return [
    {
      method: 'GET',
      path: '/api/v2/user/apikeys',
      options: { auth },
      handler: async (request) => (await keys.listOwn(userOf(request).user.username)).map((k) => keys.render(k)),
    },
    {
      method: 'POST',
      path: '/api/v2/user/apikeys',
      options: { auth, validate: { payload: ownKeyInput }, plugins: { ferry: { errors: [403] } } },
      handler: async (request, h) => {
        const input = request.payload as { name: string; description: string; expires_at: number };
        const { key, plain } = await keys.createOwn(userOf(request).user.username, input, actorOf(request));
        return h
          .response({ message: 'API key created. This is the only time the key is visible, please save it.', id: key.key_id, key: plain })
          .code(201)
          .header('X-Object-ID', key.key_id)
          .header('Location', locationOf('/api/v2/user/apikeys', key.key_id));
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/user/apikeys/{id}',
      options: { auth, validate: { params: idParam } },
      handler: async (request) => {
        await keys.deleteOwn(userOf(request).user.username, pathParam(request, 'id'), actorOf(request));
        return { message: 'API key deleted' };
      },
    },
  ];
}

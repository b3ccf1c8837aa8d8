import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { ApiKeyService, type ApiKeyInput } from '../../accounts/api-key.service.js';
import { ADMIN_BEARER_ONLY, adminOf } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { listQuery, listParams, pathParam } from '../../util/common.input.js';
import { apiKeyInput } from '../../accounts/api-key.input.js';
import { locationOf } from '../location.js';

const idParam = Joi.object({
  id: Joi.string()
    .pattern(/^[A-Za-z0-9_-]{1,64}$/)
    .required(),
});

/**
 * /apikeys: bearer token only (an API key cannot manage API keys), `*` required;
 * an admin with a role manages only keys bound to accounts of its role.
 */
export function apiKeyRoutes(c: DependencyContainer): ServerRoute[] {
  const keys = c.resolve(ApiKeyService);
  return [
    {
      method: 'GET',
      path: '/api/v2/apikeys',
      options: { auth: ADMIN_BEARER_ONLY, validate: { query: listQuery } },
      handler: async (request) => (await keys.list(listParams(request), adminOf(request).admin)).map((k) => keys.render(k)),
    },
    {
      method: 'POST',
      path: '/api/v2/apikeys',
      options: { auth: ADMIN_BEARER_ONLY, validate: { payload: apiKeyInput } },
      handler: async (request, h) => {
        const { key, plain } = await keys.create(request.payload as ApiKeyInput, adminOf(request).admin, actorOf(request));
        return h
          .response({ mesage: 'API key created. This is the only time the key is visible, please save it.', key: plain })
          .code(201)
          .header('X-Object-ID', key.key_id)
          .header('Location', locationOf('/api/v2/apikeys', key.key_id));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/apikeys/{id}',
      options: { auth: ADMIN_BEARER_ONLY, validate: { params: idParam } },
      handler: async (request) => keys.render(await keys.get(pathParam(request, 'id'), adminOf(request).admin)),
    },
    {
      method: 'PUT',
      path: '/api/v2/apikeys/{id}',
      options: { auth: ADMIN_BEARER_ONLY, validate: { params: idParam, payload: apiKeyInput } },
      handler: async (request) => {
        await keys.update(pathParam(request, 'id'), request.payload as ApiKeyInput, adminOf(request).admin, actorOf(request));
        return { message: 'API key updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/apikeys/{id}',
      options: { auth: ADMIN_BEARER_ONLY, validate: { params: idParam } },
      handler: async (request) => {
        await keys.delete(pathParam(request, 'id'), adminOf(request).admin, actorOf(request));
        return { message: 'API key deleted' };
      },
    },
  ];
}

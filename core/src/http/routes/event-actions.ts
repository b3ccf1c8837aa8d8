import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { EventActionService } from '../../event-manager/event-action.service.js';
import { ADMIN_AUTH } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { confidentialQuery, listQuery, listParams, objectName, pathParam } from '../../util/common.input.js';
import { actionInput, type ActionInput } from '../../event-manager/event.input.js';
import { locationOf, renderCreated } from '../location.js';

const nameParam = Joi.object({ name: objectName.required() });
const confidential = (request: { query: unknown }) => (request.query as { confidential_data?: number }).confidential_data === 1;

/** /api/v2/eventactions: CRUD of event actions (permission "*"). */
export function eventActionRoutes(c: DependencyContainer): ServerRoute[] {
  const actions = c.resolve(EventActionService);
  return [
    {
      method: 'GET',
      path: '/api/v2/eventactions',
      options: { auth: ADMIN_AUTH, validate: { query: listQuery } },
      handler: async (request) => {
        const em = actions.em();
        const list = await actions.list(listParams(request));
        return Promise.all(list.map((a) => actions.render(a, false, em)));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/eventactions',
      options: { auth: ADMIN_AUTH, validate: { payload: actionInput, query: confidentialQuery } },
      handler: async (request, h) => {
        const a = await actions.create(request.payload as ActionInput, actorOf(request));
        const body = await renderCreated(
          () => actions.render(a, confidential(request)),
          () => actions.delete(a.name, actorOf(request)),
        );
        return h.response(body).code(201).header('Location', locationOf('/api/v2/eventactions', a.name));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/eventactions/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam, query: confidentialQuery } },
      handler: async (request) => actions.render(await actions.get(pathParam(request, 'name')), confidential(request)),
    },
    {
      method: 'PUT',
      path: '/api/v2/eventactions/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam, payload: actionInput } },
      handler: async (request) => {
        await actions.update(pathParam(request, 'name'), request.payload as ActionInput, actorOf(request));
        return { message: 'event action updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/eventactions/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam } },
      handler: async (request) => {
        await actions.delete(pathParam(request, 'name'), actorOf(request));
        return { message: 'event action deleted' };
      },
    },
  ];
}

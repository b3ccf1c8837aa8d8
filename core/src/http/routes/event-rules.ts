import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { EventRuleService } from '../../event-manager/event-rule.service.js';
import { EventManager } from '../../event-manager/event-manager.js';
import { ADMIN_AUTH } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { confidentialQuery, listQuery, listParams, objectName, pathParam } from '../../util/common.input.js';
import { ruleInput, type RuleInput } from '../../event-manager/event.input.js';
import { locationOf, renderCreated } from '../location.js';

const nameParam = Joi.object({ name: objectName.required() });
const confidential = (request: { query: unknown }) => (request.query as { confidential_data?: number }).confidential_data === 1;

/** /api/v2/eventrules: CRUD of event rules and on-demand runs (permission "*"). */
export function eventRuleRoutes(c: DependencyContainer): ServerRoute[] {
  const rules = c.resolve(EventRuleService);
  const manager = c.resolve(EventManager);
  return [
    {
      method: 'GET',
      path: '/api/v2/eventrules',
      options: { auth: ADMIN_AUTH, validate: { query: listQuery } },
      handler: async (request) => {
        const em = rules.em();
        const list = await rules.list(listParams(request));
        return Promise.all(list.map((r) => rules.render(r, false, em)));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/eventrules',
      options: { auth: ADMIN_AUTH, validate: { payload: ruleInput, query: confidentialQuery } },
      handler: async (request, h) => {
        const r = await rules.create(request.payload as RuleInput, actorOf(request));
        const body = await renderCreated(
          () => rules.render(r, confidential(request)),
          () => rules.delete(r.name, actorOf(request)),
        );
        return h.response(body).code(201).header('Location', locationOf('/api/v2/eventrules', r.name));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/eventrules/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam, query: confidentialQuery } },
      handler: async (request) => rules.render(await rules.get(pathParam(request, 'name')), confidential(request)),
    },
    {
      method: 'PUT',
      path: '/api/v2/eventrules/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam, payload: ruleInput } },
      handler: async (request) => {
        await rules.update(pathParam(request, 'name'), request.payload as RuleInput, actorOf(request));
        return { message: 'event rule updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/eventrules/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam } },
      handler: async (request) => {
        await rules.delete(pathParam(request, 'name'), actorOf(request));
        return { message: 'event rule deleted' };
      },
    },
    {
      method: 'POST',
      path: '/api/v2/eventrules/run/{name}',
      options: { auth: ADMIN_AUTH, validate: { params: nameParam } },
      handler: async (request, h) => {
        await manager.runOnDemand(pathParam(request, 'name'), actorOf(request));
        return h.response({ message: 'event rule started' }).code(202);
      },
    },
  ];
}

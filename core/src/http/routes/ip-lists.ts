import type { Request, ServerRoute } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { IpListService, renderIpListEntry } from '../../security/ip-list.service.js';
import { ADMIN_AUTH } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import {
  ipListEntryCreate,
  ipListEntryParams,
  ipListEntryUpdate,
  ipListParams,
  ipListQuery,
  type IpListEntryInput,
  type IpListQuery,
  type IpListType,
} from '../../security/ip-list.input.js';
import { locationOf } from '../location.js';

const perm = { ferry: { permission: 'manage_ip_lists' as const } };

const typeOf = (request: Request) => (request.params as { type: IpListType }).type;
/** The canonical network of the path (the schema converted what the client sent: `10.0.0.1` finds `10.0.0.1/32`). */
const ipOf = (request: Request) => (request.params as { ipornet: string }).ipornet;

/**
 * `/api/v2/iplists/{type}[/{ipornet}]`. The network in the path may carry its
 * `/` URL-encoded (`10.0.0.0%2F8`) or plain (`10.0.0.0/8`).
 */
export function ipListRoutes(c: DependencyContainer): ServerRoute[] {
  const ipLists = c.resolve(IpListService);
  return [
    {
      method: 'GET',
      path: '/api/v2/iplists/{type}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: ipListParams, query: ipListQuery } },
      handler: async (request) => (await ipLists.list(typeOf(request), request.query as unknown as IpListQuery)).map(renderIpListEntry),
    },
    {
      method: 'POST',
      path: '/api/v2/iplists/{type}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: ipListParams, payload: ipListEntryCreate } },
      handler: async (request, h) => {
        const type = typeOf(request);
        const entry = await ipLists.create(type, request.payload as IpListEntryInput, actorOf(request));
        return h
          .response({ message: 'IP list entry added' })
          .code(201)
          .header('Location', locationOf('/api/v2/iplists', type, entry.ipornet));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/iplists/{type}/{ipornet*}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: ipListEntryParams } },
      handler: async (request) => renderIpListEntry(await ipLists.get(typeOf(request), ipOf(request))),
    },
    {
      method: 'PUT',
      path: '/api/v2/iplists/{type}/{ipornet*}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: ipListEntryParams, payload: ipListEntryUpdate } },
      handler: async (request) => {
        await ipLists.update(typeOf(request), ipOf(request), request.payload as IpListEntryInput, actorOf(request));
        return { message: 'IP list entry updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/iplists/{type}/{ipornet*}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: ipListEntryParams } },
      handler: async (request) => {
        await ipLists.delete(typeOf(request), ipOf(request), actorOf(request));
        return { message: 'IP list entry deleted' };
      },
    },
  ];
}

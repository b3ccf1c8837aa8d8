import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { FolderService } from '../../accounts/folder.service.js';
import { ADMIN_AUTH } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { confidentialQuery, listParams, listQuery, objectName, pathParam } from '../../util/common.input.js';
import { folderCreateInput, folderInput, type FolderInput } from '../../accounts/folder.input.js';
import { wantsConfidential } from './users.js';
import { locationOf, renderCreated } from '../location.js';

const nameParam = Joi.object({ name: objectName.required() });
const perm = { ferry: { permission: 'manage_folders' as const } };

/** /folders: CRUD (manage_folders). */
export function folderRoutes(c: DependencyContainer): ServerRoute[] {
  const folders = c.resolve(FolderService);
  return [
    {
      method: 'GET',
      path: '/api/v2/folders',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { query: listQuery } },
      handler: async (request) => {
        const em = folders.em();
        return folders.renderMany(await folders.list(listParams(request), em), {}, em);
      },
    },
    {
      method: 'POST',
      path: '/api/v2/folders',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { payload: folderCreateInput, query: confidentialQuery } },
      handler: async (request, h) => {
        const folder = await folders.create(request.payload as FolderInput, actorOf(request));
        const body = await renderCreated(
          () => folders.render(folder, { confidential: wantsConfidential(request) }),
          () => folders.delete(folder.name, actorOf(request)),
        );
        return h.response(body).code(201).header('Location', locationOf('/api/v2/folders', folder.name));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/folders/{name}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam, query: confidentialQuery } },
      handler: async (request) => folders.render(await folders.get(pathParam(request, 'name')), { confidential: wantsConfidential(request) }),
    },
    {
      method: 'PUT',
      path: '/api/v2/folders/{name}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam, payload: folderInput } },
      handler: async (request) => {
        await folders.update(pathParam(request, 'name'), request.payload as FolderInput, actorOf(request));
        return { message: 'folder updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/folders/{name}',
      options: { auth: ADMIN_AUTH, plugins: perm, validate: { params: nameParam } },
      handler: async (request) => {
        await folders.delete(pathParam(request, 'name'), actorOf(request));
        return { message: 'folder deleted' };
      },
    },
  ];
}

import type { Request, ServerRoute } from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { AdminService } from '../../accounts/admin.service.js';
import { ADMIN_AUTH, adminOf } from '../auth-strategies.js';
import { actorOf } from '../server.js';
import { listQuery, objectName, listParams, pathParam } from '../../util/common.input.js';
import { adminInput, adminProfileInput, pwdChangeInput, type AdminInput } from '../../accounts/admin.input.js';
import { locationOf, renderCreated } from '../location.js';

const usernameParam = Joi.object({ username: objectName.required() });

/** The admin impersonated through an API key cannot be updated with that key (profile and password included). */
function refuseApiKey(request: Request): string {
  const creds = adminOf(request);
  if (creds.apiKeyId) throw Boom.forbidden('the admin impersonated through an API key cannot be updated with that key');
  return creds.admin.username;
}

export function adminRoutes(c: DependencyContainer): ServerRoute[] {
  const admins = c.resolve(AdminService);
  const self = { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'any' as const } } };
  return [
    {
      method: 'GET',
      path: '/api/v2/admins',
      options: { auth: ADMIN_AUTH, validate: { query: listQuery } },
      handler: async (request) => {
        const list = await admins.list(listParams(request), adminOf(request).admin);
        return Promise.all(list.map((a) => admins.render(a)));
      },
    },
    {
      method: 'POST',
      path: '/api/v2/admins',
      options: { auth: ADMIN_AUTH, validate: { payload: adminInput } },
      handler: async (request, h) => {
        const caller = adminOf(request).admin;
        const admin = await admins.create(request.payload as AdminInput, caller, actorOf(request));
        const body = await renderCreated(
          () => admins.render(admin),
          () => admins.delete(admin.username, caller, actorOf(request)),
        );
        return h.response(body).code(201).header('Location', locationOf('/api/v2/admins', admin.username));
      },
    },
    {
      method: 'GET',
      path: '/api/v2/admins/{username}',
      options: { auth: ADMIN_AUTH, validate: { params: usernameParam } },
      handler: async (request) => admins.render(await admins.get(pathParam(request, 'username'), adminOf(request).admin)),
    },
    {
      method: 'PUT',
      path: '/api/v2/admins/{username}',
      options: { auth: ADMIN_AUTH, validate: { params: usernameParam, payload: adminInput } },
      handler: async (request) => {
        const creds = adminOf(request);
        await admins.update(
          pathParam(request, 'username'),
          request.payload as AdminInput,
          creds.admin,
          actorOf(request),
          creds.apiKeyId ? creds.admin.username : undefined,
        );
        return { message: 'admin updated' };
      },
    },
    {
      method: 'DELETE',
      path: '/api/v2/admins/{username}',
      options: { auth: ADMIN_AUTH, validate: { params: usernameParam } },
      handler: async (request) => {
        await admins.delete(pathParam(request, 'username'), adminOf(request).admin, actorOf(request));
        return { message: 'admin deleted' };
      },
    },
    {
      method: 'GET',
      path: '/api/v2/admin/profile',
      options: self,
      handler: async (request) => {
        const admin = await admins.findByUsername(adminOf(request).admin.username);
        const totp = admin?.filters.totp_config as { enabled?: boolean; config_name?: string } | undefined;
        return {
          email: admin?.email ?? '',
          description: admin?.description ?? '',
          allow_api_key_auth: admin?.filters.allow_api_key_auth ?? false,
          two_factor: {
            enabled: !!totp?.enabled,
            config_name: totp?.enabled ? (totp.config_name ?? '') : '',
            required: admin?.filters.require_two_factor ?? false,
          },
        };
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/admin/profile',
      options: { ...self, validate: { payload: adminProfileInput } },
      handler: async (request) => {
        await admins.updateProfile(refuseApiKey(request), request.payload as never, actorOf(request));
        return { message: 'profile updated' };
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/admin/changepwd',
      options: { ...self, validate: { payload: pwdChangeInput } },
      handler: async (request) => {
        const p = request.payload as { current_password: string; new_password: string };
        await admins.changePassword(refuseApiKey(request), p.current_password, p.new_password, actorOf(request));
        return { message: 'password updated' };
      },
    },
  ];
}

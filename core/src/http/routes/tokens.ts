import type { ServerRoute, Request } from '@hapi/hapi';
import type { DependencyContainer } from 'tsyringe';
import { TokenService } from '../../auth/token.service.js';
import { AdminService } from '../../accounts/admin.service.js';
import { UserAuthService } from '../../auth/user-auth.service.js';
import type { FerryCredentials } from '../../auth/credentials.js';
import { Errors } from '../errors.js';

export function tokenRoutes(c: DependencyContainer): ServerRoute[] {
  const tokens = c.resolve(TokenService);
  const admins = c.resolve(AdminService);
  const users = c.resolve(UserAuthService);

  const logout = async (request: Request) => {
    const creds = request.auth.credentials as unknown as FerryCredentials;
    if (!creds.jti || !creds.exp) throw Errors.badRequest('only a token can be logged out');
    await tokens.revoke(creds.jti, creds.exp);
    return { message: 'logged out' };
  };

  return [
    {
      method: 'GET',
      path: '/api/v2/token',
      options: { auth: 'basic-admin', plugins: { ferry: { permission: 'any' } } },
      handler: async (request) => {
        const creds = request.auth.credentials as unknown as FerryCredentials;
        if (creds.kind !== 'admin') throw Errors.unauthorized();
        await admins.touchLogin(creds.admin.id);
        return tokens.issue('admin', creds.admin.username, creds.admin.id);
      },
    },
    {
      method: 'GET',
      path: '/api/v2/logout',
      options: { auth: 'jwt-admin', plugins: { ferry: { permission: 'any', mfaSetup: true } } },
      handler: logout,
    },
    {
      method: 'GET',
      path: '/api/v2/user/token',
      options: { auth: 'basic-user' },
      handler: async (request) => {
        const creds = request.auth.credentials as unknown as FerryCredentials;
        if (creds.kind !== 'user') throw Errors.unauthorized();
        await users.touchLogin(creds.user.id);
        return tokens.issue('user', creds.user.username, creds.user.id);
      },
    },
    {
      method: 'GET',
      path: '/api/v2/user/logout',
      options: { auth: 'jwt-user', plugins: { ferry: { mfaSetup: true } } },
      handler: logout,
    },
  ];
}

import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { USER_BEARER_OR_WEB, userOf } from '../auth-strategies.js';
import { UserProfileService } from '../../accounts/user-profile.service.js';
import { actorOf } from '../server.js';

/** An OpenSSH public key line ("type base64 [comment]"). */
const publicKey = Joi.string()
  .trim()
  .max(16384)
  .pattern(
    /^(ssh-(rsa|dss|ed25519)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)(-cert-v01@openssh\.com)? [A-Za-z0-9+/]+={0,3}( .*)?$/,
    'an OpenSSH public key',
  );

const profileInput = Joi.object({
  email: Joi.string().email({ tlds: false }).allow(''),
  description: Joi.string().allow('').max(4096),
  allow_api_key_auth: Joi.boolean(),
  public_keys: Joi.array().items(publicKey).max(100),
});

const pwdChangeInput = Joi.object({
  current_password: Joi.string().required(),
  new_password: Joi.string().min(1).max(4096).required(),
});

/** Profile and password of the calling user (bearer token as the API specifies, or the web session cookie; no API key). */
export function userProfileRoutes(c: DependencyContainer): ServerRoute[] {
  const profiles = c.resolve(UserProfileService);
  const auth = USER_BEARER_OR_WEB;
  return [
    {
      method: 'GET',
      path: '/api/v2/user/profile',
      options: { auth },
      handler: async (request) => profiles.get(userOf(request).user.username),
    },
    {
      method: 'PUT',
      path: '/api/v2/user/profile',
      options: { auth, validate: { payload: profileInput } },
      handler: async (request) => {
        await profiles.update(userOf(request).user.username, request.payload as never, actorOf(request));
        return { message: 'profile updated' };
      },
    },
    {
      method: 'PUT',
      path: '/api/v2/user/changepwd',
      options: { auth, validate: { payload: pwdChangeInput } },
      handler: async (request) => {
        const p = request.payload as { current_password: string; new_password: string };
        await profiles.changePassword(userOf(request).user.username, p.current_password, p.new_password, actorOf(request));
        return { message: 'password updated' };
      },
    },
  ];
}

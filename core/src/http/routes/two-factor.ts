import type { Request, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DependencyContainer } from 'tsyringe';
import { ADMIN_AUTH, ADMIN_BEARER_OR_WEB, USER_BEARER_OR_WEB, adminOf, clientIp, userOf } from '../auth-strategies.js';
import { DefenderService } from '../../security/defender.service.js';
import { actorOf } from '../server.js';
import { Errors } from '../errors.js';
import { objectName, pathParam } from '../../util/common.input.js';
import { TwoFactorService, type AccountKind } from '../../auth/two-factor.service.js';
import { adminTotpSaveInput, totpGenerateInput, totpValidateInput, userTotpSaveInput, type TotpSaveInput } from '../../auth/two-factor.input.js';

const usernameParam = Joi.object({ username: objectName.required() });

// answers, for the OpenAPI document (reference.yaml TOTPConfig, RecoveryCode, ApiResponse)
type Answer = { description: string; schema: Joi.Schema };
const apiResponse: Answer = { description: 'ApiResponse', schema: Joi.object({ message: Joi.string() }) };
const totpConfigs = {
  description: 'array of TOTPConfig',
  schema: Joi.array().items(Joi.object({ name: Joi.string(), issuer: Joi.string(), algo: Joi.string().valid('sha1', 'sha256', 'sha512') })),
};
const generated = {
  description: 'a new secret, its otpauth URL and QR code (PNG, base64)',
  schema: Joi.object({ config_name: Joi.string(), issuer: Joi.string(), secret: Joi.string(), url: Joi.string(), qr_code: Joi.string().base64() }),
};
const recoveryCodes = {
  description: 'array of RecoveryCode (unencrypted)',
  schema: Joi.array().items(Joi.object({ secret: Joi.object({ status: Joi.string().valid('Plain'), payload: Joi.string() }), used: Joi.boolean() })),
};
const newCodes = { description: 'the new recovery codes', schema: Joi.array().items(Joi.string()) };

/**
 * Two-factor authentication: self-service TOTP and recovery codes of the
 * calling admin (/admin/...) or user (/user/...), by bearer token (as
 * reference.yaml declares them) or the web session cookie (with its CSRF
 * token), never an API key, and the admins' disable of another account's
 * 2FA (permission disable_mfa). The TOTP routes stay open to an account that
 * must set 2FA up (ferry.mfaSetup).
 */
export function twoFactorRoutes(c: DependencyContainer): ServerRoute[] {
  const mfa = c.resolve(TwoFactorService);
  const defender = c.resolve(DefenderService);
  /**
   * The caller's username. 2FA settings protect the password logins: a token
   * of an identity-provider (OIDC) login, which no Ferry code was asked for,
   * may not read or change them (recovery codes, secret, disable).
   */
  const self = (kind: AccountKind, request: Request) => {
    const c = kind === 'admin' ? adminOf(request) : userOf(request);
    if (c.idpLogin) {
      throw Errors.forbidden(
        `two-factor settings cannot be read or changed with the token of an identity-provider (OIDC) login: get a token with the password and code (GET /api/v2/${kind === 'admin' ? '' : 'user/'}token)`,
      );
    }
    return c.kind === 'admin' ? c.admin.username : c.user.username;
  };

  const selfRoutes = (kind: AccountKind): ServerRoute[] => {
    const auth = kind === 'admin' ? ADMIN_BEARER_OR_WEB : USER_BEARER_OR_WEB;
    const setup = (answer: Answer) => ({ auth, plugins: { ferry: { permission: 'any' as const, mfaSetup: true, responses: { 200: answer } } } });
    const plain = (answer: Answer) => ({ auth, plugins: { ferry: { permission: 'any' as const, responses: { 200: answer } } } });
    const base = `/api/v2/${kind}`;
    return [
      { method: 'GET', path: `${base}/totp/configs`, options: setup(totpConfigs), handler: () => mfa.configs() },
      {
        method: 'POST',
        path: `${base}/totp/generate`,
        options: { ...setup(generated), validate: { payload: totpGenerateInput } },
        handler: (request) => mfa.generate(kind, self(kind, request), (request.payload as { config_name: string }).config_name),
      },
      {
        method: 'POST',
        path: `${base}/totp/validate`,
        options: { ...setup(apiResponse), validate: { payload: totpValidateInput } },
        handler: async (request) => {
          self(kind, request);
          const p = request.payload as { config_name: string; passcode: string; secret: string };
          if (!mfa.validate(p.config_name, p.passcode, p.secret)) {
            // a wrong code scores the host like a wrong code at login (an existing account's failure)
            await defender.addEvent(clientIp(request), 'valid', 'HTTP');
            throw Errors.badRequest('"passcode" does not match the secret: check the device clock and try the next code');
          }
          return { message: 'the passcode is valid' };
        },
      },
      {
        method: 'POST',
        path: `${base}/totp/save`,
        options: { ...setup(apiResponse), validate: { payload: kind === 'admin' ? adminTotpSaveInput : userTotpSaveInput } },
        handler: async (request) => {
          const p = request.payload as TotpSaveInput;
          await mfa.save(kind, self(kind, request), p, actorOf(request));
          return { message: p.enabled ? 'two-factor authentication enabled' : 'two-factor authentication disabled' };
        },
      },
      {
        method: 'GET',
        path: `${base}/2fa/recoverycodes`,
        options: plain(recoveryCodes),
        handler: (request) => mfa.recoveryCodes(kind, self(kind, request)),
      },
      {
        method: 'POST',
        path: `${base}/2fa/recoverycodes`,
        options: { ...plain(newCodes), plugins: { ferry: { ...plain(newCodes).plugins.ferry, errors: [400] } } },
        handler: (request) => mfa.regenerateRecoveryCodes(kind, self(kind, request), actorOf(request)),
      },
    ];
  };

  const disableRoute = (kind: AccountKind): ServerRoute => ({
    method: 'PUT',
    path: `/api/v2/${kind}s/{username}/2fa/disable`,
    options: { auth: ADMIN_AUTH, plugins: { ferry: { permission: 'disable_mfa', responses: { 200: apiResponse } } }, validate: { params: usernameParam } },
    handler: async (request) => {
      await mfa.disable(kind, pathParam(request, 'username'), adminOf(request).admin, actorOf(request));
      return { message: 'two-factor authentication disabled' };
    },
  });

  return [...selfRoutes('admin'), ...selfRoutes('user'), disableRoute('admin'), disableRoute('user')];
}

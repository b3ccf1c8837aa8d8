import Joi from 'joi';
import type { ActionTypeDef, PluginHost, ProvisionMode } from '@ferry/core';

/** reference.yaml EventActionIDPAccountCheck: mode 0 create or update, 1 create only; JSON templates of the account. */
export interface IdpAccountConfig {
  mode: 0 | 1;
  template_user: string;
  template_admin: string;
}

const MODES: Record<0 | 1, ProvisionMode> = { 0: 'create-or-update', 1: 'create-only' };

export const idpAccountConfigSchema = Joi.object<IdpAccountConfig>({
  mode: Joi.number().integer().valid(0, 1).default(0),
  template_user: Joi.string().allow('').max(65536).default(''),
  template_admin: Joi.string().allow('').max(65536).default(''),
}).custom((v: IdpAccountConfig, h) => {
  if (!v.template_user.trim() && !v.template_admin.trim()) return h.message({ custom: '"idp_config" needs "template_user" or "template_admin"' });
  return v;
});

/**
 * Type 13: provisions the account an identity-provider login (trigger 7)
 * logs in, from `template_user` (user logins) or `template_admin` (admin
 * logins): Go templates over the login (`.Name`, `.Email`, `.Role`,
 * `.IDPFields`, `.IP`) that render the JSON body POST /users or /admins
 * takes, validated the same way. Mode 0 creates the account or updates it
 * with the rendered body, mode 1 only creates a missing account. The body's
 * `username` defaults to the login's and may not name another account. Run
 * it with `execute_sync` so the account exists before the login is decided.
 * A login kind without a template is left alone.
 */
export function idpAccountAction(s: PluginHost): ActionTypeDef<IdpAccountConfig> {
  return {
    type: 13,
    key: 'idp-account-check',
    optionsKey: 'idp_config',
    optionsSchema: idpAccountConfigSchema,
    templateFields: ['template_user', 'template_admin'],
    triggers: [7],
    create: (o) => ({
      async execute(ctx) {
        const kind = ctx.params.Event === 'IDP login admin' ? 'admin' : 'user';
        const template = kind === 'admin' ? o.template_admin : o.template_user;
        if (!template.trim()) {
          ctx.logger.debug({ kind }, `no template_${kind}: nothing to provision`);
          return;
        }
        const login = String(ctx.params.Name ?? '');
        let data: unknown;
        try {
          data = JSON.parse(template);
        } catch (err) {
          throw new Error(`template_${kind} does not render valid JSON: ${(err as Error).message}`);
        }
        if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error(`template_${kind} must render a JSON object`);
        const body = data as Record<string, unknown>;
        body.username ??= login;
        if (body.username !== login) throw new Error(`template_${kind} renders the account "${String(body.username)}", not "${login}" who logs in`);
        const result = await s.accounts.provision(kind, body, MODES[o.mode]);
        ctx.logger.info({ kind, username: login, result }, 'IDP account check done');
        return { outputs: { IDPAccount: { Username: login, Kind: kind, Result: result } } };
      },
    }),
  };
}

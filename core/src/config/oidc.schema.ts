import Joi from 'joi';

/**
 * OpenID Connect login of one HTTP binding (`httpd.bindings[].oidc`, see
 * docs/oidc.md). An empty `config_url` leaves OIDC off on the binding.
 */
export interface OidcBindingConfig {
  /** Issuer URL of the identity provider; its discovery document is `<config_url>/.well-known/openid-configuration`. */
  config_url: string;
  client_id: string;
  client_secret: string;
  /** Public base URL of this binding as the browser reaches it; the callback is `<redirect_base_url>/api/v2/oidc/callback`. */
  redirect_base_url: string;
  /** ID token claim holding the Ferry username (dotted path for nested claims). */
  username_field: string;
  /** ID token claim holding the role (string or array of strings); empty: every login is a user login unless implicit_roles. */
  role_field: string;
  /** Role claim values (compared case-insensitively) that make the login an admin login. */
  admin_roles: string[];
  /** Ignore role_field: the `target` of the login request (admin or user) decides. */
  implicit_roles: boolean;
  scopes: string[];
  /** Claims copied to `.IDPFields` of identity-provider login events. */
  custom_fields: string[];
  /** Do not verify the ID token signature against the provider's JWKS (the token still comes over the direct back channel). */
  insecure_skip_signature_check: boolean;
  /** Allow an http:// config_url (an identity provider on the same host or a test setup); never across a network. */
  allow_insecure_http: boolean;
  /** Seconds a started login may take to come back to the callback. */
  state_ttl: number;
}

const claimName = Joi.string().trim().min(1).max(255);

export const oidcBindingSchema = Joi.object<OidcBindingConfig>({
  config_url: Joi.string().allow('').default(''),
  client_id: Joi.string().allow('').default(''),
  client_secret: Joi.string().allow('').default(''),
  redirect_base_url: Joi.string().allow('').default(''),
  username_field: claimName.default('preferred_username'),
  role_field: claimName.allow('').default(''),
  admin_roles: Joi.array().items(claimName).default(['admin']),
  implicit_roles: Joi.boolean().default(false),
  scopes: Joi.array()
    .items(
      Joi.string()
        .trim()
        .pattern(/^[\x21\x23-\x5b\x5d-\x7e]+$/),
    )
    .default(['openid', 'profile', 'email']),
  custom_fields: Joi.array().items(claimName).default([]),
  insecure_skip_signature_check: Joi.boolean().default(false),
  allow_insecure_http: Joi.boolean().default(false),
  state_ttl: Joi.number().integer().min(30).max(3600).default(300),
})
  .default()
  .custom((o: OidcBindingConfig, h) => {
    if (!o.config_url) return o;
    const url = (v: string) => {
      try {
        return new URL(v);
      } catch {
        return null;
      }
    };
    const issuer = url(o.config_url);
    if (!issuer || !/^https?:$/.test(issuer.protocol)) return h.message({ custom: '{{#label}}.config_url must be an http(s) URL' });
    if (issuer.protocol === 'http:' && !o.allow_insecure_http) {
      return h.message({ custom: '{{#label}}.config_url is http://: use https or set allow_insecure_http' });
    }
    if (!o.client_id) return h.message({ custom: '{{#label}}.client_id is required when config_url is set' });
    const base = url(o.redirect_base_url);
    if (!base || !/^https?:$/.test(base.protocol) || base.search || base.hash) {
      return h.message({ custom: '{{#label}}.redirect_base_url must be the http(s) base URL of this binding when config_url is set' });
    }
    if (!o.scopes.includes('openid')) return h.message({ custom: '{{#label}}.scopes must include "openid"' });
    return o;
  });

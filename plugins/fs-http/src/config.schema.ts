import Joi from 'joi';
import { isSecret, secretSchema, type Secret } from '@ferry/core';

/** HTTPFsConfig (FilesystemConfig.httpconfig) as stored and sent by clients. */
export interface HttpFsOptions {
  /** Base URL of the httpfs API, e.g. https://files.example.com/api/v1. */
  endpoint: string;
  /** HTTP Basic user name. */
  username?: string;
  /** A Secret when validated; the decrypted string when handed to create(). */
  password?: Secret | string;
  /** Sent in the X-API-KEY header. Secret when validated, string in create(). */
  api_key?: Secret | string;
  /** Accept any TLS certificate (self-signed test servers). https only. */
  skip_tls_verify?: boolean;
  /**
   * How two configurations are compared to decide whether they reach the same
   * storage (e.g. for renames between folders): 0 = same endpoint,
   * 1 = same endpoint and same username.
   */
  equality_check_mode?: 0 | 1;
}

/** Server-wide settings (the plugin's config sub-object). */
export interface HttpFsPluginConfig {
  /** Deadline of metadata calls and of the wait for a response's headers (ms). */
  request_timeout_ms?: number;
  /** A transfer fails when no byte moves for this long (ms). */
  transfer_idle_timeout_ms?: number;
  /** Most connections kept to one endpoint (shared by every user of it). */
  connections_per_endpoint?: number;
}

export const PLUGIN_DEFAULTS = {
  requestTimeoutMs: 30_000,
  transferIdleTimeoutMs: 300_000,
  connectionsPerEndpoint: 32,
} as const;

const ENDPOINT_EXAMPLE = 'e.g. https://files.example.com/api/v1';

/**
 * Checks the endpoint beyond "is a URL": http(s) only, a host, no
 * credentials (they belong in username/password/api_key, where they are
 * encrypted and redacted), no query or fragment (the client appends paths).
 */
function checkEndpoint(value: string, h: Joi.CustomHelpers): string | Joi.ErrorReport {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return h.error('httpfs.endpointUrl');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return h.error('httpfs.endpointUrl');
  // WHATWG URLs forgive 'https:///api' (host "api"); require the authority right after '//'.
  if (url.hostname === '' || !/^https?:\/\/[^/\\]/i.test(value)) return h.error('httpfs.endpointUrl');
  if (url.username !== '' || url.password !== '') return h.error('httpfs.endpointCredentials');
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) {
    return h.error('httpfs.endpointQuery');
  }
  return value;
}

/** True when a Secret (or decrypted string) carries a value. */
export function hasSecret(v: unknown): boolean {
  if (typeof v === 'string') return v !== '';
  return isSecret(v) && ((v.payload ?? '') !== '' || v.status === 'Redacted');
}

/** Validates httpconfig when a user, group or folder is saved. */
export const httpFsOptionsSchema = Joi.object<HttpFsOptions>({
  endpoint: Joi.string()
    .trim()
    .required()
    .custom(checkEndpoint)
    .messages({
      'any.required': `httpconfig.endpoint is required (${ENDPOINT_EXAMPLE})`,
      'string.empty': `httpconfig.endpoint must not be empty (${ENDPOINT_EXAMPLE})`,
      'string.base': `httpconfig.endpoint must be a string (${ENDPOINT_EXAMPLE})`,
      'httpfs.endpointUrl': `endpoint must be an http:// or https:// URL with a host (${ENDPOINT_EXAMPLE})`,
      'httpfs.endpointCredentials': 'endpoint must not embed credentials: use username/password or api_key, which are stored encrypted',
      // braces escaped: joi would render {operation} and {name} as (empty) template references
      'httpfs.endpointQuery': 'endpoint must not have a query string or fragment: the client appends /\\{operation\\}/\\{name\\}',
    }),
  username: Joi.string()
    .allow('')
    .max(255)
    .pattern(/^[^:\u0000-\u001f\u007f]*$/)
    .messages({
      'string.pattern.base': 'username must not contain a colon or control characters (HTTP Basic authentication)',
      'string.max': 'username must be at most 255 characters',
    }),
  password: secretSchema,
  api_key: secretSchema,
  skip_tls_verify: Joi.boolean().messages({ 'boolean.base': 'skip_tls_verify must be true or false' }),
  equality_check_mode: Joi.number()
    .valid(0, 1)
    .messages({ 'any.only': 'equality_check_mode must be 0 (same endpoint and username) or 1 (same endpoint only)' }),
})
  .custom((v: HttpFsOptions, h) => {
    const user = (v.username ?? '') !== '';
    const pass = hasSecret(v.password);
    if (user && !pass) return h.error('httpfs.passwordMissing');
    if (pass && !user) return h.error('httpfs.usernameMissing');
    if (v.skip_tls_verify && /^http:/i.test(v.endpoint)) return h.error('httpfs.tlsOnHttp');
    return v;
  })
  .messages({
    'httpfs.passwordMissing': 'password is required with username (HTTP Basic authentication sends both)',
    'httpfs.usernameMissing': 'username is required with password (HTTP Basic authentication sends both)',
    'httpfs.tlsOnHttp': 'skip_tls_verify only applies to https:// endpoints',
  });

const ms = (field: string, min: number) =>
  Joi.number()
    .integer()
    .min(min)
    .messages({
      'number.base': `${field} must be a whole number of milliseconds`,
      'number.integer': `${field} must be a whole number of milliseconds`,
      'number.min': `${field} must be at least ${min} ms`,
    });

/** Validates the plugin's server-wide config sub-object. */
export const httpFsPluginConfigSchema = Joi.object<HttpFsPluginConfig>({
  request_timeout_ms: ms('request_timeout_ms', 100),
  transfer_idle_timeout_ms: ms('transfer_idle_timeout_ms', 1000),
  connections_per_endpoint: Joi.number()
    .integer()
    .min(1)
    .max(1024)
    .messages({ 'number.min': 'connections_per_endpoint must be at least 1', 'number.max': 'connections_per_endpoint must be at most 1024' }),
});

/** The cleartext of a decrypted secret option ('' when absent). */
export function secretText(v: Secret | string | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  if (v.status === 'Plain') return v.payload ?? '';
  throw new Error(`fs-http: secret option still encrypted (${v.status}); the core must decrypt it before create()`);
}

/** Options resolved to what the client uses. */
export interface HttpFsSettings {
  /** Endpoint without trailing slashes. */
  endpoint: string;
  username: string;
  password: string;
  apiKey: string;
  skipTlsVerify: boolean;
  equalityCheckMode: 0 | 1;
  requestTimeoutMs: number;
  transferIdleTimeoutMs: number;
}

export function resolveSettings(o: HttpFsOptions, config: HttpFsPluginConfig = {}): HttpFsSettings {
  return {
    endpoint: o.endpoint.trim().replace(/\/+$/, ''),
    username: o.username ?? '',
    password: secretText(o.password),
    apiKey: secretText(o.api_key),
    skipTlsVerify: o.skip_tls_verify === true,
    equalityCheckMode: o.equality_check_mode === 1 ? 1 : 0,
    requestTimeoutMs: config.request_timeout_ms ?? PLUGIN_DEFAULTS.requestTimeoutMs,
    transferIdleTimeoutMs: config.transfer_idle_timeout_ms ?? PLUGIN_DEFAULTS.transferIdleTimeoutMs,
  };
}

/**
 * equality_check_mode: true when two configurations reach the same storage, so a move
 * between their mounts is one rename on the server. Mode 0 (the default): same endpoint
 * and same username. Mode 1: the endpoint alone decides, but only when both
 * configurations ask for it (a mode 0 side keeps its username check).
 */
export function isSameResource(a: HttpFsOptions, b: HttpFsOptions): boolean {
  const strip = (e: string) => e.trim().replace(/\/+$/, '');
  if (strip(a.endpoint) !== strip(b.endpoint)) return false;
  if (a.equality_check_mode === 1 && b.equality_check_mode === 1) return true;
  return (a.username ?? '') === (b.username ?? '');
}

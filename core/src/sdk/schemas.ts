import Joi from 'joi';

/**
 * Joi schema of a Secret object as clients send it. On write the status is
 * 'Plain' with a payload; an encrypted form sent back unchanged is kept.
 */
export const secretSchema = Joi.object({
  status: Joi.string().valid('Plain', 'AES-256-GCM', 'Secretbox', 'GCP', 'AWS', 'VaultTransit', 'AzureKeyVault', 'Redacted').required(),
  payload: Joi.string().allow(''),
  key: Joi.string().allow(''),
  additional_data: Joi.string().allow(''),
  mode: Joi.number().integer(),
});

/** host:port with a port in 1-65535. */
export const hostPortSchema = Joi.string().pattern(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/, 'host:port');

/** An http(s) URL. */
export const httpUrlSchema = Joi.string().uri({ scheme: ['http', 'https'] });

/** A key prefix: relative, '/'-separated; placeholders allowed. */
export const keyPrefixSchema = Joi.string()
  .allow('')
  .pattern(/^[^\\]*$/, 'no backslashes')
  .custom((v: string, h) => (v.split('/').includes('..') ? h.error('any.invalid') : v));
export * from './mail-options.js';

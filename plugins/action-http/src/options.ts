import Joi from 'joi';
import { secretSchema } from '@ferry/core';

/** KeyValue of the API (headers, query parameters). */
export interface KeyValue {
  key: string;
  value: string;
}

/** HTTPPart: a templated text body or a file of the event user's storage. */
export interface HttpPart {
  /** Form field name. */
  name: string;
  /** Virtual path of a file of the event's user (templated), streamed as the part's content. */
  filepath?: string;
  /** Text content (templated). */
  body?: string;
  headers: KeyValue[];
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The `http_config` options sub-object (EventActionHTTPConfig), as the runner gets it (password decrypted). */
export interface HttpOptions {
  endpoint: string;
  method: HttpMethod;
  /** Seconds, 1 to 180: the whole exchange (connection, request body, answer's headers). */
  timeout: number;
  headers: KeyValue[];
  query_parameters: KeyValue[];
  body?: string;
  parts: HttpPart[];
  username?: string;
  password?: string;
  skip_tls_verify: boolean;
}

export const MAX_TIMEOUT = 180;
export const DEFAULT_TIMEOUT = 20;
export const MAX_PARTS = 64;

/** Headers the action manages itself (framing and connection). */
export const MANAGED_HEADERS = ['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'host'];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Line breaks and NUL are refused in header values (after rendering too: a value could otherwise forge headers). */
export const BAD_HEADER_VALUE = /[\r\n\0]/;

const headerSchema = (managed: string[]) =>
  Joi.object<KeyValue>({
    key: Joi.string()
      .pattern(TOKEN)
      .max(256)
      .required()
      .invalid(...managed.flatMap((h) => [h, h.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase())]))
      .insensitive()
      .messages({
        'string.pattern.base': '{{#label}} must be a header name (an HTTP token)',
        'any.invalid': `{{#label}} is set by the action itself (${managed.join(', ')} cannot be configured)`,
      }),
    value: Joi.string()
      .allow('')
      .max(8192)
      .default('')
      .custom((v: string, h) => (BAD_HEADER_VALUE.test(v) ? h.message({ custom: '{{#label}} must not contain line breaks' }) : v)),
  });

const queryParamSchema = Joi.object<KeyValue>({
  key: Joi.string().min(1).max(1024).required(),
  value: Joi.string().allow('').max(8192).default(''),
});

const partSchema = Joi.object<HttpPart>({
  name: Joi.string()
    .min(1)
    .max(256)
    .pattern(/^[^\r\n"\0]+$/)
    .required()
    .messages({ 'string.pattern.base': '{{#label}} must not contain quotes or line breaks' }),
  filepath: Joi.string().min(1).max(4096),
  body: Joi.string()
    .allow('')
    .max(1024 * 1024),
  headers: Joi.array()
    .items(headerSchema([...MANAGED_HEADERS, 'content-disposition']))
    .max(64)
    .default([]),
})
  .xor('filepath', 'body')
  .messages({
    'object.missing': '{{#label}} must have a filepath (a file of the event user) or a body',
    'object.xor': '{{#label}} has both a filepath and a body: a part is either a file or a text body',
  });

/** The endpoint: an http(s) URL without credentials; a templated one is checked again once rendered. */
const endpointSchema = Joi.string()
  .min(1)
  .max(8192)
  .required()
  .custom((v: string, h) => {
    const templated = v.includes('{{');
    if (templated) {
      // the scheme and host must be visible before rendering: a value cannot turn the request into another protocol
      return /^https?:\/\/[^/{]/i.test(v) ? v : h.message({ custom: '{{#label}} must start with http:// or https:// and a host' });
    }
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return h.message({ custom: '{{#label}} must be an http:// or https:// URL' });
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return h.message({ custom: '{{#label}} must be an http:// or https:// URL' });
    if (u.username || u.password) return h.message({ custom: '{{#label}} must not hold credentials: set username and password' });
    return v;
  });

export const httpOptionsSchema = Joi.object<HttpOptions>({
  endpoint: endpointSchema,
  method: Joi.string().valid('GET', 'POST', 'PUT', 'DELETE').required(),
  timeout: Joi.number()
    .integer()
    .min(1)
    .max(MAX_TIMEOUT)
    .default(DEFAULT_TIMEOUT)
    .messages({
      'number.min': `{{#label}} must be between 1 and ${MAX_TIMEOUT} seconds`,
      'number.max': `{{#label}} must be between 1 and ${MAX_TIMEOUT} seconds`,
    }),
  headers: Joi.array().items(headerSchema(MANAGED_HEADERS)).max(64).default([]),
  query_parameters: Joi.array().items(queryParamSchema).max(64).default([]),
  body: Joi.string()
    .allow('')
    .max(1024 * 1024),
  parts: Joi.array().items(partSchema).max(MAX_PARTS).default([]),
  username: Joi.string()
    .allow('')
    .max(256)
    .pattern(/^[^:\r\n]*$/)
    .messages({ 'string.pattern.base': '{{#label}} must not contain ":" or line breaks' }),
  password: secretSchema,
  skip_tls_verify: Joi.boolean().default(false),
}).custom((v: HttpOptions, h) => {
  if (v.body !== undefined && v.body !== '' && v.parts.length) return h.message({ custom: '"body" and "parts" cannot both be set' });
  if (v.method === 'GET' && ((v.body ?? '') !== '' || v.parts.length))
    return h.message({ custom: '"method" GET sends no body: remove "body" and "parts" or use POST or PUT' });
  if (v.parts.length && v.headers.some((x) => x.key.toLowerCase() === 'content-type')) {
    return h.message({ custom: '"headers" must not set Content-Type with "parts" (multipart/form-data with its boundary is set by the action)' });
  }
  if (!v.username && v.password && (v.password as unknown as { payload?: string }).payload)
    return h.message({ custom: '"password" is set without "username"' });
  return v;
});

/** Fields rendered by the core's Go-template renderer before the runner is created. */
export const TEMPLATE_FIELDS = [
  'endpoint',
  'headers[].value',
  'query_parameters[].value',
  'body',
  'parts[].filepath',
  'parts[].body',
  'parts[].headers[].value',
];

import Joi from 'joi';
import { httpUrlSchema, isSecret, keyPrefixSchema, secretSchema, type Secret } from '@ferry/core';

/** S3Config as stored and sent by clients (secrets are Secret objects). */
export interface S3Options {
  bucket: string;
  region?: string;
  endpoint?: string;
  key_prefix?: string;
  access_key?: string;
  /** A Secret when validated; the decrypted string when handed to create(). */
  access_secret?: Secret | string;
  sse_customer_key?: Secret | string;
  role_arn?: string;
  session_token?: string;
  storage_class?: string;
  acl?: string;
  upload_part_size?: number;
  upload_concurrency?: number;
  upload_part_max_time?: number;
  download_part_size?: number;
  download_concurrency?: number;
  download_part_max_time?: number;
  force_path_style?: boolean;
}

export const CANNED_ACLS = [
  'private',
  'public-read',
  'public-read-write',
  'authenticated-read',
  'aws-exec-read',
  'bucket-owner-read',
  'bucket-owner-full-control',
];

const MB = 1024 * 1024;
/** S3 limits: parts are 5 MiB to 5 GiB. */
const MIN_PART_MB = 5;
const MAX_PART_MB = 5120;

const partSize = (field: string, min: number) =>
  Joi.number()
    .integer()
    .min(0)
    .max(MAX_PART_MB)
    .custom((v: number, h) => (v !== 0 && v < min ? h.error('number.partMin') : v))
    .messages({
      'number.min': `${field} must not be negative (MB; 0 means the default)`,
      'number.max': `${field} must be at most ${MAX_PART_MB} MB`,
      'number.partMin': `${field} must be 0 (default) or at least ${min} MB`,
      'number.base': `${field} must be a whole number of MB`,
      'number.integer': `${field} must be a whole number of MB`,
    });

const count = (field: string, max: number) =>
  Joi.number()
    .integer()
    .min(0)
    .max(max)
    .messages({
      'number.min': `${field} must not be negative (0 means the default)`,
      'number.max': `${field} must be at most ${max}`,
      'number.base': `${field} must be a whole number`,
      'number.integer': `${field} must be a whole number`,
    });

/** Validates s3config when a user, group or folder is saved. */
export const s3OptionsSchema = Joi.object<S3Options>({
  bucket: Joi.string().trim().min(1).required().messages({
    'any.required': 's3config.bucket is required',
    'string.empty': 's3config.bucket must not be empty',
    'string.base': 's3config.bucket must be a string',
  }),
  region: Joi.string().trim().min(1).messages({ 'string.empty': 'region must not be empty when given' }),
  endpoint: httpUrlSchema.allow('').messages({
    'string.uri': 'endpoint must be an http:// or https:// URL, e.g. https://s3.example.com:9000',
    'string.uriCustomScheme': 'endpoint must be an http:// or https:// URL, e.g. https://s3.example.com:9000',
  }),
  key_prefix: keyPrefixSchema.messages({
    'any.invalid': "key_prefix must not contain '..' segments",
    'string.pattern.name': 'key_prefix must not contain backslashes',
  }),
  access_key: Joi.string().allow(''),
  access_secret: secretSchema,
  sse_customer_key: secretSchema,
  role_arn: Joi.string()
    .allow('')
    .pattern(/^arn:[\w-]+:iam::\d{12}:role\/.+$/)
    .messages({ 'string.pattern.base': 'role_arn must look like arn:aws:iam::123456789012:role/name' }),
  session_token: Joi.string().allow(''),
  storage_class: Joi.string().allow(''),
  acl: Joi.string()
    .allow('')
    .valid(...CANNED_ACLS)
    .messages({ 'any.only': `acl must be one of: ${CANNED_ACLS.join(', ')}` }),
  upload_part_size: partSize('upload_part_size', MIN_PART_MB),
  upload_concurrency: count('upload_concurrency', 64),
  upload_part_max_time: count('upload_part_max_time', 86400),
  download_part_size: partSize('download_part_size', 1),
  download_concurrency: count('download_concurrency', 64),
  download_part_max_time: count('download_part_max_time', 86400),
  force_path_style: Joi.boolean(),
})
  .custom((v: S3Options, h) => {
    if (v.access_key && !hasSecret(v.access_secret)) return h.error('s3.secretMissing');
    if (!v.access_key && hasSecret(v.access_secret)) return h.error('s3.keyMissing');
    return v;
  })
  .messages({
    's3.secretMissing': 'access_secret is required when access_key is set',
    's3.keyMissing': 'access_key is required when access_secret is set',
  });

function hasSecret(v: unknown): boolean {
  if (typeof v === 'string') return v !== '';
  return isSecret(v) && ((v.payload ?? '') !== '' || v.status === 'Redacted');
}

/** The cleartext of a decrypted secret option ('' when absent). */
export function secretText(v: Secret | string | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  if (v.status === 'Plain') return v.payload ?? '';
  throw new Error(`fs-s3: secret option still encrypted (${v.status}); the core must decrypt it before create()`);
}

/** Options resolved to the values the backend uses (defaults applied, sizes in bytes). */
export interface S3Settings {
  bucket: string;
  region: string;
  endpoint?: string;
  keyPrefix: string;
  accessKey: string;
  accessSecret: string;
  sessionToken: string;
  roleArn: string;
  sseCustomerKey: string;
  storageClass: string;
  acl: string;
  uploadPartSize: number;
  uploadConcurrency: number;
  uploadPartMaxTimeMs: number;
  downloadPartSize: number;
  downloadConcurrency: number;
  downloadPartMaxTimeMs: number;
  forcePathStyle: boolean;
}

export const DEFAULTS = {
  region: 'us-east-1',
  uploadPartSizeMb: 5,
  /** With 5 MB parts: 15 MB of part buffers per upload (part size × (concurrency + 1)). */
  uploadConcurrency: 2,
  downloadPartSizeMb: 5,
  downloadConcurrency: 1,
};

export function resolveSettings(o: S3Options): S3Settings {
  return {
    bucket: o.bucket,
    region: o.region || process.env.AWS_REGION || DEFAULTS.region,
    endpoint: o.endpoint || undefined,
    keyPrefix: o.key_prefix ?? '',
    accessKey: o.access_key ?? '',
    accessSecret: secretText(o.access_secret),
    sessionToken: o.session_token ?? '',
    roleArn: o.role_arn ?? '',
    sseCustomerKey: secretText(o.sse_customer_key),
    storageClass: o.storage_class ?? '',
    acl: o.acl ?? '',
    uploadPartSize: (o.upload_part_size || DEFAULTS.uploadPartSizeMb) * MB,
    uploadConcurrency: o.upload_concurrency || DEFAULTS.uploadConcurrency,
    uploadPartMaxTimeMs: (o.upload_part_max_time ?? 0) * 1000,
    downloadPartSize: (o.download_part_size || DEFAULTS.downloadPartSizeMb) * MB,
    downloadConcurrency: o.download_concurrency || DEFAULTS.downloadConcurrency,
    downloadPartMaxTimeMs: (o.download_part_max_time ?? 0) * 1000,
    forcePathStyle: o.force_path_style ?? false,
  };
}

/** Plugin-level settings (`plugins[].config` of @ferry/fs-s3). */
export interface S3PluginConfig {
  /** Seconds to establish a connection (default 10). */
  connect_timeout?: number;
  /** Seconds a request or response body may go without moving a byte (default 120). */
  idle_timeout?: number;
}

export const s3PluginConfigSchema = Joi.object<S3PluginConfig>({
  connect_timeout: Joi.number().greater(0).max(3600),
  idle_timeout: Joi.number().greater(0).max(86400),
});

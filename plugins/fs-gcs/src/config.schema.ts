import Joi from 'joi';
import { isEmptySecret, isSecret, keyPrefixSchema, secretSchema, type Secret } from '@ferry/core';

/** A secret field as stored (Secret object) or as handed to create() (decrypted string). */
export type SecretValue = Secret | string;

/** `gcsconfig` of a FilesystemConfig (reference.yaml GCSConfig). */
export interface GcsOptions {
  bucket: string;
  /** Base64 of a service-account JSON key file. */
  credentials?: SecretValue;
  /** 1: Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, workload identity...). */
  automatic_credentials?: 0 | 1;
  /** Storage class of new objects ('' = the bucket's default). */
  storage_class?: string;
  /** Predefined ACL of new objects ('' = the bucket's default). */
  acl?: string;
  /** Every key lives under this prefix. */
  key_prefix?: string;
  /** MB per resumable-upload request (0 = 8: one chunk held per upload). */
  upload_part_size?: number;
  /** Seconds one upload request may take (0 = no limit). */
  upload_part_max_time?: number;
}

/** Plugin-level settings (`plugins[].config` of @ferry/fs-gcs). */
export interface GcsPluginConfig {
  /** JSON API endpoint, e.g. an emulator at http://127.0.0.1:19002. Empty: Google's. */
  endpoint?: string;
  /** Send credentials to a custom endpoint too (off: emulators accept anonymous calls). */
  endpoint_auth?: boolean;
  /** Project id for clients without one in their credentials. */
  project_id?: string;
  /** Retries of a failed request (transient errors only; default 3, the client library's). */
  max_retries?: number;
}

export const SECRET_FIELDS = ['credentials'];
/** Environment switch: accept credentials JSON that is not a service-account key (authorized_user, external_account...). */
export const ALLOW_NON_SA_ENV = 'SERVICE_GCS_ALLOW_NON_SA_CREDENTIALS';
export const STORAGE_CLASSES = ['STANDARD', 'NEARLINE', 'COLDLINE', 'ARCHIVE', 'MULTI_REGIONAL', 'REGIONAL', 'DURABLE_REDUCED_AVAILABILITY'];
export const ACLS = ['authenticatedRead', 'bucketOwnerFullControl', 'bucketOwnerRead', 'private', 'projectPrivate', 'publicRead'];
const SA_FIELDS = ['client_email', 'private_key'];

/** Cleartext of a secret field ('' when empty or still encrypted). */
export function secretText(v: SecretValue | undefined): string {
  if (typeof v === 'string') return v;
  if (isSecret(v) && v.status === 'Plain') return v.payload ?? '';
  return '';
}

const filled = (v: unknown): boolean => (typeof v === 'string' ? v !== '' : !isEmptySecret(v));

/**
 * Decodes base64 credentials into the JSON object. Throws an Error whose
 * message says what is wrong; service-account fields are required unless
 * SERVICE_GCS_ALLOW_NON_SA_CREDENTIALS=1.
 */
export function parseCredentials(b64: string, env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const text = Buffer.from(b64.trim(), 'base64').toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('"credentials" must be the base64 encoding of a JSON key file: it does not decode to JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error('"credentials" must decode to a JSON object (a service-account key file)');
  }
  const o = json as Record<string, unknown>;
  if (env[ALLOW_NON_SA_ENV] === '1') return o;
  if (o.type !== 'service_account') {
    throw new Error(
      `"credentials" must be a service-account key (type "service_account", got ${JSON.stringify(o.type ?? null)}); set ${ALLOW_NON_SA_ENV}=1 to accept other credential types`,
    );
  }
  const missing = SA_FIELDS.filter((f) => typeof o[f] !== 'string' || o[f] === '');
  if (missing.length > 0) throw new Error(`"credentials" service-account key lacks ${missing.join(', ')}`);
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(String(o.private_key))) {
    throw new Error('"credentials" service-account key has no PEM private_key');
  }
  return o;
}

const secretField = Joi.alternatives().try(secretSchema, Joi.string().allow('')).messages({
  'alternatives.match': '{{#label}} must be a Secret object with a status and a payload',
  'alternatives.types': '{{#label}} must be a Secret object with a status and a payload',
});

export const gcsOptionsSchema = Joi.object<GcsOptions>({
  bucket: Joi.string()
    .required()
    .pattern(/^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/)
    .messages({
      'any.required': '"bucket" is required: the name of the Cloud Storage bucket',
      'string.empty': '"bucket" is required: the name of the Cloud Storage bucket',
      'string.pattern.base': '"bucket" must be a bucket name: 3-222 lowercase letters, digits, dots, dashes or underscores (got "{{#value}}")',
    }),
  credentials: secretField,
  automatic_credentials: Joi.number().valid(0, 1).default(0),
  storage_class: Joi.string()
    .allow('')
    .uppercase()
    .valid('', ...STORAGE_CLASSES)
    .default('')
    .messages({ 'any.only': `"storage_class" must be empty or one of ${STORAGE_CLASSES.join(', ')}` }),
  acl: Joi.string()
    .allow('')
    .valid('', ...ACLS)
    .default('')
    .messages({ 'any.only': `"acl" must be empty or a predefined ACL: ${ACLS.join(', ')}` }),
  key_prefix: keyPrefixSchema.default('').messages({ 'any.invalid': '"key_prefix" must not contain ".." segments' }),
  upload_part_size: Joi.number().integer().min(0).max(1024).default(0).messages({
    'number.min': '"upload_part_size" is in MB, between 0 (default 8) and 1024',
    'number.max': '"upload_part_size" is in MB, between 0 (default 8) and 1024',
  }),
  upload_part_max_time: Joi.number().integer().min(0).default(0),
})
  .custom((o: GcsOptions, h) => {
    const hasCreds = filled(o.credentials);
    if (o.automatic_credentials === 1 && hasCreds) return h.error('gcs.bothCredentials');
    if (o.automatic_credentials !== 1 && !hasCreds) return h.error('gcs.noCredentials');
    // Cleartext credentials are checked now; encrypted ones were checked when first saved.
    const text = isSecret(o.credentials) ? secretText(o.credentials) : '';
    if (text) {
      try {
        parseCredentials(text);
      } catch (err) {
        return h.error('gcs.credentials', { reason: (err as Error).message });
      }
    }
    return o;
  })
  .messages({
    'gcs.bothCredentials': '"credentials" must be empty when "automatic_credentials" is 1',
    'gcs.noCredentials': 'set "credentials" (base64 of a service-account JSON key) or "automatic_credentials": 1',
    'gcs.credentials': '{{#reason}}',
  });

export const gcsPluginConfigSchema = Joi.object<GcsPluginConfig>({
  endpoint: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .allow('')
    .messages({
      'string.uri': '"endpoint" must be an http(s) URL, e.g. http://127.0.0.1:19002',
      'string.uriCustomScheme': '"endpoint" must be an http(s) URL, e.g. http://127.0.0.1:19002',
    }),
  endpoint_auth: Joi.boolean().default(false),
  project_id: Joi.string().allow(''),
  max_retries: Joi.number().integer().min(0).max(10).default(3),
});

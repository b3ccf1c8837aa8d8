import Joi from 'joi';
import { httpUrlSchema, isSecret, keyPrefixSchema, secretSchema, type Secret } from '@ferry/core';

/** AzureBlobFsConfig as stored and sent by clients (secrets are Secret objects). */
export interface AzBlobOptions {
  container: string;
  account_name?: string;
  /** A Secret when validated; the decrypted string when handed to create(). */
  account_key?: Secret | string;
  sas_url?: Secret | string;
  endpoint?: string;
  key_prefix?: string;
  upload_part_size?: number;
  upload_concurrency?: number;
  download_part_size?: number;
  download_concurrency?: number;
  access_tier?: '' | 'Archive' | 'Hot' | 'Cool';
  use_emulator?: boolean;
}

/** Azurite's well-known development account, used with use_emulator when no account is given. */
export const EMULATOR_ACCOUNT = 'devstoreaccount1';
export const EMULATOR_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
export const EMULATOR_ENDPOINT = 'http://127.0.0.1:10000';

const MB = 1024 * 1024;
/** A block is at most 4000 MiB. */
const MAX_PART_MB = 4000;

const sizeMb = (field: string) =>
  Joi.number()
    .integer()
    .min(0)
    .max(MAX_PART_MB)
    .messages({
      'number.min': `${field} must not be negative (MB; 0 means the default)`,
      'number.max': `${field} must be at most ${MAX_PART_MB} MB`,
      'number.base': `${field} must be a whole number of MB`,
      'number.integer': `${field} must be a whole number of MB`,
    });

const count = (field: string) =>
  Joi.number()
    .integer()
    .min(0)
    .max(64)
    .messages({
      'number.min': `${field} must not be negative (0 means the default)`,
      'number.max': `${field} must be at most 64`,
      'number.base': `${field} must be a whole number`,
      'number.integer': `${field} must be a whole number`,
    });

/** Validates azblobconfig when a user, group or folder is saved. */
export const azBlobOptionsSchema = Joi.object<AzBlobOptions>({
  container: Joi.string()
    .required()
    .pattern(/^(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*$/)
    .messages({
      'any.required': 'azblobconfig.container is required',
      'string.empty': 'azblobconfig.container must not be empty',
      'string.pattern.base': 'container must be 3-63 characters of lowercase letters, digits and single hyphens (Azure naming rules)',
    }),
  account_name: Joi.string()
    .allow('')
    .pattern(/^[a-z0-9]{3,24}$/)
    .messages({ 'string.pattern.base': 'account_name must be 3-24 lowercase letters or digits' }),
  account_key: secretSchema,
  sas_url: secretSchema,
  endpoint: httpUrlSchema.allow('').messages({
    'string.uri': 'endpoint must be an http:// or https:// URL, e.g. https://myaccount.blob.core.windows.net',
    'string.uriCustomScheme': 'endpoint must be an http:// or https:// URL, e.g. https://myaccount.blob.core.windows.net',
  }),
  key_prefix: keyPrefixSchema.messages({
    'any.invalid': "key_prefix must not contain '..' segments",
    'string.pattern.name': 'key_prefix must not contain backslashes',
  }),
  upload_part_size: sizeMb('upload_part_size'),
  upload_concurrency: count('upload_concurrency'),
  download_part_size: sizeMb('download_part_size'),
  download_concurrency: count('download_concurrency'),
  access_tier: Joi.string().valid('', 'Archive', 'Hot', 'Cool').messages({ 'any.only': "access_tier must be one of '', 'Archive', 'Hot', 'Cool'" }),
  use_emulator: Joi.boolean(),
})
  .custom((v: AzBlobOptions, h) => {
    const sas = typeof v.sas_url === 'string' ? v.sas_url : isSecret(v.sas_url) && v.sas_url.status === 'Plain' ? (v.sas_url.payload ?? '') : '';
    if (sas !== '' && !isHttpUrl(sas)) return h.error('az.badSasUrl');
    if (hasSecret(v.sas_url)) return v;
    if (v.use_emulator) return v;
    if (!v.account_name) return h.error('az.noCredentials');
    if (!hasSecret(v.account_key)) return h.error('az.noKey');
    return v;
  })
  .messages({
    'az.noCredentials': 'either sas_url or account_name with account_key is required',
    'az.noKey': 'account_key is required with account_name (or give a sas_url)',
    // never the value: it holds the SAS signature
    'az.badSasUrl': 'sas_url must be an http:// or https:// URL, e.g. https://myaccount.blob.core.windows.net/container?sv=...&sig=...',
  });

/** True for an absolute http(s) URL with a host. */
export function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v.trim());
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

function hasSecret(v: unknown): boolean {
  if (typeof v === 'string') return v !== '';
  return isSecret(v) && ((v.payload ?? '') !== '' || v.status === 'Redacted');
}

/** The cleartext of a decrypted secret option ('' when absent). */
export function secretText(v: Secret | string | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  if (v.status === 'Plain') return v.payload ?? '';
  throw new Error(`fs-azblob: secret option still encrypted (${v.status}); the core must decrypt it before create()`);
}

/** Options resolved to what the backend uses (defaults applied, sizes in bytes). */
export interface AzBlobSettings {
  container: string;
  accountName: string;
  accountKey: string;
  sasUrl: string;
  /** Blob service URL (account level), '' with a SAS URL. */
  serviceUrl: string;
  keyPrefix: string;
  uploadPartSize: number;
  uploadConcurrency: number;
  downloadPartSize: number;
  downloadConcurrency: number;
  accessTier: '' | 'Archive' | 'Hot' | 'Cool';
  /** A download body that moves no byte for this long fails (plugin config idle_timeout). */
  idleTimeoutMs: number;
}

/** Upload buffers at the defaults: 5 MB × 2 = 10 MB per upload (the SDK reuses its block buffers). */
export const DEFAULTS = { uploadPartSizeMb: 4, uploadConcurrency: 2, downloadPartSizeMb: 5, downloadConcurrency: 1 };

export function resolveSettings(o: AzBlobOptions): AzBlobSettings {
  const emulator = o.use_emulator ?? false;
  const accountName = o.account_name || (emulator ? EMULATOR_ACCOUNT : '');
  const accountKey = secretText(o.account_key) || (emulator && accountName === EMULATOR_ACCOUNT ? EMULATOR_KEY : '');
  let serviceUrl: string;
  if (emulator) {
    // Path style: http://host:port/<account>
    const base = (o.endpoint || EMULATOR_ENDPOINT).replace(/\/+$/, '');
    serviceUrl = base.endsWith(`/${accountName}`) ? base : `${base}/${accountName}`;
  } else {
    serviceUrl = (o.endpoint || `https://${accountName}.blob.core.windows.net`).replace(/\/+$/, '');
  }
  return {
    container: o.container,
    accountName,
    accountKey,
    sasUrl: secretText(o.sas_url),
    serviceUrl,
    keyPrefix: o.key_prefix ?? '',
    uploadPartSize: (o.upload_part_size || DEFAULTS.uploadPartSizeMb) * MB,
    uploadConcurrency: o.upload_concurrency || DEFAULTS.uploadConcurrency,
    downloadPartSize: (o.download_part_size || DEFAULTS.downloadPartSizeMb) * MB,
    downloadConcurrency: o.download_concurrency || DEFAULTS.downloadConcurrency,
    accessTier: o.access_tier ?? '',
    idleTimeoutMs: DEFAULT_AZ_TIMEOUTS.idleTimeoutMs,
  };
}

/** Network time limits of the Azure client, in ms. */
export interface AzTimeouts {
  /**
   * One try of one request, until the answer's headers (a block upload sends its
   * body within it): the SDK's `tryTimeoutInMs`.
   */
  tryTimeoutMs: number;
  /** A download body that moves no byte for this long fails (time the client does not read is not counted). */
  idleTimeoutMs: number;
}

export const DEFAULT_AZ_TIMEOUTS: Readonly<AzTimeouts> = Object.freeze({ tryTimeoutMs: 600_000, idleTimeoutMs: 120_000 });

/** Plugin-level settings (`plugins[].config` of @ferry/fs-azblob). */
export interface AzBlobPluginConfig {
  /** Seconds one try of one request may take until its answer (default 600). */
  try_timeout?: number;
  /** Seconds a download may go without receiving a byte (default 120). */
  idle_timeout?: number;
}

export const azBlobPluginConfigSchema = Joi.object<AzBlobPluginConfig>({
  try_timeout: Joi.number().greater(0).max(86400),
  idle_timeout: Joi.number().greater(0).max(86400),
});

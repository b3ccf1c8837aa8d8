/**
 * The filesystem of a user, a group's users or a virtual folder (the API's
 * FilesystemConfig: `provider` 0-6 and that provider's config object) as a
 * form, without React (the unit tests read it): the options of each
 * provider, the form read from the API's object and the object sent back,
 * secrets as set/unset (never their value).
 */
import { apiValueOf, formValueOf, setPath, type OptionSpec, type OptionValues } from './option-values.js';

type Obj = Record<string, unknown>;

export interface ProviderInfo {
  provider: number;
  /** The key of its config object in FilesystemConfig. */
  configKey: string;
  options: OptionSpec[];
}

const text = (key: string, required = false): OptionSpec => ({ key, kind: 'text', ...(required ? { required } : {}) });
const num = (key: string): OptionSpec => ({ key, kind: 'number' });
const secret = (key: string, multiline = false): OptionSpec => ({ key, kind: 'secret', ...(multiline ? { multiline } : {}) });
const bool = (key: string): OptionSpec => ({ key, kind: 'bool' });
const sel = (key: string, choices: readonly (string | number)[]): OptionSpec => ({ key, kind: 'select', choices, initial: choices[0] });

/** S3's canned ACLs (fs-s3 takes these or none). */
const S3_ACLS = [
  '',
  'private',
  'public-read',
  'public-read-write',
  'authenticated-read',
  'aws-exec-read',
  'bucket-owner-read',
  'bucket-owner-full-control',
] as const;
const GCS_STORAGE_CLASSES = ['', 'STANDARD', 'NEARLINE', 'COLDLINE', 'ARCHIVE', 'MULTI_REGIONAL', 'REGIONAL', 'DURABLE_REDUCED_AVAILABILITY'] as const;
const GCS_ACLS = ['', 'authenticatedRead', 'bucketOwnerFullControl', 'bucketOwnerRead', 'private', 'projectPrivate', 'publicRead'] as const;

/** The seven providers and their options, in reference.yaml's order (S3Config, GCSConfig...). */
export const PROVIDERS: readonly ProviderInfo[] = [
  { provider: 0, configKey: 'osconfig', options: [num('read_buffer_size'), num('write_buffer_size')] },
  {
    provider: 1,
    configKey: 's3config',
    options: [
      text('bucket', true),
      text('region'),
      text('endpoint'),
      text('access_key'),
      secret('access_secret'),
      text('role_arn'),
      text('session_token'),
      secret('sse_customer_key'),
      text('key_prefix'),
      text('storage_class'),
      sel('acl', S3_ACLS),
      num('upload_part_size'),
      num('upload_concurrency'),
      num('upload_part_max_time'),
      num('download_part_size'),
      num('download_concurrency'),
      num('download_part_max_time'),
      bool('force_path_style'),
    ],
  },
  {
    provider: 2,
    configKey: 'gcsconfig',
    options: [
      text('bucket', true),
      sel('automatic_credentials', [0, 1]),
      secret('credentials'),
      text('key_prefix'),
      sel('storage_class', GCS_STORAGE_CLASSES),
      sel('acl', GCS_ACLS),
      num('upload_part_size'),
      num('upload_part_max_time'),
    ],
  },
  {
    provider: 3,
    configKey: 'azblobconfig',
    options: [
      text('container', true),
      text('account_name'),
      secret('account_key'),
      secret('sas_url'),
      text('endpoint'),
      text('key_prefix'),
      sel('access_tier', ['', 'Archive', 'Hot', 'Cool']),
      num('upload_part_size'),
      num('upload_concurrency'),
      num('download_part_size'),
      num('download_concurrency'),
      bool('use_emulator'),
    ],
  },
  { provider: 4, configKey: 'cryptconfig', options: [secret('passphrase'), num('read_buffer_size'), num('write_buffer_size')] },
  {
    provider: 5,
    configKey: 'sftpconfig',
    options: [
      text('endpoint', true),
      text('username', true),
      secret('password'),
      secret('private_key', true),
      secret('key_passphrase'),
      { key: 'fingerprints', kind: 'lines' },
      text('prefix'),
      num('buffer_size'),
      bool('disable_concurrent_reads'),
      sel('equality_check_mode', [0, 1]),
    ],
  },
  {
    provider: 6,
    configKey: 'httpconfig',
    options: [text('endpoint', true), text('username'), secret('password'), secret('api_key'), bool('skip_tls_verify'), sel('equality_check_mode', [0, 1])],
  },
];

export const LOCAL_PROVIDER = 0;

export const providerInfo = (provider: number): ProviderInfo | undefined => PROVIDERS.find((p) => p.provider === provider);

/** Whether the provider keeps its files under a local directory (the user's home_dir, the folder's mapped_path): local, encrypted local. */
export const usesLocalRoot = (provider: number): boolean => provider === 0 || provider === 4;

/** The form: the provider chosen and the options of every provider (what was typed for one is kept while another is tried). */
export interface StorageFields {
  provider: number;
  configs: Record<number, OptionValues>;
}

function valuesOf(info: ProviderInfo, config: unknown, fresh: boolean): OptionValues {
  const sub = (config && typeof config === 'object' ? config : {}) as Obj;
  return Object.fromEntries(info.options.map((spec) => [spec.key, formValueOf(spec, sub, fresh)]));
}

/** The form of a FilesystemConfig as the API read it (absent: the local filesystem); secrets as set/unset. */
export function storageFieldsOf(fs: unknown): StorageFields {
  const o = (fs && typeof fs === 'object' ? fs : {}) as Obj;
  const provider = typeof o.provider === 'number' ? o.provider : LOCAL_PROVIDER;
  const configs: Record<number, OptionValues> = {};
  for (const info of PROVIDERS)
    configs[info.provider] = info.provider === provider ? valuesOf(info, o[info.configKey], false) : valuesOf(info, undefined, true);
  return { provider, configs };
}

/** The form of a new object's storage (the local filesystem). */
export const emptyStorage = (): StorageFields => storageFieldsOf(undefined);

/**
 * The FilesystemConfig the API is sent: the provider and its config only
 * (the server keeps the chosen provider's object), options left empty left
 * out, a stored secret sent back as read (the server keeps it), a typed one
 * as a Plain secret.
 */
export function filesystemInputOf(f: StorageFields): { provider: number } & Obj {
  const info = providerInfo(f.provider);
  if (!info) return { provider: f.provider };
  const config: Obj = {};
  const values = f.configs[f.provider] ?? {};
  for (const spec of info.options) {
    const v = apiValueOf(spec, values[spec.key], `filesystem.${info.configKey}`);
    if (v !== undefined) setPath(config, spec.key, v);
  }
  return { provider: f.provider, [info.configKey]: config };
}

/** The form with one option of the chosen provider changed. */
export function withOption(f: StorageFields, key: string, v: OptionValues[string]): StorageFields {
  return { ...f, configs: { ...f.configs, [f.provider]: { ...f.configs[f.provider], [key]: v } } };
}

/** The form with no stored secret (a copy for another object: the secrets are not readable, they are typed again). */
export function withoutStoredSecrets(f: StorageFields): StorageFields {
  const configs: Record<number, OptionValues> = {};
  for (const [provider, values] of Object.entries(f.configs))
    configs[Number(provider)] = Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, v && typeof v === 'object' && !Array.isArray(v) ? { ...v, stored: null, clear: false } : v]),
    );
  return { ...f, configs };
}

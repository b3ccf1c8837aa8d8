/**
 * @ferry/fs-gcs: filesystem provider 2, Google Cloud Storage.
 */
import { FsError, FsErrorCode, definePlugin, derivedFromOptions, packageInfo, type FsProviderDef, lazyModule } from '@ferry/core';
import { SECRET_FIELDS, gcsOptionsSchema, gcsPluginConfigSchema, secretText, type GcsOptions, type GcsPluginConfig } from './config.schema.js';
import { GCS_CAPABILITIES } from './constants.js';
import type * as LibModule from './lib.js';

const pkg = packageInfo(import.meta.url);
const MB = 1024 * 1024;
/**
 * Resumable-upload chunk of `upload_part_size: 0`. The client keeps the chunk in flight until the
 * server acknowledges it: 8 MB kept a 128 MiB upload at +30 MB of RSS, 16 MB at +76 MB
 * (docs/remote-storage.md).
 */
export const DEFAULT_UPLOAD_PART_MB = 8;

// This entry is what the plugin loader imports: it stays free of
// @google-cloud/storage. GcsFs and the client cache live in '@ferry/fs-gcs/lib'
// (./lib.js), imported when the provider first creates an Fs.
export { GCS_CAPABILITIES, MTIME_META } from './constants.js';
export { mapGcsError } from './gcs-errors.js';
export type { GcsFs } from './gcs.fs.js';
export { ALLOW_NON_SA_ENV, gcsOptionsSchema, gcsPluginConfigSchema, parseCredentials, type GcsOptions, type GcsPluginConfig } from './config.schema.js';

/** The SDK half of the plugin, imported once on first use (a failed import is retried next time). */
const lib = lazyModule<typeof LibModule>(() => import('./lib.js'));

/** Provider number 2 (FilesystemConfig.provider), never reused. */
export const GCS_PROVIDER = 2;

/**
 * True when two configurations reach the same bucket with the same identity (same
 * service-account key, or both on Application Default Credentials); the key prefix may
 * differ. Moves and copies between their mounts are then server-side object copies.
 */
export function sameGcsBucket(a: GcsOptions, b: GcsOptions): boolean {
  const identity = (o: GcsOptions) => [o.bucket, o.automatic_credentials === 1 ? 'adc' : secretText(o.credentials)].join('\0');
  return identity(a) === identity(b);
}

/** The provider definition; `config` is the plugin config (API endpoint for emulators, project id). */
export function gcsProvider(config: GcsPluginConfig = {}): FsProviderDef<GcsOptions> {
  const { value: cfg, error } = gcsPluginConfigSchema.validate(config);
  if (error) throw new Error(`@ferry/fs-gcs: ${error.message}`);
  /** The options validated, once per options object. */
  const validated = derivedFromOptions((options: GcsOptions): GcsOptions => {
    const { value, error } = gcsOptionsSchema.validate(options);
    if (error) throw new FsError(FsErrorCode.Invalid, `gcs: ${error.message}`);
    return value as GcsOptions;
  });
  return {
    provider: GCS_PROVIDER,
    key: 'gcs',
    configKey: 'gcsconfig',
    optionsSchema: gcsOptionsSchema,
    secretFields: SECRET_FIELDS,
    placeholderFields: ['key_prefix'],
    capabilities: GCS_CAPABILITIES,
    async create(options: GcsOptions) {
      const o = validated(options);
      const { GcsFs, storageFor } = await lib.load();
      const storage = storageFor(o, cfg);
      return new GcsFs(storage.bucket(o.bucket), {
        keyPrefix: o.key_prefix ?? '',
        storageClass: o.storage_class ?? '',
        acl: o.acl ?? '',
        partSize: (o.upload_part_size || DEFAULT_UPLOAD_PART_MB) * MB,
        partMaxTimeMs: (o.upload_part_max_time ?? 0) * 1000,
        maxRetries: cfg.max_retries ?? 3,
        mediaAuth: !cfg.endpoint || cfg.endpoint_auth === true,
      });
    },
    sameResource: sameGcsBucket,
    describe(options: GcsOptions) {
      return { bucket: options.bucket, ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}) };
    },
  };
}

export default definePlugin<GcsPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: gcsPluginConfigSchema,
  register(ctx, config) {
    ctx.registerFsProvider(gcsProvider(config));
  },
  teardown() {
    // Cached clients exist only once the SDK half was imported: this never imports it.
    lib.loaded()?.clearClients();
  },
});

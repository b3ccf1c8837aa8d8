/**
 * @ferry/fs-s3: filesystem provider 1, S3 and S3-compatible object storage.
 */
import { definePlugin, packageInfo, type FsProviderDef, type FsScope, lazyModule } from '@ferry/core';
import { resolveSettings, s3OptionsSchema, s3PluginConfigSchema, type S3Options, type S3PluginConfig, type S3Settings } from './config.schema.js';
import { DEFAULT_S3_TIMEOUTS, roleSessionName, S3_CAPABILITIES, type S3Timeouts } from './constants.js';
import type * as LibModule from './lib.js';

const pkg = packageInfo(import.meta.url);

// This entry is what the plugin loader imports: it stays free of the AWS SDK.
// S3Fs and createS3Client live in '@ferry/fs-s3/lib' (./lib.js), imported
// when the provider first creates an Fs.
export { S3_CAPABILITIES, MTIME_META, DEFAULT_S3_TIMEOUTS, type S3Timeouts } from './constants.js';
export { s3OptionsSchema, s3PluginConfigSchema, resolveSettings, type S3Options, type S3PluginConfig, type S3Settings } from './config.schema.js';
export { mapS3Error } from './errors.js';
export type { S3Fs } from './s3.fs.js';

/** The SDK half of the plugin, imported once on first use (a failed import is retried next time). */
const lib = lazyModule<typeof LibModule>(() => import('./lib.js'));

/**
 * True when two configurations reach the same bucket with the same identity: same
 * endpoint, region, bucket, access key + secret, role and SSE-C key. Moves and copies
 * between their mounts are then server-side CopyObject requests (plus deletes).
 */
export function sameS3Bucket(a: S3Options, b: S3Options): boolean {
  const [x, y] = [resolveSettings(a), resolveSettings(b)];
  const identity = (s: S3Settings) =>
    [s.endpoint ?? '', s.region, s.bucket, s.accessKey, s.accessSecret, s.sessionToken, s.roleArn, s.sseCustomerKey, String(s.forcePathStyle)].join('\0');
  return identity(x) === identity(y);
}

/** Provider number 1 (FilesystemConfig.provider), never reused. */
export const S3_PROVIDER = 1;

/** The provider, with the network time limits of the plugin's config. */
export function createS3Provider(config: S3PluginConfig = {}): FsProviderDef<S3Options> {
  const timeouts: S3Timeouts = {
    connectTimeoutMs: (config.connect_timeout ?? DEFAULT_S3_TIMEOUTS.connectTimeoutMs / 1000) * 1000,
    idleTimeoutMs: (config.idle_timeout ?? DEFAULT_S3_TIMEOUTS.idleTimeoutMs / 1000) * 1000,
  };
  return {
    provider: S3_PROVIDER,
    key: 's3',
    configKey: 's3config',
    optionsSchema: s3OptionsSchema,
    secretFields: ['access_secret', 'sse_customer_key'],
    placeholderFields: ['key_prefix'],
    capabilities: S3_CAPABILITIES,
    async create(options: S3Options, scope: FsScope) {
      const settings = resolveSettings(options);
      const { S3Fs, createS3Client } = await lib.load();
      return new S3Fs(createS3Client(settings, roleSessionName(scope.username), timeouts), settings);
    },
    sameResource: sameS3Bucket,
    describe(options: S3Options) {
      return { bucket: options.bucket, ...(options.endpoint ? { endpoint: options.endpoint } : {}) };
    },
  };
}

/** The provider with the default time limits. */
export const s3Provider: FsProviderDef<S3Options> = createS3Provider();

export default definePlugin<S3PluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: s3PluginConfigSchema,
  register(ctx, config) {
    ctx.registerFsProvider(config && Object.keys(config).length > 0 ? createS3Provider(config) : s3Provider);
  },
});

/**
 * @ferry/fs-s3: filesystem provider 1, S3 and S3-compatible object storage.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { ClientCache, definePlugin, packageInfo, type FsProviderDef, type FsScope, lazyModule } from '@ferry/core';
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

/** How long an S3 client nobody uses is kept for the next session (ms). */
export const S3_CLIENT_IDLE_MS = 60_000;

/** The client caches of every provider built, emptied by the plugin's teardown. */
const caches = new Set<ClientCache<S3Client>>();

export interface S3ProviderOptions {
  /** How long an S3 client nobody uses is kept (ms); S3_CLIENT_IDLE_MS by default (tests shorten it). */
  clientIdleMs?: number;
}

/**
 * The provider, with the network time limits of the plugin's config. Its Fs
 * share one S3 client per identity (s3ClientIdentity(): endpoint, region,
 * credentials, role and session name, time limits), kept `clientIdleMs`
 * after its last Fs is closed: the core creates an Fs per session (each HTTP
 * request of the file API), and a client of its own would open a new
 * connection and resolve its configuration every time. The cache lives here,
 * so a server that never uses S3 never imports the SDK.
 */
export function createS3Provider(config: S3PluginConfig = {}, o: S3ProviderOptions = {}): FsProviderDef<S3Options> {
  const timeouts: S3Timeouts = {
    connectTimeoutMs: (config.connect_timeout ?? DEFAULT_S3_TIMEOUTS.connectTimeoutMs / 1000) * 1000,
    idleTimeoutMs: (config.idle_timeout ?? DEFAULT_S3_TIMEOUTS.idleTimeoutMs / 1000) * 1000,
  };
  const clients = new ClientCache<S3Client>({ idleMs: o.clientIdleMs ?? S3_CLIENT_IDLE_MS, destroy: (c) => c.destroy() });
  caches.add(clients);
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
      const { S3Fs, createS3Client, s3ClientIdentity } = await lib.load();
      const sessionName = roleSessionName(scope.username);
      const lease = clients.acquire(s3ClientIdentity(settings, sessionName, timeouts), () => createS3Client(settings, sessionName, timeouts));
      try {
        return new S3Fs(lease, settings);
      } catch (err) {
        lease.release();
        throw err;
      }
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
  teardown() {
    // Destroys the cached clients (their sockets); none exist unless an Fs was created, so this never imports the SDK.
    for (const c of caches) c.clear();
  },
});

/**
 * @ferry/fs-azblob: filesystem provider 3, Azure Blob Storage (and Azurite).
 */
import { definePlugin, packageInfo, type FsProviderDef, type FsScope, lazyModule } from '@ferry/core';
import {
  azBlobOptionsSchema,
  azBlobPluginConfigSchema,
  DEFAULT_AZ_TIMEOUTS,
  isHttpUrl,
  resolveSettings,
  type AzBlobOptions,
  type AzBlobPluginConfig,
  type AzBlobSettings,
  type AzTimeouts,
} from './config.schema.js';
import { AZBLOB_CAPABILITIES } from './constants.js';
import type * as LibModule from './lib.js';

const pkg = packageInfo(import.meta.url);

// This entry is what the plugin loader imports: it stays free of
// @azure/storage-blob. AzBlobFs, createContainerClient and the shared container
// clients live in '@ferry/fs-azblob/lib' (./lib.js), imported when the provider
// first creates an Fs.
export { AZBLOB_CAPABILITIES, MTIME_META } from './constants.js';
export {
  azBlobOptionsSchema,
  azBlobPluginConfigSchema,
  DEFAULT_AZ_TIMEOUTS,
  resolveSettings,
  type AzBlobOptions,
  type AzBlobPluginConfig,
  type AzBlobSettings,
  type AzTimeouts,
} from './config.schema.js';
export { mapAzError } from './errors.js';
export type { AzBlobFs } from './azblob.fs.js';

/** The SDK half of the plugin, imported once on first use (a failed import is retried next time). */
const lib = lazyModule<typeof LibModule>(() => import('./lib.js'));

/** Provider number 3 (FilesystemConfig.provider), never reused. */
export const AZBLOB_PROVIDER = 3;

/** The provider, with the network time limits of the plugin's config. */
export function createAzBlobProvider(config: AzBlobPluginConfig = {}): FsProviderDef<AzBlobOptions> {
  const timeouts: AzTimeouts = {
    tryTimeoutMs: (config.try_timeout ?? DEFAULT_AZ_TIMEOUTS.tryTimeoutMs / 1000) * 1000,
    idleTimeoutMs: (config.idle_timeout ?? DEFAULT_AZ_TIMEOUTS.idleTimeoutMs / 1000) * 1000,
  };
  return {
    provider: AZBLOB_PROVIDER,
    key: 'azblob',
    configKey: 'azblobconfig',
    optionsSchema: azBlobOptionsSchema,
    secretFields: ['account_key', 'sas_url'],
    placeholderFields: ['key_prefix'],
    capabilities: AZBLOB_CAPABILITIES,
    async create(options: AzBlobOptions, _scope: FsScope) {
      const settings = { ...resolveSettings(options), idleTimeoutMs: timeouts.idleTimeoutMs };
      const { AzBlobFs, acquireContainerClient } = await lib.load();
      // One client per identity, shared by the sessions (an Fs is created per request).
      const lease = acquireContainerClient(settings, timeouts);
      try {
        return new AzBlobFs(lease.client, settings, lease.release);
      } catch (err) {
        lease.release();
        throw err;
      }
    },
    sameResource: sameAzContainer,
    describe: describeAz,
  };
}

/** Where the data lives, for filesystem events: never the SAS token itself. */
function describeAz(options: AzBlobOptions): { bucket?: string; endpoint?: string } {
  if (options.sas_url) {
    if (typeof options.sas_url !== 'string' || !isHttpUrl(options.sas_url)) return { bucket: options.container };
    const u = new URL(options.sas_url);
    return { bucket: options.container, endpoint: `${u.origin}${u.pathname}`.replace(/\/+$/, '') };
  }
  const s = resolveSettings({ ...options, account_key: '' });
  return { bucket: options.container, endpoint: s.serviceUrl };
}

/**
 * True when two configurations reach the same container with the same credentials
 * (SAS URL, or account name + key on the same service URL). Moves and copies
 * between their mounts are then server-side blob copies.
 */
export function sameAzContainer(a: AzBlobOptions, b: AzBlobOptions): boolean {
  const [x, y] = [resolveSettings(a), resolveSettings(b)];
  const identity = (s: AzBlobSettings) => [s.container, s.sasUrl, s.serviceUrl, s.accountName, s.accountKey].join('\0');
  return identity(x) === identity(y);
}

/** The provider with the default time limits. */
export const azBlobProvider: FsProviderDef<AzBlobOptions> = createAzBlobProvider();

export default definePlugin<AzBlobPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: azBlobPluginConfigSchema,
  register(ctx, config) {
    ctx.registerFsProvider(config && Object.keys(config).length > 0 ? createAzBlobProvider(config) : azBlobProvider);
  },
  teardown() {
    // Shared clients exist only once the SDK half was imported: this never imports it.
    lib.loaded()?.clearContainerClients();
  },
});

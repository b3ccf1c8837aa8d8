/**
 * @ferry/fs-azblob: filesystem provider 3, Azure Blob Storage (and Azurite).
 */
import { definePlugin, packageInfo, type FsProviderDef, type FsScope } from '@ferry/core';
import { createContainerClient } from './az-client.js';
import { azBlobOptionsSchema, resolveSettings, type AzBlobOptions } from './config.schema.js';
import { AZBLOB_CAPABILITIES, AzBlobFs } from './azblob.fs.js';

const pkg = packageInfo(import.meta.url);

export { AzBlobFs, AZBLOB_CAPABILITIES } from './azblob.fs.js';
export { MTIME_META } from './azblob-base.js';
export { azBlobOptionsSchema, resolveSettings, type AzBlobOptions, type AzBlobSettings } from './config.schema.js';
export { mapAzError } from './errors.js';

/** Provider number 3 (FilesystemConfig.provider), never reused. */
export const AZBLOB_PROVIDER = 3;

export const azBlobProvider: FsProviderDef<AzBlobOptions> = {
  provider: AZBLOB_PROVIDER,
  key: 'azblob',
  configKey: 'azblobconfig',
  optionsSchema: azBlobOptionsSchema,
  secretFields: ['account_key', 'sas_url'],
  placeholderFields: ['key_prefix'],
  capabilities: AZBLOB_CAPABILITIES,
  create(options: AzBlobOptions, _scope: FsScope) {
    const settings = resolveSettings(options);
    return new AzBlobFs(createContainerClient(settings), settings);
  },
  describe(options: AzBlobOptions) {
    if (options.sas_url) {
      // Never the SAS token itself: only where it points, when readable.
      if (typeof options.sas_url !== 'string') return { bucket: options.container };
      const u = new URL(options.sas_url);
      return { bucket: options.container, endpoint: `${u.origin}${u.pathname}`.replace(/\/+$/, '') };
    }
    const s = resolveSettings({ ...options, account_key: '' });
    return { bucket: options.container, endpoint: s.serviceUrl };
  },
};

export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  register(ctx) {
    ctx.registerFsProvider(azBlobProvider);
  },
});

import { FsError, FsErrorCode, definePlugin, isSecret, packageInfo, type FsProviderDef } from '@ferry/core';
import { cleanUploadsTmp, localFsOptions, uploadsTmpDir } from '@ferry/fs-local';
import { cryptFsConfigSchema, pluginConfigSchema, type CryptFsConfig } from './config.schema.js';
import { CRYPT_CAPABILITIES, CryptFs } from './crypt.fs.js';

export { CryptFs, type CryptFsOptions } from './crypt.fs.js';
export { FsCryptError, type CryptFailure } from './errors.js';
export { cryptFsConfigSchema, type CryptFsConfig } from './config.schema.js';
export * as format from './format.js';

const pkg = packageInfo(import.meta.url);

function plainPassphrase(value: CryptFsConfig['passphrase'] | undefined): string {
  if (typeof value === 'string') return value;
  if (isSecret(value) && value.status === 'Plain') return value.payload ?? '';
  return '';
}

/** Provider 4: the local filesystem, encrypted at rest. */
export const cryptFsProvider: FsProviderDef<CryptFsConfig> = {
  provider: 4,
  key: 'crypt',
  configKey: 'cryptconfig',
  optionsSchema: cryptFsConfigSchema,
  secretFields: ['passphrase'],
  requiresLocalRoot: true,
  capabilities: CRYPT_CAPABILITIES,
  async create(options, scope) {
    const passphrase = plainPassphrase(options?.passphrase);
    if (!passphrase) {
      throw new FsError(FsErrorCode.Invalid, `encrypted filesystem of ${scope.username}: the passphrase is empty or was not decrypted`);
    }
    return new CryptFs({ ...(await localFsOptions(scope, options)), passphrase });
  },
};

export default definePlugin<Record<string, never>>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  async register(ctx) {
    // Shared with fs-local: uploads of either provider go through <dataDir>/uploads-tmp.
    const removed = await cleanUploadsTmp(ctx.dataDir);
    if (removed > 0) ctx.logger.info({ removed, dir: uploadsTmpDir(ctx.dataDir) }, 'removed stale uploads');
    ctx.registerFsProvider(cryptFsProvider);
  },
});

/**
 * @ferry/fs-s3: filesystem provider 1, S3 and S3-compatible object storage.
 */
import { definePlugin, packageInfo, type FsProviderDef, type FsScope } from '@ferry/core';
import { resolveSettings, s3OptionsSchema, type S3Options } from './config.schema.js';
import { createS3Client, roleSessionName } from './s3-client.js';
import { S3_CAPABILITIES, S3Fs } from './s3.fs.js';

const pkg = packageInfo(import.meta.url);

export { S3Fs, S3_CAPABILITIES } from './s3.fs.js';
export { MTIME_META } from './s3-base.js';
export { s3OptionsSchema, resolveSettings, type S3Options, type S3Settings } from './config.schema.js';
export { mapS3Error } from './errors.js';

/** Provider number 1 (FilesystemConfig.provider), never reused. */
export const S3_PROVIDER = 1;

export const s3Provider: FsProviderDef<S3Options> = {
  provider: S3_PROVIDER,
  key: 's3',
  configKey: 's3config',
  optionsSchema: s3OptionsSchema,
  secretFields: ['access_secret', 'sse_customer_key'],
  placeholderFields: ['key_prefix'],
  capabilities: S3_CAPABILITIES,
  create(options: S3Options, scope: FsScope) {
    const settings = resolveSettings(options);
    return new S3Fs(createS3Client(settings, roleSessionName(scope.username)), settings);
  },
  describe(options: S3Options) {
    return { bucket: options.bucket, ...(options.endpoint ? { endpoint: options.endpoint } : {}) };
  },
};

export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  register(ctx) {
    ctx.registerFsProvider(s3Provider);
  },
});

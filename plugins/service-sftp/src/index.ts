import { definePlugin, packageInfo } from '@ferry/core';
import { configSchema, type SftpConfig } from './config.js';
import { sftpService } from './server.js';

export { configSchema, DEFAULT_ALGORITHMS, type SftpConfig, type SftpBinding, type SftpAlgorithms } from './config.js';
export { fingerprintOf } from './host-keys.js';

const pkg = packageInfo(import.meta.url);

/** SFTP over SSH on the users' file sessions: every login through the login service. */
export default definePlugin<SftpConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema,
  register(ctx, config) {
    ctx.registerService(sftpService({ config, dataDir: ctx.dataDir, logger: ctx.logger, host: () => ctx.host.services }));
  },
});

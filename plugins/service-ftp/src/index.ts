import { definePlugin, packageInfo } from '@ferry/core';
import { configSchema, type FtpConfig } from './config.js';
import { ftpService } from './server.js';

export { configSchema, type FtpConfig, type FtpBinding, type TlsMode } from './config.js';

const pkg = packageInfo(import.meta.url);

/** FTP and FTPS on the users' file sessions: every login through the login service. */
export default definePlugin<FtpConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema,
  register(ctx, config) {
    ctx.registerService(ftpService({ config, logger: ctx.logger, host: () => ctx.host.services }));
  },
});

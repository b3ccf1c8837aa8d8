import { definePlugin, packageInfo } from '@ferry/core';
import { configSchema, type WebdavConfig } from './config.js';
import { webdavService } from './server.js';
import { tables } from './tables.js';

export { configSchema, type WebdavConfig, type WebdavBinding } from './config.js';

const pkg = packageInfo(import.meta.url);

/** WebDAV (RFC 4918 class 1 and 2) on the users' file sessions: every login through the login service. */
export default definePlugin<WebdavConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema,
  async register(ctx, config) {
    const db = await ctx.registerEntities(tables);
    ctx.registerService(webdavService({ config, logger: ctx.logger, host: () => ctx.host.services, db }));
  },
});

import { definePlugin, packageInfo } from '@ferry/core';
import { pluginConfigSchema, type EmailPluginConfig } from './config.schema.js';
import { emailActionDef } from './email.action.js';

export { emailActionDef, mailUnavailable } from './email.action.js';
export { AttachmentBudget, AttachmentSet, humanBytes, lazyStream } from './attachments.js';
export {
  emailOptionsSchema,
  generatedName,
  pluginConfigSchema,
  contentTypeOf,
  DEFAULT_MAX_ATTACHMENTS_SIZE,
  DEFAULT_TIMEOUT,
  GENERATED,
  type EmailOptions,
  type EmailPluginConfig,
} from './config.schema.js';

const pkg = packageInfo(import.meta.url);

/** Event action type 3 (`email_config`): email through the core's mailer with streamed attachments. */
export default definePlugin<EmailPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  register(ctx, config) {
    ctx.registerActionType(emailActionDef(config, ctx.host));
  },
});

import { definePlugin, packageInfo } from '@ferry/core';
import { pluginConfigSchema, type ImapPluginConfig } from './config.schema.js';
import { imapActionDef } from './imap.action.js';

export { imapActionDef, connectionOf, type ImapConnection } from './imap.action.js';
export { composeMessage, humanBytes, type MessageInput } from './message.js';
export {
  folderPath,
  imapOptionsSchema,
  pluginConfigSchema,
  contentTypeOf,
  DEFAULT_MAX_ATTACHMENTS_SIZE,
  MAX_TIMEOUT,
  type ImapOptions,
  type ImapPluginConfig,
  type TlsMode,
} from './config.schema.js';

const pkg = packageInfo(import.meta.url);

/** Event action type 16 (`imap_config`): a message with the event user's files appended to an IMAP folder. */
export default definePlugin<ImapPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  register(ctx, config) {
    ctx.registerActionType(imapActionDef(config, ctx.host));
  },
});

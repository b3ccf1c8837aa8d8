import Joi from 'joi';
import { definePlugin, packageInfo } from '@ferry/core';
import { httpActionDef } from './http.action.js';

export { httpActionDef, runHttp, EXCERPT_CHARS, type HttpActionSettings, type FileSource } from './http.action.js';
export {
  httpOptionsSchema,
  TEMPLATE_FIELDS,
  MAX_TIMEOUT,
  DEFAULT_TIMEOUT,
  MANAGED_HEADERS,
  type HttpOptions,
  type HttpPart,
  type KeyValue,
} from './options.js';
export { isBlockedAddress, checkHost, guardedLookup, METADATA_HOSTNAMES } from './address-guard.js';

/** Plugin config (`plugins[].config` of @ferry/action-http). */
export interface HttpPluginConfig {
  /** Allow requests to link-local (169.254.0.0/16, fe80::/10) and cloud metadata addresses. Default false. */
  allow_link_local: boolean;
}

export const pluginConfigSchema = Joi.object<HttpPluginConfig>({
  allow_link_local: Joi.boolean().default(false),
});

const pkg = packageInfo(import.meta.url);

/** Event action type 1 (`http_config`): HTTP requests with templated fields and multipart parts streamed from the event user's files. */
export default definePlugin<HttpPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  register(ctx, config) {
    ctx.registerActionType(httpActionDef({ allowLinkLocal: config.allow_link_local, files: () => ctx.host.files }));
  },
});

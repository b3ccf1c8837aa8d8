/**
 * @ferry/fs-http: filesystem provider 6, any server speaking the httpfs
 * protocol (the HTTP storage backend; `examples/httpfs-server` is the
 * reference implementation).
 */
import { definePlugin, packageInfo, type FsProviderDef, type FsScope, lazyModule } from '@ferry/core';
import { AgentPool } from './agents.js';
import {
  httpFsOptionsSchema,
  httpFsPluginConfigSchema,
  isSameResource,
  PLUGIN_DEFAULTS,
  resolveSettings,
  type HttpFsOptions,
  type HttpFsPluginConfig,
} from './config.schema.js';
import { HTTP_CAPABILITIES } from './constants.js';
import type * as LibModule from './lib.js';

const pkg = packageInfo(import.meta.url);

// This entry is what the plugin loader imports: it stays free of undici.
// HttpFs lives in '@ferry/fs-http/lib' (./lib.js), imported when the provider
// first creates an Fs; an AgentPool loads undici with its first pool.
export { HTTP_CAPABILITIES } from './constants.js';
export type { HttpFs, StatVfs } from './http.fs.js';
export { AgentPool } from './agents.js';
export {
  httpFsOptionsSchema,
  httpFsPluginConfigSchema,
  isSameResource,
  resolveSettings,
  PLUGIN_DEFAULTS,
  type HttpFsOptions,
  type HttpFsPluginConfig,
  type HttpFsSettings,
} from './config.schema.js';
export { codeForStatus } from './errors.js';
export { fromWireMode, TEMP_NAME, GO_MODE_DIR, GO_MODE_SYMLINK } from './wire.js';

/** The SDK half of the plugin, imported once on first use (a failed import is retried next time). */
const lib = lazyModule<typeof LibModule>(() => import('./lib.js'));

/** Provider number 6 (FilesystemConfig.provider), never reused. */
export const HTTP_PROVIDER = 6;

/**
 * Builds the provider. Connections are pooled per endpoint origin in `agents`
 * (shared by every Fs the provider creates), so tests can pass their own pool
 * and close it.
 */
export function createHttpProvider(
  config: HttpFsPluginConfig = {},
  agents = new AgentPool(config.connections_per_endpoint ?? PLUGIN_DEFAULTS.connectionsPerEndpoint),
): FsProviderDef<HttpFsOptions> & { agents: AgentPool } {
  return {
    provider: HTTP_PROVIDER,
    key: 'http',
    configKey: 'httpconfig',
    optionsSchema: httpFsOptionsSchema,
    secretFields: ['password', 'api_key'],
    placeholderFields: ['endpoint', 'username'],
    capabilities: HTTP_CAPABILITIES,
    agents,
    async create(options: HttpFsOptions, _scope: FsScope) {
      const settings = resolveSettings(options, config);
      const { HttpFs } = await lib.load();
      return new HttpFs(settings, agents.get(settings.endpoint, settings.skipTlsVerify));
    },
    sameResource: isSameResource,
    describe(options: HttpFsOptions) {
      return { endpoint: resolveSettings({ ...options, password: '', api_key: '' }).endpoint };
    },
  };
}

let registered: ReturnType<typeof createHttpProvider> | undefined;

export default definePlugin<HttpFsPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: httpFsPluginConfigSchema,
  register(ctx, config) {
    registered = createHttpProvider(config ?? {});
    ctx.registerFsProvider(registered);
  },
  async teardown() {
    await registered?.agents.close();
    registered = undefined;
  },
});

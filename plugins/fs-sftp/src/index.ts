/**
 * @ferry/fs-sftp: filesystem provider 5, a directory on a remote SFTP server.
 */
import { FsError, FsErrorCode, definePlugin, derivedFromOptions, packageInfo, silentLogger, type FsProviderDef, type Logger, lazyModule } from '@ferry/core';
import { SECRET_FIELDS, secretText, sftpOptionsSchema, sftpPluginConfigSchema, type SftpOptions, type SftpPluginConfig } from './config.schema.js';
import { SFTP_CAPABILITIES } from './constants.js';
import type * as LibModule from './lib.js';
import type { ConnectSettings } from './sftp-pool.js';

const pkg = packageInfo(import.meta.url);

// This entry is what the plugin loader imports: it stays free of ssh2 and
// ssh2-sftp-client. SftpFs and the connection pools live in '@ferry/fs-sftp/lib'
// (./lib.js), imported when the provider first creates an Fs.
export { SFTP_CAPABILITIES, fingerprintOf } from './constants.js';
export { sftpOptionsSchema, sftpPluginConfigSchema, type SftpOptions, type SftpPluginConfig } from './config.schema.js';
export { mapSftpError } from './sftp-errors.js';
export type { SftpFs } from './sftp.fs.js';

/** The SDK half of the plugin, imported once on first use (a failed import is retried next time). */
const lib = lazyModule<typeof LibModule>(() => import('./lib.js'));

/**
 * Closes every pooled connection (plugin teardown, tests). Pools exist only once
 * the SDK half was imported: when it never was, this loads nothing.
 */
export function closeAllPools(): void {
  lib.loaded()?.closeAllPools();
}

/** Provider number 5 (FilesystemConfig.provider), never reused. */
export const SFTP_PROVIDER = 5;

/** Splits 'host:port' ('[v6]:port' too). */
function splitEndpoint(endpoint: string): { host: string; port: number } {
  const i = endpoint.lastIndexOf(':');
  return { host: endpoint.slice(0, i).replace(/^\[(.*)\]$/, '$1'), port: Number(endpoint.slice(i + 1)) };
}

/** Connection settings (the pool key) of an options object whose secrets are decrypted. */
export function connectSettings(o: SftpOptions): ConnectSettings {
  return {
    endpoint: o.endpoint,
    ...splitEndpoint(o.endpoint),
    username: o.username,
    password: secretText(o.password),
    privateKey: secretText(o.private_key),
    passphrase: secretText(o.key_passphrase),
    fingerprints: o.fingerprints ?? [],
  };
}

/** 'host:port' compared case-insensitively on the host (IPv6 brackets ignored). */
function endpointKey(endpoint: string): string {
  const { host, port } = splitEndpoint(endpoint.trim());
  return `${host.toLowerCase()}:${port}`;
}

/**
 * equality_check_mode: true when two configurations reach the same SFTP server, so a
 * move between their mounts is one rename on the server. Mode 0 (the default): same
 * endpoint and same username. Mode 1: the endpoint alone decides, but only when both
 * configurations ask for it (a mode 0 side keeps its username check).
 */
export function sameSftpServer(a: SftpOptions, b: SftpOptions): boolean {
  if (endpointKey(a.endpoint) !== endpointKey(b.endpoint)) return false;
  if (a.equality_check_mode === 1 && b.equality_check_mode === 1) return true;
  return a.username === b.username;
}

/** The provider definition; `config` and `logger` come from the plugin context. */
export function sftpProvider(config: Partial<SftpPluginConfig> = {}, logger: Logger = silentLogger()): FsProviderDef<SftpOptions> {
  const cfg = sftpPluginConfigSchema.validate(config).value as SftpPluginConfig;
  /** The options validated and the connection settings, once per options object. */
  const settingsOf = derivedFromOptions((options: SftpOptions) => {
    const { value: o, error } = sftpOptionsSchema.validate(options);
    if (error) throw new FsError(FsErrorCode.Invalid, `sftp: ${error.message}`);
    return { o: o as SftpOptions, connect: connectSettings(o as SftpOptions) };
  });
  return {
    provider: SFTP_PROVIDER,
    key: 'sftp',
    configKey: 'sftpconfig',
    optionsSchema: sftpOptionsSchema,
    secretFields: SECRET_FIELDS,
    placeholderFields: ['prefix'],
    capabilities: SFTP_CAPABILITIES,
    async create(options: SftpOptions) {
      const { o, connect } = settingsOf(options);
      const { SftpFs, poolFor } = await lib.load();
      const pool = poolFor(connect, cfg, logger);
      return new SftpFs(pool, {
        prefix: o.prefix ?? '',
        bufferSizeMb: o.buffer_size ?? 0,
        disableConcurrentReads: o.disable_concurrent_reads ?? false,
      });
    },
    sameResource: sameSftpServer,
    describe(options: SftpOptions) {
      return { endpoint: options.endpoint };
    },
  };
}

export default definePlugin<SftpPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: sftpPluginConfigSchema,
  register(ctx, config) {
    ctx.registerFsProvider(sftpProvider(config, ctx.logger.child({ plugin: pkg.name })));
  },
  teardown() {
    closeAllPools();
  },
});

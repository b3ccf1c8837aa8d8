import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { definePlugin, packageInfo } from '@ferry/core';
import { pluginConfigSchema, type IcapPluginConfig } from './config.schema.js';
import { IcapAgent } from './icap/client.js';
import { IcapPool } from './icap/pool.js';
import { icapAction } from './icap.action.js';

export { IcapAgent, IcapServiceError, type ScanRequest, type ScanResult, type ServiceOptions } from './icap/client.js';
export { IcapPool } from './icap/pool.js';
export { IcapConnection, IcapTimeoutError } from './icap/connection.js';
export { parseIcapUrl, type IcapEndpoint } from './icap/endpoint.js';
export { HeaderFields, IcapProtocolError, parseHead, threatNames } from './icap/wire.js';
export { FileAction, icapOptionsSchema, type IcapActionOptions, type IcapPluginConfig } from './config.schema.js';
export type { IcapScanOutput, ScanOutcome, Disposition } from './icap.action.js';

const pkg = packageInfo(import.meta.url);
/** Agents of every registration (one per app in a process that runs several). */
const agents = new Set<IcapAgent>();

/**
 * Event action 17: ICAP (RFC 3507) antivirus and DLP scanning with its own
 * ICAP/1.0 client (OPTIONS cache, preview, 204, chunked streaming, a small
 * connection pool per server).
 */
export default definePlugin<IcapPluginConfig>({
  name: pkg.name,
  version: pkg.version,
  apiVersion: 1,
  configSchema: pluginConfigSchema,
  register(ctx, config) {
    const quarantineDir = config.quarantine_dir ? path.resolve(ctx.dataDir, config.quarantine_dir) : path.join(ctx.dataDir, 'icap-quarantine');
    // adapted content waits here until it is applied: beside the quarantine, so moving it there is a rename;
    // what a stopped process left there is removed
    const spoolDir = path.join(quarantineDir, '.spool');
    rmSync(spoolDir, { recursive: true, force: true });
    mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
    const agent = new IcapAgent(new IcapPool({ maxConnections: config.max_connections, idleMs: config.idle_timeout * 1000 }), {
      userAgent: `Ferry-ICAP/${pkg.version}`,
      maxPreview: config.max_preview,
      defaultOptionsTtlMs: 3600_000,
      spoolDir,
    });
    agents.add(agent);
    ctx.registerActionType(icapAction({ host: ctx.host, agent, quarantineDir }));
  },
  teardown() {
    // closes idle connections; a pool stays usable (another app of the process may still scan)
    for (const a of agents) a.pool.closeIdle();
  },
});

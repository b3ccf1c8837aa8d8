import 'reflect-metadata';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type Hapi from '@hapi/hapi';
import type { MikroORM } from '@mikro-orm/core';
import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from './tokens.js';
import type { FerryConfig } from './config/schema.js';
import { createLogger, trackLogLevel, type Logger } from './logger.js';
import { migrate, openOrm, ormOptionsFromConfig } from './data/orm.js';
import { LocalSecretsService } from './secrets/local-secrets.js';
import { buildContainer } from './container.js';
import { ChangeFeed } from './data/change-feed.js';
import { loadPlugins } from './plugins/load.js';
import { pluginHost } from './sdk/host.js';
import type { PluginManifest } from './plugins/manifest.js';
import type { PluginRegistry } from './plugins/registry.js';
import { createHttpServer, type RouteFactory } from './http/server.js';
import { coreRoutes } from './http/routes/index.js';
import { refusalPages, staticSiteRoutes } from './http/static-site.js';
import type { StaticSiteDef } from './sdk/static-site.js';
import { AdminService } from './accounts/admin.service.js';
import { generatePassword } from './accounts/password.js';
import { SYSTEM_ACTOR } from './events/provider-events.service.js';
import type { EventBus } from './events/event-bus.js';
import type { FsHooks } from './events/fs-hooks.js';
import type { SecretsService } from './secrets/secret.js';
import { eventServicesLifecycle } from './event-manager/register.js';
import { PasswordResetService } from './auth/password-reset.service.js';
import { QuotaScanService } from './vfs/quota-scan.service.js';
import { QuotaService } from './vfs/quota.service.js';
import { UploadJournal } from './vfs/upload-journal.js';
import { UsageService } from './ops/usage.service.js';
import { MetricsService } from './ops/metrics.service.js';
import { ClusterNodes, serverUrl } from './ops/cluster-nodes.service.js';
import { boundUrl } from './http/bound-url.js';
import { serviceTls } from './http/tls.js';
import { installPluginEntities } from './data/plugin-entities.js';
import type { EventSearchRegistry } from './events/event-search.registry.js';
import type { ServiceRunner } from './plugins/services.js';

export interface AppOptions {
  config: FerryConfig;
  /** Directory relative plugin paths are resolved against. */
  baseDir?: string;
  logger?: Logger;
  /** Extra route factories (tests). */
  routes?: RouteFactory[];
}

export interface App {
  container: DependencyContainer;
  config: FerryConfig;
  logger: Logger;
  orm: MikroORM;
  /** One Hapi server per configured binding. */
  servers: Hapi.Server[];
  plugins: PluginManifest<any>[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Master key for secrets: from config, or generated once into <data_dir>/master.key (mode 0600). */
function masterKey(config: FerryConfig): string {
  if (config.kms.master_key) return config.kms.master_key;
  if (config.data_provider.driver === 'sqlite' && config.data_provider.name === ':memory:') {
    return crypto.randomBytes(32).toString('base64');
  }
  const file = path.join(config.common.data_dir, 'master.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.common.data_dir, { recursive: true });
  const key = crypto.randomBytes(32).toString('base64');
  writeFileSync(file, key + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}

async function ensureFirstAdmin(c: DependencyContainer, config: FerryConfig, logger: Logger): Promise<void> {
  if (!config.data_provider.create_default_admin) return;
  const admins = c.resolve(AdminService);
  if ((await admins.count()) > 0) return;
  const username = config.defaults.admin_username || 'admin';
  const given = config.defaults.admin_password;
  const password = given || generatePassword();
  await admins.create(
    {
      username,
      password,
      email: '',
      status: 1,
      description: 'first admin',
      additional_info: '',
      permissions: ['*'],
      filters: {
        allow_list: [],
        allow_api_key_auth: false,
        require_two_factor: false,
        require_password_change: false,
        disable_password_auth: false,
        preferences: {},
      },
      groups: [],
      role: '',
    },
    null,
    SYSTEM_ACTOR,
  );
  if (given) logger.info({ username }, 'created the first admin from SERVICE_DEFAULT_ADMIN_USERNAME/PASSWORD');
  else logger.warn({ username, generated_password: password }, 'created the first admin with a generated password: change it now, it is shown only this once');
}

/**
 * Brings the quota counters of the users and folders that uploads
 * interrupted by a crash were writing to back in line with storage (a scan
 * of each, before the server takes requests; see UploadJournal). A target
 * that cannot be scanned (gone since, a template folder) is logged.
 */
async function recoverInterruptedUploads(container: DependencyContainer, logger: Logger): Promise<void> {
  const scans = container.resolve(QuotaScanService);
  const found = await container.resolve(UploadJournal).recover(async ({ users, folders }) => {
    for (const username of users) await scans.scanUser(username).catch((err: unknown) => logger.warn({ err, username }, 'cannot rescan the quota of a user'));
    for (const folder of folders) await scans.scanFolder(folder).catch((err: unknown) => logger.warn({ err, folder }, 'cannot rescan the quota of a folder'));
  });
  if (found.users.length || found.folders.length) logger.info(found, 'quota counters touched by uploads interrupted by a crash rescanned');
}

/**
 * Boot order: config → logger → ORM + migrations → container → plugins → first admin → crash recovery
 * → (start()) service plugins → HTTP servers.
 */
export async function createApp(o: AppOptions): Promise<App> {
  const config = o.config;
  const logger = o.logger ?? createLogger({ level: config.log.level, file: config.log.file });
  // the log level can change at run time (PUT /api/v2/logs/level): follow the children created from here on
  trackLogLevel(logger);
  mkdirSync(config.common.data_dir, { recursive: true });
  mkdirSync(config.common.temp_dir, { recursive: true });
  const orm = await openOrm({ ...ormOptionsFromConfig(config), logger });
  let feed: ChangeFeed | undefined;
  try {
    const applied = await migrate(orm);
    if (applied.length) logger.info({ migrations: applied }, 'database migrated');
    const instanceId = config.common.instance_id || `${os.hostname()}-${process.pid}`;
    const secrets = new LocalSecretsService(masterKey(config));
    const container = buildContainer({ config, logger, orm, secrets, instanceId });
    // TLS certificates of service plugins' bindings (PluginHost.services.tls), handled as the HTTPS bindings'
    container.registerInstance(
      TOKENS.ServiceTls,
      serviceTls({ bus: container.resolve<EventBus>(TOKENS.EventBus), logger, instanceId, baseDir: o.baseDir ?? process.cwd() }),
    );
    const registry = container.resolve<PluginRegistry>(TOKENS.Plugins);
    const services = container.resolve<ServiceRunner>(TOKENS.Services);
    const graceMs = config.common.shutdown_grace_period * 1000;
    const stopHooks: { plugin: string; fn: () => void | Promise<void> }[] = [];
    const staticSites: { plugin: string; def: StaticSiteDef }[] = [];
    const plugins = await loadPlugins({
      entries: config.plugins,
      staticSites,
      baseDir: o.baseDir ?? process.cwd(),
      registry,
      services,
      logger,
      context: (name, pluginConfig) => ({
        name,
        logger: logger.child({ plugin: name }),
        config: pluginConfig,
        dataDir: config.common.data_dir,
        events: container.resolve<EventBus>(TOKENS.EventBus),
        fsHooks: container.resolve<FsHooks>(TOKENS.FsHooks),
        secrets: container.resolve<SecretsService>(TOKENS.Secrets),
        host: pluginHost(<T>(token: symbol) => container.resolve<T>(token)),
        core: { get: <T>(token: symbol) => container.resolve<T>(token) },
        registerEntities: (def) => installPluginEntities(orm, config.data_provider.driver, name, def, logger),
        registerEventSearch: (search) => container.resolve<EventSearchRegistry>(TOKENS.EventSearch).register(name, search),
        onStop: (fn) => stopHooks.push({ plugin: name, fn }),
      }),
    });
    // the other nodes' changes to accounts (PostgreSQL LISTEN): heard before the first request is served
    feed = container.resolve(ChangeFeed);
    await feed.start();
    await ensureFirstAdmin(container, config, logger);
    await recoverInterruptedUploads(container, logger);
    eventServicesLifecycle.attach(container);
    // daily transfer counters of GET /api/v2/saas/usage
    container.resolve(UsageService).start();
    // Prometheus metrics (GET /metrics) on the bindings that enable them
    if (config.httpd.bindings.some((b) => b.enable_metrics)) container.resolve(MetricsService).start();
    const routes = [...coreRoutes, ...staticSites.map((s) => staticSiteRoutes(s.def)), ...(o.routes ?? [])];
    // what a browser of a banned host gets for a page of a plugin's site (instead of the JSON 403)
    const refusalPage = refusalPages(staticSites.map((s) => s.def));
    const servers: Hapi.Server[] = [];
    for (const b of config.httpd.bindings) {
      servers.push(await createHttpServer(container, b, routes, { baseDir: o.baseDir, refusalPage }));
    }
    let stopped = false;
    return {
      container,
      config,
      logger,
      orm,
      servers,
      plugins,
      async start() {
        // service plugins (protocol front-ends) run after the migrations, the first admin and the crash
        // recovery (above, in createApp), and before the node reports ready (its HTTP servers listen)
        await services.startAll(logger, graceMs);
        for (const s of servers) await s.start();
        // the address bound (127.0.0.1), not info.uri's host name; `uri` first: tools read `"uri":"...","msg":"listening"`
        servers.forEach((s, i) =>
          logger.info({ uri: boundUrl(s.info), serves: config.httpd.bindings[i]?.enable_rest_api === false ? 'health checks' : 'REST API' }, 'listening'),
        );
        // the other nodes of a cluster find this one here (connections held in memory: docs/cluster.md)
        const api = servers.find((_, i) => config.httpd.bindings[i]?.enable_rest_api !== false) ?? servers[0];
        if (api) await container.resolve(ClusterNodes).start(serverUrl(api.info));
        eventServicesLifecycle.startScheduler(container);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await container.resolve(ClusterNodes).stop();
        // HTTP requests and the services' connections drain together, within the grace period
        await Promise.all([services.stopAll(logger, graceMs), ...servers.map((s) => s.stop({ timeout: graceMs }))]);
        // forgot-password codes being mailed finish first (at most a few seconds), the mailer closes with the event services
        await container.resolve(PasswordResetService).stop();
        await eventServicesLifecycle.detach(container).catch((err) => logger.error({ err }, 'event manager stop failed'));
        await container.resolve(UsageService).stop();
        // the downloads' lingering counter changes
        await container
          .resolve(QuotaService)
          .flushCounters()
          .catch((err) => logger.warn({ err }, 'cannot store transfer usage'));
        // the counters are stored: the journal's entries kept for the next uploads go
        await container
          .resolve(UploadJournal)
          .flushLingering()
          .catch((err) => logger.warn({ err }, 'cannot remove the upload journal'));
        if (config.httpd.bindings.some((b) => b.enable_metrics)) container.resolve(MetricsService).stop();
        // running quota scans use plugin filesystems and the database: stop them first
        await container
          .resolve(QuotaScanService)
          .stop()
          .catch((err) => logger.error({ err }, 'quota scans stop failed'));
        for (const h of [...stopHooks].reverse()) {
          try {
            await h.fn();
          } catch (err) {
            logger.error({ err, plugin: h.plugin }, 'plugin stop hook failed');
          }
        }
        for (const p of [...plugins].reverse()) {
          try {
            await p.teardown?.();
          } catch (err) {
            logger.error({ err, plugin: p.name }, 'plugin teardown failed');
          }
        }
        await container.resolve(ChangeFeed).stop();
        await orm.close(true);
      },
    };
  } catch (err) {
    await feed?.stop();
    await orm.close(true);
    throw err;
  }
}

import type { Logger } from '../logger.js';
import type { ServiceDef, ServiceStatus } from '../sdk/service.js';
import { PluginLoadError } from './registry.js';

/** The API's own service sections of GET /api/v2/status, as shown while no service fills them. */
export function inactiveApiSections(): { ssh: ServiceStatus; ftp: ServiceStatus; webdav: ServiceStatus } {
  return {
    ssh: { is_active: false, bindings: null, host_keys: null },
    ftp: { is_active: false, bindings: null },
    webdav: { is_active: false, bindings: null },
  };
}

/** Sections of /status the core fills itself: no service may take them. */
const CORE_SECTIONS = new Set(['data_provider', 'defender', 'mfa', 'allow_list', 'rate_limiters']);

type ServiceState = 'registered' | 'running' | 'failed' | 'stopped';

interface RegisteredService {
  plugin: string;
  def: ServiceDef;
  state: ServiceState;
  /** Why the start failed. */
  error?: string;
}

/** What `stop` waits for past the grace period before it gives up on a service (it was told to close at once). */
const STOP_OVERRUN_MS = 1000;

/**
 * The services the plugins registered (PluginContext.registerService): started
 * by the app after the crash recovery and before the HTTP servers, stopped
 * with the HTTP servers, and reporting their sections of GET /api/v2/status.
 */
export class ServiceRunner {
  private readonly services: RegisteredService[] = [];

  /** Adds a plugin's service; a second service of a /status section or name is refused. */
  add(plugin: string, def: ServiceDef): void {
    if (CORE_SECTIONS.has(def.statusKey)) {
      throw new PluginLoadError(plugin, `service ${def.name}: the /status section "${def.statusKey}" belongs to the core`);
    }
    const sameKey = this.services.find((s) => s.def.statusKey === def.statusKey);
    if (sameKey) {
      throw new PluginLoadError(
        plugin,
        `service ${def.name}: the /status section "${def.statusKey}" is already filled by service ${sameKey.def.name} of plugin ${sameKey.plugin}`,
      );
    }
    if (this.services.some((s) => s.plugin === plugin && s.def.name === def.name)) {
      throw new PluginLoadError(plugin, `service ${def.name} is registered twice`);
    }
    this.services.push({ plugin, def, state: 'registered' });
  }

  /** The registered services: plugin, name and /status section. */
  list(): { plugin: string; name: string; statusKey: string; state: ServiceState }[] {
    return this.services.map((s) => ({ plugin: s.plugin, name: s.def.name, statusKey: s.def.statusKey, state: s.state }));
  }

  /**
   * Starts every service in registration order. When one fails, the ones
   * already started are stopped (within `graceMs`) and the start rejects
   * with a PluginLoadError naming the plugin and the service.
   */
  async startAll(logger: Logger, graceMs: number): Promise<void> {
    for (const s of this.services) {
      if (s.state === 'running') continue;
      try {
        await s.def.start();
      } catch (err) {
        s.state = 'failed';
        s.error = (err as Error)?.message ?? String(err);
        await this.stopAll(logger, graceMs);
        throw new PluginLoadError(s.plugin, `service ${s.def.name} failed to start: ${s.error}`, { cause: err });
      }
      s.state = 'running';
      s.error = undefined;
      logger.info({ plugin: s.plugin, service: s.def.name }, 'service started');
    }
  }

  /**
   * Stops the running services together: each gets the same deadline (now +
   * `graceMs`) and a signal aborted at it; one that has not returned shortly
   * after is logged and left behind. A failing stop is logged.
   */
  async stopAll(logger: Logger, graceMs: number): Promise<void> {
    const running = this.services.filter((s) => s.state === 'running');
    if (!running.length) return;
    const deadline = Date.now() + graceMs;
    const controller = new AbortController();
    const graceTimer = setTimeout(() => controller.abort(new Error('the shutdown grace period is over')), graceMs);
    let overrunTimer: NodeJS.Timeout | undefined;
    const overrun = new Promise<'overrun'>((resolve) => {
      overrunTimer = setTimeout(() => resolve('overrun'), graceMs + STOP_OVERRUN_MS);
    });
    try {
      await Promise.all(
        [...running].reverse().map(async (s) => {
          s.state = 'stopped';
          const stopped = Promise.resolve()
            .then(() => s.def.stop({ signal: controller.signal, deadline }))
            .then(
              () => 'stopped' as const,
              (err: unknown) => {
                logger.error({ err, plugin: s.plugin, service: s.def.name }, 'service stop failed');
                return 'failed' as const;
              },
            );
          const r = await Promise.race([stopped, overrun]);
          if (r === 'overrun')
            logger.error({ plugin: s.plugin, service: s.def.name, grace_ms: graceMs }, 'service did not stop within the shutdown grace period');
          else if (r === 'stopped') logger.info({ plugin: s.plugin, service: s.def.name }, 'service stopped');
        }),
      );
    } finally {
      clearTimeout(graceTimer);
      clearTimeout(overrunTimer);
    }
  }

  /**
   * The /status sections the services fill: the API's own (ssh, ftp, webdav;
   * inactive with no bindings when no service fills them) and the services'
   * own. A service not running is inactive (with its start error); one whose
   * status() throws is inactive with that error.
   */
  sections(): Record<string, ServiceStatus> {
    const out: Record<string, ServiceStatus> = inactiveApiSections();
    for (const s of this.services) {
      const base: ServiceStatus = out[s.def.statusKey] ?? { is_active: false, bindings: null };
      if (s.state !== 'running') {
        out[s.def.statusKey] = { ...base, is_active: false, bindings: null, ...(s.error ? { error: s.error } : {}) };
        continue;
      }
      try {
        out[s.def.statusKey] = { ...base, ...s.def.status() };
      } catch (err) {
        out[s.def.statusKey] = { ...base, is_active: false, bindings: null, error: (err as Error)?.message ?? String(err) };
      }
    }
    return out;
  }
}

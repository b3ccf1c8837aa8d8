import { inject, scoped, Lifecycle } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TOKENS } from '../tokens.js';
import type { EventBus } from '../events/event-bus.js';
import type { PluginRegistry } from '../plugins/registry.js';
import { ConnectionManager } from '../vfs/connection-manager.js';
import type { EventManager } from '../event-manager/event-manager.js';

/** The pool of knex (tarn) as far as the metrics read it. */
interface PoolView {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  max: number;
}

/**
 * Prometheus metrics of one app (GET /metrics, docs/operations.md). Every app
 * has its own registry (never prom-client's global one), so several apps can
 * live in one process. Counters follow the event bus (transfers, defender
 * bans), the event manager's action executions and the HTTP layer
 * (observeHttp); gauges are read when scraped (connections, transfers, the
 * database pool); Node's process metrics come from prom-client's default
 * collectors, bound to this registry.
 */
@scoped(Lifecycle.ContainerScoped)
export class MetricsService {
  readonly registry = new Registry();
  private started = false;
  private readonly stops: (() => void)[] = [];

  private readonly httpRequests = new Counter({
    name: 'ferry_http_requests_total',
    help: 'HTTP requests answered, by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'ferry_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly transfers = new Counter({
    name: 'ferry_transfers_total',
    help: 'File transfers finished, by direction, protocol, storage provider and outcome',
    labelNames: ['direction', 'protocol', 'provider', 'status'] as const,
    registers: [this.registry],
  });
  private readonly transferBytes = new Counter({
    name: 'ferry_transfer_bytes_total',
    help: 'Bytes of file transfers (finished or interrupted), by direction, protocol and storage provider',
    labelNames: ['direction', 'protocol', 'provider'] as const,
    registers: [this.registry],
  });
  private readonly actionExecutions = new Counter({
    name: 'ferry_event_action_executions_total',
    help: 'Event rule action executions, by trigger, action type and result',
    labelNames: ['trigger', 'type', 'result'] as const,
    registers: [this.registry],
  });
  private readonly actionFailures = new Counter({
    name: 'ferry_event_action_failures_total',
    help: 'Event rule action executions that failed, by action type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  private readonly defenderBans = new Counter({
    name: 'ferry_defender_bans_total',
    help: 'Hosts banned by the defender (by this node)',
    labelNames: ['protocol'] as const,
    registers: [this.registry],
  });

  constructor(
    @inject(TOKENS.EventBus) private readonly bus: EventBus,
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Plugins) private readonly plugins: PluginRegistry,
    @inject(ConnectionManager) private readonly connections: ConnectionManager,
    @inject(TOKENS.EventManager) private readonly events: EventManager,
  ) {
    const conns = this.connections;
    new Gauge({
      name: 'ferry_active_connections',
      help: 'Connections (file sessions) open on this node',
      registers: [this.registry],
      collect() {
        this.set(conns.list().length);
      },
    });
    new Gauge({
      name: 'ferry_active_transfers',
      help: 'Transfers in progress on this node, by direction',
      labelNames: ['direction'] as const,
      registers: [this.registry],
      collect() {
        const n = { upload: 0, download: 0 };
        for (const c of conns.list()) for (const t of c.transfers.values()) n[t.operation_type] += 1;
        this.set({ direction: 'upload' }, n.upload);
        this.set({ direction: 'download' }, n.download);
      },
    });
    const pool = () => this.pool();
    new Gauge({
      name: 'ferry_db_pool_connections',
      help: 'Database connections of the pool, by state (used, free; pending: acquisitions waiting, creations in progress)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = pool();
        if (!p) return;
        this.set({ state: 'used' }, p.numUsed());
        this.set({ state: 'free' }, p.numFree());
        this.set({ state: 'pending_acquire' }, p.numPendingAcquires());
        this.set({ state: 'pending_create' }, p.numPendingCreates());
      },
    });
    new Gauge({
      name: 'ferry_db_pool_max_connections',
      help: 'Largest number of connections the database pool opens',
      registers: [this.registry],
      collect() {
        const p = pool();
        if (p) this.set(p.max);
      },
    });
  }

  private pool(): PoolView | undefined {
    const conn = this.orm.em.getConnection() as unknown as { getKnex?: () => { client?: { pool?: PoolView } } };
    return conn.getKnex?.().client?.pool ?? undefined;
  }

  /** Subscribes to the bus and the event manager, starts Node's collectors. Idempotent. */
  start(): void {
    if (this.started) return;
    this.started = true;
    collectDefaultMetrics({ register: this.registry });
    this.stops.push(
      this.bus.on('fs', (ev) => {
        if (ev.action !== 'upload' && ev.action !== 'download') return;
        const provider = this.plugins.fsProvider(ev.fs_provider)?.key ?? String(ev.fs_provider);
        const labels = { direction: ev.action, protocol: ev.protocol, provider };
        this.transfers.inc({ ...labels, status: ev.status === 1 ? 'ok' : ev.status === 3 ? 'quota_exceeded' : 'error' });
        this.transferBytes.inc(labels, Math.max(0, Number(ev.file_size) || 0));
      }),
      this.bus.on('ip-blocked', (ev) => this.defenderBans.inc({ protocol: ev.protocol })),
      this.events.onExecution((e) => {
        const type = this.plugins.actionType(e.type)?.key ?? String(e.type);
        this.actionExecutions.inc({ trigger: String(e.trigger), type, result: e.ok ? 'ok' : 'failed' });
        if (!e.ok) this.actionFailures.inc({ type });
      }),
    );
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s();
  }

  /** One answered HTTP request (`route` is the route's path template, never the requested path). */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  async text(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

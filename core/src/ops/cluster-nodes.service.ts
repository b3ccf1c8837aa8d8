import os from 'node:os';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Setting } from '../data/entities/index.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';

const PREFIX = 'node:';
/** A node writes its row this often... */
const HEARTBEAT_MS = 30_000;
/** ...and counts as gone when its row is older than this. */
const ALIVE_MS = 3 * HEARTBEAT_MS;
/** At most this long at shutdown to remove this node's row. */
const STOP_WAIT_MS = 2000;
/** Rows of nodes gone this long are deleted. */
const FORGET_MS = 24 * 3600_000;

export interface ClusterNode {
  id: string;
  /** Base URL of the node's REST API, as the other nodes reach it. */
  url: string;
}

/** Where a started hapi server is reached: its bound address, or the host name when bound to every address. */
export function serverUrl(info: { protocol: string; address?: string; port: number | string; uri: string }): string {
  const a = info.address ?? '';
  if (!a || a === '0.0.0.0' || a === '::') return `${info.protocol}://${os.hostname()}:${info.port}`;
  return `${info.protocol}://${a.includes(':') ? `[${a}]` : a}:${info.port}`;
}

/**
 * The nodes sharing the database: each running node keeps a row
 * `node:<instance_id>` in `settings` with the URL of its REST API
 * (`common.node_url`, or the first binding serving the REST API) and a
 * heartbeat. Requests about state held in one node's memory (a connection)
 * are forwarded to the nodes alive (docs/cluster.md).
 */
@scoped(Lifecycle.ContainerScoped)
export class ClusterNodes {
  private timer?: NodeJS.Timeout;
  private url = '';

  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.InstanceId) readonly self: string,
    @inject(TOKENS.Config) private readonly config: FerryConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  /** Registers this node (`url`: its first REST API binding when `common.node_url` is empty) and keeps its row fresh. */
  async start(url: string): Promise<void> {
    this.url = this.config.common.node_url || url;
    await this.beat().catch((err: unknown) => this.logger.warn({ err }, 'cannot register this node in the cluster list'));
    this.timer = setInterval(() => {
      this.beat().catch((err) => this.logger.warn({ err }, 'cluster node heartbeat failed'));
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    const now = Date.now();
    const em = this.orm.em.fork();
    await em.upsert(Setting, { key: PREFIX + this.self, value: JSON.stringify({ url: this.url }), updated_at: now });
    await em.nativeDelete(Setting, { key: { $like: `${PREFIX}%` }, updated_at: { $lt: now - FORGET_MS } });
  }

  /** Removes this node's row (clean shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!this.url) return;
    // a database that does not answer must not hold the shutdown: the row then ages out
    const removed = this.orm.em
      .fork()
      .nativeDelete(Setting, { key: PREFIX + this.self })
      .catch((err: unknown) => this.logger.warn({ err }, 'cannot remove this node from the cluster list'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([removed, new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** The other nodes alive (heartbeat within the last 90 seconds). */
  async others(): Promise<ClusterNode[]> {
    const rows = await this.orm.em.fork().find(Setting, { key: { $like: `${PREFIX}%` }, updated_at: { $gte: Date.now() - ALIVE_MS } });
    const out: ClusterNode[] = [];
    for (const r of rows) {
      const id = r.key.slice(PREFIX.length);
      if (id === this.self) continue;
      try {
        const url = (JSON.parse(r.value) as { url?: unknown }).url;
        if (typeof url === 'string' && url) out.push({ id, url });
      } catch {
        /* a malformed row is skipped */
      }
    }
    return out;
  }
}

import { randomUUID } from 'node:crypto';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import type { Client as PgClient, ClientConfig, Notification } from 'pg';
import { TOKENS } from '../tokens.js';
import type { FerryConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';

/** The PostgreSQL channel the nodes of one database tell each other of changes on. */
export const CHANGE_CHANNEL = 'ferry_changes';
/** application_name of each node's listening connection, followed by its instance id (pg_stat_activity shows it). */
export const CHANGE_LISTENER_APP = 'ferry-changes';

/**
 * A change of stored objects that in-memory copies must drop: `type` is a
 * provider object type ('user', 'group', 'folder', 'role', 'admin',
 * 'api_key'...), 'jti' (a token revoked) or 'all' (everything: the feed lost
 * or regained its connection).
 */
export interface Change {
  type: string;
  name: string;
}

export type ChangeListener = (c: Change) => void;

/**
 * First delay before listening again after the connection was lost (doubled on each failure). The
 * environment's FERRY_CHANGES_RETRY_MS sets another (test/cluster keeps a node deaf for a while with it).
 */
const RECONNECT_MIN_MS = Number(process.env.FERRY_CHANGES_RETRY_MS) > 0 ? Number(process.env.FERRY_CHANGES_RETRY_MS) : 100;
const RECONNECT_MAX_MS = Math.max(5000, RECONNECT_MIN_MS);
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes and more: a longer change becomes 'all'. */
const MAX_PAYLOAD = 7900;

interface PgModule {
  Client: new (config: ClientConfig) => PgClient;
}

/**
 * How the nodes sharing a database tell each other that stored objects
 * changed, so copies held in memory (accounts/account-cache.ts) drop them
 * at once instead of waiting for an expiry (docs/cluster.md).
 *
 * A change published here reaches this process's listeners synchronously,
 * before publish() returns. On PostgreSQL it is also sent as a NOTIFY on
 * CHANGE_CHANNEL, which every node LISTENs to on a dedicated connection
 * (application_name CHANGE_LISTENER_APP). While that connection is down
 * the feed is not `trusted`: caches must not answer from memory; when it
 * is back, listeners get an 'all' change (what was missed meanwhile is not
 * known) before the feed is trusted again. On SQLite (one process) the
 * feed is always trusted.
 */
@scoped(Lifecycle.ContainerScoped)
export class ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();
  /** Notifications sent and not yet taken by the database. */
  private readonly sending = new Set<Promise<unknown>>();
  private readonly postgres: boolean;
  private client: PgClient | undefined;
  private connected = false;
  private stopped = false;
  private started = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Names this process in its notifications (instance ids are configured, so two nodes could share one by mistake). */
  private readonly self = randomUUID();

  constructor(
    @inject(TOKENS.Config) config: FerryConfig,
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.InstanceId) private readonly instanceId: string,
  ) {
    this.postgres = config.data_provider.driver === 'postgresql';
  }

  /** Whether every change made on any node reaches this one (SQLite: always; PostgreSQL: while listening). */
  get trusted(): boolean {
    return !this.postgres || this.connected;
  }

  subscribe(fn: ChangeListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Tells this process's listeners (at once) and, on PostgreSQL, the other nodes. */
  publish(c: Change): void {
    this.deliver(c);
    if (!this.postgres) return;
    let payload = JSON.stringify({ i: this.self, t: c.type, n: c.name });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) payload = JSON.stringify({ i: this.self, t: 'all', n: '' });
    const conn = this.orm.em.getConnection() as unknown as { execute(sql: string, params: unknown[]): Promise<unknown> };
    const sent = conn
      .execute('select pg_notify(?, ?)', [CHANGE_CHANNEL, payload])
      .catch((err: unknown) => {
        // the other nodes may now hold a stale copy: said loudly (a database down refuses their requests anyway)
        this.logger.error({ err, change: c }, 'could not tell the other nodes of a change');
      })
      .finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }

  /**
   * Resolves once the notifications published so far are taken by the
   * database (sent or failed), or null when none is in flight: the answer
   * to a request that changed something waits for it, so the other nodes
   * are told before the client hears that the change is done.
   */
  settled(): Promise<unknown> | null {
    return this.sending.size ? Promise.all([...this.sending]) : null;
  }

  private deliver(c: Change): void {
    for (const fn of this.listeners) {
      try {
        fn(c);
      } catch (err) {
        this.logger.error({ err }, 'change listener failed');
      }
    }
  }

  /** Starts listening (PostgreSQL); a failure is retried in the background, the feed untrusted meanwhile. */
  async start(): Promise<void> {
    if (!this.postgres || this.started) return;
    this.started = true;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = undefined;
    this.connected = false;
    await c?.end().catch(() => undefined);
  }

  /** The pg module and connection settings of the ORM's own pool (same host, credentials, TLS). */
  private pgSettings(): { pg: PgModule; settings: ClientConfig } {
    const knex = (this.orm.em.getConnection() as unknown as { getKnex(): { client: { driver: PgModule; connectionSettings: ClientConfig } } }).getKnex();
    return { pg: knex.client.driver, settings: knex.client.connectionSettings };
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let client: PgClient | undefined;
    try {
      const { pg, settings } = this.pgSettings();
      client = new pg.Client({ ...settings, application_name: `${CHANGE_LISTENER_APP} ${this.instanceId}`.slice(0, 63), keepAlive: true });
      client.on('error', (err) => this.lost(client!, err));
      client.on('end', () => this.lost(client!, new Error('connection ended')));
      client.on('notification', (n) => this.received(n));
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      // what changed while nobody listened is not known: every copy goes, then copies may be kept again
      this.deliver({ type: 'all', name: '' });
      this.connected = true;
      this.retryMs = RECONNECT_MIN_MS;
      this.logger.info({ component: 'changes' }, 'listening to the changes of the other nodes');
    } catch (err) {
      client?.removeAllListeners('end');
      await client?.end().catch(() => undefined);
      this.logger.warn({ err, component: 'changes' }, 'cannot listen to the changes of the other nodes: accounts are read from the database until then');
      this.retry();
    }
  }

  private lost(client: PgClient, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.connected = false;
    this.deliver({ type: 'all', name: '' });
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn(
      { err, component: 'changes' },
      'lost the connection that hears the changes of the other nodes: accounts are read from the database until it is back',
    );
    this.retry();
  }

  private retry(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(RECONNECT_MAX_MS, this.retryMs * 2);
  }

  private received(n: Notification): void {
    if (n.channel !== CHANGE_CHANNEL) return;
    let msg: { i?: unknown; t?: unknown; n?: unknown };
    try {
      msg = JSON.parse(n.payload ?? '') as typeof msg;
    } catch {
      msg = { t: 'all', n: '' };
    }
    // this node's own changes were delivered when published
    if (msg.i === this.self) return;
    this.deliver({ type: typeof msg.t === 'string' ? msg.t : 'all', name: typeof msg.n === 'string' ? msg.n : '' });
  }
}

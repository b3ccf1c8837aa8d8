// first: ssh2 as core loads it, before ssh2-sftp-client requires it
import './ssh2-first.js';
import { createHash } from 'node:crypto';
import type net from 'node:net';
import SftpClient from 'ssh2-sftp-client';
import type { Client, ConnectConfig, SFTPWrapper } from 'ssh2';
import { FsError, FsErrorCode, pooledSshPackets, type Logger } from '@ferry/core';
import { connectError, isConnectionError } from './sftp-errors.js';
import type { SftpPluginConfig } from './config.schema.js';
import { fingerprintOf } from './constants.js';

/** What a pool needs to open connections; the pool key covers every field. */
export interface ConnectSettings {
  endpoint: string;
  host: string;
  port: number;
  username: string;
  password: string;
  privateKey: string;
  passphrase: string;
  fingerprints: string[];
}

class SftpConnection {
  readonly client: SftpClient;
  sftp: SFTPWrapper | undefined;
  leases = 0;
  dead = false;
  idleTimer: NodeJS.Timeout | undefined;
  /** Fingerprint of a host key that matched none of the configured ones. */
  rejectedKey: string | undefined;
  readonly ready: Promise<void>;

  constructor(
    readonly id: number,
    private readonly pool: SftpPool,
    settings: ConnectSettings,
    timeoutSec: number,
  ) {
    const note = (what: string) => (err?: unknown) => pool.lost(this, what, err as Error | undefined);
    // Own callbacks: ssh2-sftp-client's defaults print to the console.
    this.client = new SftpClient(`ferry-${id}`, { error: note('error'), end: note('end'), close: note('close') });
    this.raw.on('close', () => pool.lost(this, 'close'));
    const accepted = new Set(settings.fingerprints.map((f) => f.replace(/=+$/, '')));
    const config: ConnectConfig = {
      host: settings.host,
      port: settings.port,
      username: settings.username,
      readyTimeout: timeoutSec * 1000,
      keepaliveInterval: 15_000,
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer) => {
        if (accepted.size === 0) return true;
        const fp = fingerprintOf(key);
        if (accepted.has(fp)) return true;
        this.rejectedKey = fp;
        return false;
      },
    };
    if (settings.password) config.password = settings.password;
    if (settings.privateKey) config.privateKey = settings.privateKey;
    if (settings.passphrase) config.passphrase = settings.passphrase;
    this.ready = this.client.connect(config).then(
      (sftp) => {
        this.sftp = sftp;
        // large packets (an upload's data) built in reused buffers, not a fresh one each (core's SDK)
        const sock = (this.raw as unknown as { _sock?: net.Socket })._sock;
        if (sock) pooledSshPackets(this.raw, sock);
        sftp.on('close', () => pool.lost(this, 'sftp channel closed'));
        sftp.on('error', (err: Error) => pool.lost(this, 'sftp channel error', err));
      },
      (err: unknown) => {
        this.dead = true;
        if (this.rejectedKey) {
          throw new FsError(
            FsErrorCode.Permission,
            `sftp: host key of ${settings.endpoint} (${this.rejectedKey}) matches none of the configured fingerprints`,
            { cause: err },
          );
        }
        throw connectError(err, settings.endpoint, settings.username);
      },
    );
    this.ready.catch(() => undefined);
  }

  /** The ssh2 Client under ssh2-sftp-client (not in its type definitions). */
  get raw(): Client {
    return (this.client as unknown as { client: Client }).client;
  }

  /** Usable for a new request right now. */
  get open(): boolean {
    const state = (this.sftp as unknown as { outgoing?: { state?: string } } | undefined)?.outgoing?.state;
    return !this.dead && this.sftp !== undefined && (state === undefined || state === 'open');
  }

  close(): void {
    this.dead = true;
    clearTimeout(this.idleTimer);
    this.client.end().catch(() => undefined);
    setTimeout(() => this.raw.destroy(), 2000).unref();
  }
}

/** A connection borrowed from a pool; release() exactly once when done. */
export interface SftpLease {
  readonly sftp: SFTPWrapper;
  /** Connection number, for logs and tests. */
  readonly connectionId: number;
  release(): void;
}

/**
 * Connections to one server for one set of credentials, shared by every Fs
 * built with them. At most `max_connections` are open; a new one is opened
 * only when every open one is busy, otherwise requests share the least busy
 * connection (SFTP pipelines requests). Connections the remote dropped leave
 * the pool at once; idle ones close after `idle_timeout`.
 */
export class SftpPool {
  private conns: SftpConnection[] = [];
  private nextId = 1;
  /** Fs instances using this pool. */
  refs = 0;
  /** Remote directories known to exist (Fs roots created on first use). */
  readonly knownDirs = new Set<string>();
  /** Login directory of the pool's user (realpath of '.'), once asked. */
  loginDir: Promise<string> | undefined;

  constructor(
    readonly key: string,
    private readonly settings: ConnectSettings,
    private readonly config: SftpPluginConfig,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.conns.length;
  }

  async acquire(signal?: AbortSignal): Promise<SftpLease> {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw FsError.aborted();
      const c = this.pick();
      c.leases++;
      clearTimeout(c.idleTimer);
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        c.leases--;
        if (c.leases === 0 && !c.dead) {
          c.idleTimer = setTimeout(() => this.retire(c, 'idle'), this.config.idle_timeout * 1000);
          c.idleTimer.unref();
        }
      };
      try {
        await abortable(c.ready, signal);
      } catch (err) {
        release();
        if (c.dead) this.retire(c, 'connect failed');
        throw err;
      }
      if (c.open) return { sftp: c.sftp as SFTPWrapper, connectionId: c.id, release };
      // Dropped between its last use and now: take (or open) another one.
      release();
      this.lost(c, 'found closed');
      if (attempt > 0) throw new FsError(FsErrorCode.Unavailable, `sftp: connection to ${this.settings.endpoint} closed`);
    }
  }

  /** The least busy connection, or a new one when all are busy and the pool is not full. */
  private pick(): SftpConnection {
    this.conns = this.conns.filter((c) => !c.dead);
    let conn = this.conns.reduce<SftpConnection | undefined>((a, c) => (a && a.leases <= c.leases ? a : c), undefined);
    if (!conn || (conn.leases > 0 && this.conns.length < this.config.max_connections)) {
      conn = new SftpConnection(this.nextId++, this, this.settings, this.config.connect_timeout);
      this.conns.push(conn);
      this.log.debug({ connection: conn.id, endpoint: this.settings.endpoint }, 'sftp: connecting');
    }
    return conn;
  }

  /**
   * Runs one operation on a pooled connection. When the connection turns out
   * to be dead (dropped by the remote, reset), an idempotent operation is
   * retried once on a fresh connection.
   */
  async run<T>(fn: (sftp: SFTPWrapper) => Promise<T>, o: { signal?: AbortSignal; retry?: boolean } = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const lease = await this.acquire(o.signal);
      try {
        return await fn(lease.sftp);
      } catch (err) {
        const conn = this.conns.find((c) => c.id === lease.connectionId);
        const broken = !conn || !conn.open || isConnectionError(err);
        if (broken && conn) this.lost(conn, 'request failed', err as Error);
        if (broken && attempt === 0 && o.retry !== false && !o.signal?.aborted) continue;
        throw err;
      } finally {
        lease.release();
      }
    }
  }

  /** Drops a connection the remote closed or that failed. */
  lost(conn: SftpConnection, why: string, err?: Error): void {
    if (!this.conns.includes(conn)) return;
    this.log.debug({ connection: conn.id, why, err: err?.message }, 'sftp: connection lost');
    this.retire(conn, why);
  }

  private retire(conn: SftpConnection, why: string): void {
    this.conns = this.conns.filter((c) => c !== conn);
    if (this.refs === 0 && this.conns.length === 0 && pools.get(this.key) === this) pools.delete(this.key);
    if (!conn.dead) this.log.debug({ connection: conn.id, why }, 'sftp: closing connection');
    conn.close();
  }

  /** Test hook: destroys every connection's socket as a network failure would. */
  dropAll(): void {
    for (const c of this.conns) c.raw.destroy();
  }

  closeAll(): void {
    for (const c of this.conns) c.close();
    this.conns = [];
  }
}

function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(FsError.aborted());
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const pools = new Map<string, SftpPool>();

/** The shared pool for these settings (one per endpoint, user, credentials and fingerprints). */
/** The pool key of each settings object (the same object comes back for the same options: derivedFromOptions). */
const poolKeys = new WeakMap<ConnectSettings, string>();

function poolKeyOf(settings: ConnectSettings): string {
  let key = poolKeys.get(settings);
  if (key === undefined) {
    key = createHash('sha256')
      .update(
        JSON.stringify([settings.endpoint, settings.username, settings.password, settings.privateKey, settings.passphrase, [...settings.fingerprints].sort()]),
      )
      .digest('hex');
    poolKeys.set(settings, key);
  }
  return key;
}

export function poolFor(settings: ConnectSettings, config: SftpPluginConfig, log: Logger): SftpPool {
  const key = poolKeyOf(settings);
  let pool = pools.get(key);
  if (!pool) {
    pool = new SftpPool(key, settings, config, log);
    pools.set(key, pool);
  }
  pool.refs++;
  return pool;
}

/** Called by Fs.close(): the pool stays while it has open connections (they close when idle). */
export function releasePool(pool: SftpPool): void {
  pool.refs = Math.max(0, pool.refs - 1);
  if (pool.refs === 0 && pool.size === 0) pools.delete(pool.key);
}

/** Closes every pooled connection (plugin teardown, tests). */
export function closeAllPools(): void {
  for (const p of pools.values()) p.closeAll();
  pools.clear();
}

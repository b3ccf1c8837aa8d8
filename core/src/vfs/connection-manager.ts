import { randomHexId } from '../util/random-id.js';
import { InvalidError, TooManyRequestsError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import type { AccountSessions } from '../accounts/account-sessions.js';
import type { Protocol } from '../sdk/protocols.js';

export interface ActiveTransfer {
  id: string;
  operation_type: 'upload' | 'download';
  path: string;
  start_time: number;
  /** Bytes moved so far. */
  size: number;
}

export interface Connection {
  connection_id: string;
  username: string;
  /** The protocol of the front-end that opened the connection. */
  protocol: Protocol;
  remote_address: string;
  client_version: string;
  connection_time: number;
  last_activity: number;
  command: string;
  role: string;
  /** Aborted when an admin closes the connection: every transfer of it stops at once. */
  controller: AbortController;
  transfers: Map<string, ActiveTransfer>;
  /** Session the connection belongs to (token id, API key id + address), when opened through acquire(). */
  session_key?: string;
  /** Requests of the session in progress. */
  refs?: number;
}

export interface TransferLimits {
  /** 0: unlimited. */
  maxTotal: number;
  /** 0: unlimited. */
  maxPerHost: number;
}

type OpenInfo = Omit<Connection, 'connection_id' | 'controller' | 'transfers' | 'connection_time' | 'last_activity' | 'session_key' | 'refs'>;

/**
 * In-memory registry of this node's connections and their transfers. A
 * connection exists while an authenticated session has a request (a file
 * operation or a transfer) in progress; closing it aborts its transfers.
 *
 * Limits (refused with 429 Too Many Requests):
 * - a user's `max_sessions`: concurrent connections (sessions) of the user;
 * - `common.max_per_host_transfers`: transfers in progress from one client address;
 * - `common.max_total_transfers`: transfers in progress on this node.
 */
@injectable()
export class ConnectionManager implements AccountSessions {
  private readonly conns = new Map<string, Connection>();
  private readonly bySession = new Map<string, Connection>();
  /**
   * Transfers in progress on the registered connections (those in `conns`),
   * in all and by client address: what the transfer limits compare with,
   * kept up to date by startTransfer, endTransfer and forget, so checking a
   * limit costs the same whatever the number of connections.
   */
  private totalTransfers = 0;
  private transferSeq = 0;
  private readonly hostTransfers = new Map<string, number>();

  constructor(@inject(TOKENS.InstanceId) readonly node: string) {}

  open(c: OpenInfo): Connection {
    const now = Date.now();
    const conn: Connection = {
      ...c,
      connection_id: randomHexId(12),
      controller: new AbortController(),
      transfers: new Map(),
      connection_time: now,
      last_activity: now,
    };
    this.conns.set(conn.connection_id, conn);
    return conn;
  }

  /**
   * The connection of a session, opened on its first request and shared by
   * the session's concurrent requests. Pair every call with release().
   * `maxSessions` (> 0) caps the user's concurrent connections.
   */
  acquire(sessionKey: string, info: OpenInfo, maxSessions = 0): Connection {
    const existing = this.bySession.get(sessionKey);
    if (existing && !existing.controller.signal.aborted) {
      existing.refs = (existing.refs ?? 0) + 1;
      existing.last_activity = Date.now();
      return existing;
    }
    if (maxSessions > 0 && this.countFor(info.username) >= maxSessions) {
      throw new TooManyRequestsError(`too many open sessions: the account allows ${maxSessions}`);
    }
    const conn = this.open(info);
    conn.session_key = sessionKey;
    conn.refs = 1;
    this.bySession.set(sessionKey, conn);
    return conn;
  }

  /** Ends one request of a session; the connection goes away with its last request. */
  release(conn: Connection): void {
    conn.refs = Math.max(0, (conn.refs ?? 1) - 1);
    conn.last_activity = Date.now();
    if (conn.refs === 0 && conn.transfers.size === 0) this.forget(conn);
  }

  private forget(conn: Connection): void {
    if (this.registered(conn)) {
      this.count(conn, -conn.transfers.size);
      this.conns.delete(conn.connection_id);
    }
    if (conn.session_key && this.bySession.get(conn.session_key) === conn) this.bySession.delete(conn.session_key);
  }

  /** Registers a transfer on a connection, enforcing the node's transfer limits. */
  startTransfer(conn: Connection, t: Omit<ActiveTransfer, 'id' | 'start_time' | 'size'>, limits: TransferLimits): ActiveTransfer {
    if (conn.controller.signal.aborted) throw new InvalidError('the connection was closed');
    const total = this.totalTransfers;
    const host = this.hostTransfers.get(conn.remote_address) ?? 0;
    if (limits.maxTotal > 0 && total >= limits.maxTotal) {
      throw new TooManyRequestsError(`too many transfers in progress on this server (maximum ${limits.maxTotal})`);
    }
    if (limits.maxPerHost > 0 && host >= limits.maxPerHost) {
      throw new TooManyRequestsError(`too many transfers in progress from ${conn.remote_address} (maximum ${limits.maxPerHost})`);
    }
    // (the id only keys the connection's map, it is never shown: a counter of this node is enough)
    const transfer: ActiveTransfer = { ...t, id: String(++this.transferSeq), start_time: Date.now(), size: 0 };
    conn.transfers.set(transfer.id, transfer);
    if (this.registered(conn)) this.count(conn, 1);
    conn.last_activity = Date.now();
    return transfer;
  }

  endTransfer(conn: Connection, transfer: ActiveTransfer): void {
    if (conn.transfers.delete(transfer.id) && this.registered(conn)) this.count(conn, -1);
    conn.last_activity = Date.now();
    if ((conn.refs ?? 0) === 0 && conn.transfers.size === 0) this.forget(conn);
  }

  /** Transfers in progress on this node, and from one client address (what the limits compare with). */
  transferCounts(remoteAddress: string): { total: number; host: number } {
    return { total: this.totalTransfers, host: this.hostTransfers.get(remoteAddress) ?? 0 };
  }

  private registered(conn: Connection): boolean {
    return this.conns.get(conn.connection_id) === conn;
  }

  /** Moves the transfer counters by `n` transfers of `conn`. */
  private count(conn: Connection, n: number): void {
    if (n === 0) return;
    this.totalTransfers += n;
    const host = (this.hostTransfers.get(conn.remote_address) ?? 0) + n;
    if (host > 0) this.hostTransfers.set(conn.remote_address, host);
    else this.hostTransfers.delete(conn.remote_address);
  }

  get(id: string): Connection | undefined {
    return this.conns.get(id);
  }

  remove(id: string): void {
    const c = this.conns.get(id);
    if (c) this.forget(c);
  }

  list(): Connection[] {
    return [...this.conns.values()];
  }

  countFor(username: string): number {
    let n = 0;
    for (const c of this.conns.values()) if (c.username === username) n++;
    return n;
  }

  /** Closes one connection, aborting its transfers. False when unknown. */
  close(id: string): boolean {
    const c = this.conns.get(id);
    if (!c) return false;
    this.forget(c);
    c.controller.abort(new Error('connection closed by an administrator'));
    return true;
  }

  /** Closes every connection of a user; returns how many were closed. */
  disconnectUser(username: string): number {
    let n = 0;
    for (const c of [...this.conns.values()]) if (c.username === username && this.close(c.connection_id)) n++;
    return n;
  }
}

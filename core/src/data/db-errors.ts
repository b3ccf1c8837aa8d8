/**
 * Recognises the errors that mean "the database cannot be reached or cannot
 * serve right now" (as opposed to a bad query or a constraint): the server is
 * down or restarting, the connection was cut, the pool timed out waiting for a
 * connection, SQLite's file is locked or unreadable. The HTTP layer answers
 * them 503 with Retry-After instead of 500, and /readyz reports them.
 */

import { DriverException } from '@mikro-orm/core';

/** Node socket errors of a connection to the database server. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01-57P03 (admin
 * or crash shutdown, cannot connect now), 53300 (too many connections).
 */
const PG_STATES = /^(08\d{3}|57P0[1-3]|53300)$/;

/** SQLite result codes (libsql reports them as `code`, e.g. SQLITE_BUSY). */
const SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|PROTOCOL)/;

/** Messages of pg, knex and MikroORM for a lost or unobtainable connection. */
const MESSAGES = [
  /Connection terminated/i,
  /Client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /Timeout acquiring a connection/i,
  /Unable to acquire a connection/i,
  // knex, for a statement of a transaction its lost connection already ended (rolled back)
  /Transaction query already complete/i,
  /Connection ended unexpectedly/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /terminating connection due to administrator command/i,
];

/** Exception classes of MikroORM and knex that mean the connection, not the query, failed. */
const NAMES = new Set(['ConnectionException', 'KnexTimeoutError']);

/** Set on errors that came out of the database connection (see withUnavailableMarking). */
const FROM_DATABASE = Symbol.for('ferry.fromDatabase');

/** Walks `err` and its `cause` chain. */
function* chain(err: unknown): Generator<{ name?: unknown; code?: unknown; message?: unknown; cause?: unknown }> {
  const seen = new Set<unknown>();
  let cur: unknown = err;
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur);
    yield cur as { cause?: unknown };
    cur = (cur as { cause?: unknown }).cause;
  }
}

/** What the error says about the connection, whatever raised it. */
function looksUnavailable(err: unknown, fromDatabase: boolean): boolean {
  for (const e of chain(err)) {
    if (typeof e.name === 'string' && NAMES.has(e.name)) return true;
    if (typeof e.code === 'string' && (PG_STATES.test(e.code) || SQLITE_CODES.test(e.code))) return true;
    // Socket errors and connection messages are the database's only when they came out of its connection.
    if (!fromDatabase) continue;
    if (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  }
  return false;
}

/** True when `err` (or an error in its `cause` chain) says the database is unavailable. */
export function isDatabaseUnavailable(err: unknown): boolean {
  // several failures at once (e.g. a create whose answer and whose undo both failed): any outage among them
  if (err instanceof AggregateError && err.errors.some((e) => isDatabaseUnavailable(e))) return true;
  // MikroORM wraps what the driver throws in a DriverException (code and message copied).
  const fromDatabase = [...chain(err)].some((e) => e instanceof DriverException || (e as Record<symbol, unknown>)[FROM_DATABASE] === true);
  return looksUnavailable(err, fromDatabase);
}

/** Marks an error as raised by the database connection (kept on the object, not enumerable). */
function markFromDatabase(err: unknown): void {
  if (err && typeof err === 'object' && Object.isExtensible(err)) {
    Object.defineProperty(err, FROM_DATABASE, { value: true, enumerable: false, configurable: true });
  }
}

/** Errors of a connection lost while a query ran (as opposed to one that could not be obtained). */
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', '57P01', '57P02', '08003', '08006']);
const LOST_MESSAGES = [/Connection terminated/i, /Connection ended unexpectedly/i, /terminating connection due to administrator command/i];

/**
 * True when `err` says the connection a query ran on was lost under it (the
 * server restarted or the link was cut): another connection from the pool
 * may well work. Not for a pool that cannot connect at all (a retry would
 * only wait again).
 */
export function isConnectionLost(err: unknown): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  for (const e of chain(err)) {
    if (typeof e.code === 'string' && LOST_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && LOST_MESSAGES.some((m) => m.test(e.message as string))) return true;
  }
  return false;
}

/** A statement that only reads (no data-modifying statement anywhere in it, no row locks). */
const READ_ONLY = /^\s*select\b/i;
const WRITES = /\b(insert|update|delete|merge|truncate|nextval|setval|for\s+(update|share|no\s+key\s+update|key\s+share))\b/i;

/**
 * The SQL of an `execute()` call when it is a plain read outside any
 * transaction, which may run again without changing anything; null otherwise.
 */
function retriableRead(args: unknown[]): string | null {
  const [q, , , ctx] = args as [unknown, unknown, unknown, unknown];
  if (ctx) return null;
  let sql: unknown = q;
  if (q && typeof q === 'object') {
    const k = q as { client?: { transacting?: unknown }; toSQL?: () => { sql?: unknown } };
    if (k.client?.transacting || typeof k.toSQL !== 'function') return null;
    sql = k.toSQL().sql;
  }
  if (typeof sql !== 'string' || !READ_ONLY.test(sql) || WRITES.test(sql)) return null;
  return sql;
}

type ConnectionClass = new (...args: any[]) => {
  execute(...a: any[]): Promise<any>;
  begin(...a: any[]): Promise<any>;
  commit(...a: any[]): Promise<any>;
  rollback(...a: any[]): Promise<any>;
  transactional(...a: any[]): Promise<any>;
};

/**
 * A MikroORM SQL connection whose errors carry a mark saying they came out of
 * the database connection, so a socket error there (ECONNREFUSED while the
 * server restarts) is told apart from the same code raised by, say, a storage
 * backend. The errors themselves are rethrown unchanged.
 */
export function withUnavailableMarking<T extends ConnectionClass>(Base: T): T {
  abstract class MarkingConnection extends Base {
    /**
     * A read outside a transaction interrupted by a lost connection runs once
     * more (on another connection of the pool: the lost one is discarded),
     * so a database restart or a cut link costs a GET nothing when the
     * database answers again at once. Writes and statements of a transaction
     * are never run again: they fail (503 at the HTTP layer).
     */
    override async execute(...a: any[]): Promise<any> {
      try {
        return await super.execute(...a);
      } catch (err) {
        markFromDatabase(err);
        if (!isConnectionLost(err) || retriableRead(a) === null) throw err;
      }
      return super.execute(...a).catch(rethrowMarked);
    }
    override async begin(...a: any[]): Promise<any> {
      return super.begin(...a).catch(rethrowMarked);
    }
    override async commit(...a: any[]): Promise<any> {
      return super.commit(...a).catch(rethrowMarked);
    }
    override async rollback(...a: any[]): Promise<any> {
      return super.rollback(...a).catch(rethrowMarked);
    }
    override async transactional(...a: any[]): Promise<any> {
      return super.transactional(...a).catch(rethrowMarked);
    }
  }
  return MarkingConnection;
}

function rethrowMarked(err: unknown): never {
  markFromDatabase(err);
  throw err;
}

/** Seconds a client is told to wait before trying again (Retry-After) while the database is unavailable. */
export const DB_RETRY_AFTER_SECONDS = 5;

/**
 * Bound parameters for every query MikroORM runs.
 *
 * MikroORM 6's SQL connection formats each query as text (`platform.formatQuery`
 * quotes every value into the SQL) and runs the text without parameters. That
 * breaks on values the SQL text cannot carry (a NUL ends the statement on
 * SQLite) and makes every value a piece of SQL. The connection classes built
 * here run the same statements with the values passed to the database driver
 * as bindings instead; only identifiers (`??`) and raw SQL fragments are still
 * written into the text, as MikroORM does.
 *
 * Longer than 500 lines: the connection classes and the direct reads below
 * (selectRows, selectFirstRow, runStatement) share this module's private
 * state: the prepared-statement caches, the dialect mark of a connection and
 * the schema generation that invalidates cached column names.
 */
import { createHash } from 'node:crypto';
import { JsonProperty, Utils, type Configuration } from '@mikro-orm/core';
import type { AbstractSqlConnection, AbstractSqlPlatform } from '@mikro-orm/knex';

export type SqlDialect = 'sqlite' | 'postgresql';

export interface BoundQuery {
  /** SQL whose only `?` are placeholders (a literal `?` outside strings is written `\?`). */
  sql: string;
  bindings: unknown[];
}

/** Marks a literal `?` (MikroORM's `\?`) in the parts of a statement. */
const LITERAL_QUESTION_MARK = Symbol('literal ?');
type Part = string | typeof LITERAL_QUESTION_MARK;

const IDENT_CHAR = /[A-Za-z0-9_$]/;

/** The value as a driver binding, with the conversions MikroORM's `quoteValue` applies. */
function bindingOf(v: unknown, dialect: SqlDialect, platform: AbstractSqlPlatform): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return dialect === 'postgresql' ? v.toString() : v;
  if (v instanceof Date) {
    if (dialect === 'sqlite') return v.getTime();
    const p = platform as AbstractSqlPlatform & { formatDate?: (d: Date) => string };
    return typeof p.formatDate === 'function' ? p.formatDate(v) : v;
  }
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Utils.isPlainObject(v) || (v as Record<symbol, unknown>)[JsonProperty]) return JSON.stringify(v);
  return String(v);
}

/**
 * Splits `sql` with MikroORM's placeholders (`?` a value, `??` an identifier,
 * `\?` a literal question mark) into SQL with driver placeholders and the list
 * of bindings. String literals, quoted identifiers and comments are copied as
 * they are, so a `?` inside them is no placeholder; a string literal holding a
 * `?` becomes a binding of its own (knex would count that `?` as a placeholder).
 * Arrays expand to `?, ?, ...` (nested arrays in parentheses on SQLite), raw
 * fragments (`raw()`, `sql\`\``) are spliced in with their own parameters.
 */
export function bindParameters(sql: string, params: readonly unknown[], dialect: SqlDialect, platform: AbstractSqlPlatform): BoundQuery {
  const parts: Part[] = [];
  const bindings: unknown[] = [];
  splice(sql, params, dialect, platform, parts, bindings);
  const literal = bindings.length ? '\\?' : '?';
  return { sql: parts.map((p) => (p === LITERAL_QUESTION_MARK ? literal : p)).join(''), bindings };
}

function splice(sql: string, params: readonly unknown[], dialect: SqlDialect, platform: AbstractSqlPlatform, parts: Part[], bindings: unknown[]): void {
  let j = 0;
  let i = 0;
  let text = 0; // start of the SQL text not yet copied to parts
  const flush = (to: number) => {
    if (to > text) parts.push(sql.slice(text, to));
  };
  const value = (v: unknown, nested = false): void => {
    if (Utils.isRawSql(v)) {
      splice(v.sql, v.params ?? [], dialect, platform, parts, bindings);
      return;
    }
    if (Array.isArray(v) && !(v as unknown as Record<symbol, unknown>)[JsonProperty]) {
      if (nested && dialect === 'sqlite') parts.push('(');
      v.forEach((e, k) => {
        if (k > 0) parts.push(', ');
        value(e, true);
      });
      if (nested && dialect === 'sqlite') parts.push(')');
      return;
    }
    if (v !== null && typeof v === 'object' && typeof (v as { toSqlString?: unknown }).toSqlString === 'function') {
      parts.push(String((v as { toSqlString(): unknown }).toSqlString()));
      return;
    }
    parts.push('?');
    bindings.push(bindingOf(v, dialect, platform));
  };

  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'") {
      // a string literal; E'...' (PostgreSQL) takes backslash escapes
      const escapes = dialect === 'postgresql' && i > 0 && /[eE]/.test(sql[i - 1]!) && (i < 2 || !IDENT_CHAR.test(sql[i - 2]!));
      let k = i + 1;
      while (k < sql.length) {
        if (escapes && sql[k] === '\\') k += 2;
        else if (sql[k] === "'" && sql[k + 1] === "'") k += 2;
        else if (sql[k] === "'") break;
        else k++;
      }
      const end = Math.min(k + 1, sql.length);
      const body = sql.slice(i + 1, k);
      if (body.includes('?') && !escapes) {
        flush(i);
        parts.push('?');
        bindings.push(body.replace(/''/g, "'"));
        text = end;
      }
      i = end;
      continue;
    }
    if (ch === '"' || ch === '`') {
      const k = sql.indexOf(ch, i + 1);
      i = k < 0 ? sql.length : k + 1;
      continue;
    }
    if (ch === '-' && sql[i + 1] === '-') {
      const k = sql.indexOf('\n', i);
      const end = k < 0 ? sql.length : k;
      flush(i);
      parts.push(sql.slice(i, end).replace(/\?/g, '_'));
      text = i = end;
      continue;
    }
    if (ch === '/' && sql[i + 1] === '*') {
      const k = sql.indexOf('*/', i + 2);
      const end = k < 0 ? sql.length : k + 2;
      flush(i);
      parts.push(sql.slice(i, end).replace(/\?/g, '_'));
      text = i = end;
      continue;
    }
    if (ch === '\\' && sql[i + 1] === '?') {
      flush(i);
      parts.push(LITERAL_QUESTION_MARK);
      text = i = i + 2;
      continue;
    }
    if (ch === '?') {
      flush(i);
      if (sql[i + 1] === '?') {
        parts.push(platform.quoteIdentifier(String(params[j++])));
        text = i = i + 2;
      } else {
        value(params[j++]);
        text = i = i + 1;
      }
      continue;
    }
    i++;
  }
  flush(sql.length);
}

type SqlConnectionClass = new (...args: any[]) => AbstractSqlConnection;

const SQL_DIALECT = Symbol('ferry SQL dialect');

/** The dialect of an EntityManager's database (its connection was made by withBoundParameters). */
export function sqlDialectOf(em: { getConnection(): unknown }): SqlDialect {
  const d = (em.getConnection() as { [SQL_DIALECT]?: SqlDialect })[SQL_DIALECT];
  if (!d) throw new Error('not a connection of openOrm (no SQL dialect)');
  return d;
}

/** Prepared statements kept per SQLite connection (least recently used dropped first). */
export const PREPARED_STATEMENTS_PER_CONNECTION = 256;
const STATEMENT_CACHE = Symbol('ferry prepared statement cache');

const UNCACHED_PREPARE = Symbol('ferry uncached prepare');

interface Preparer {
  prepare(sql: string): unknown;
  [STATEMENT_CACHE]?: Map<string, unknown>;
  /** The driver's own prepare, once cacheStatements has wrapped it. */
  [UNCACHED_PREPARE]?: (sql: string) => unknown;
}

/**
 * Makes `conn.prepare` (a libsql / better-sqlite3 database) answer the statement
 * it prepared before for the same SQL text, from a bounded LRU cache of
 * `max` statements: the driver compiles the SQL once per connection instead of
 * on every query. A statement is run to its end synchronously by knex's dialect
 * (`all`, `get`, `run`), so sharing it between queries is safe; SQLite
 * recompiles a prepared statement itself after a schema change.
 */
export function cacheStatements(conn: Preparer, max = PREPARED_STATEMENTS_PER_CONNECTION): Map<string, unknown> {
  const existing = conn[STATEMENT_CACHE];
  if (existing) return existing;
  const prepare = conn.prepare.bind(conn);
  const cache = new Map<string, unknown>();
  conn.prepare = (sql: string) => {
    let st = cache.get(sql);
    if (st !== undefined) {
      cache.delete(sql);
      cache.set(sql, st);
      return st;
    }
    st = prepare(sql);
    cache.set(sql, st);
    if (cache.size > max) cache.delete(cache.keys().next().value!);
    return st;
  };
  Object.defineProperty(conn, STATEMENT_CACHE, { value: cache });
  Object.defineProperty(conn, UNCACHED_PREPARE, { value: prepare });
  return cache;
}

/** Every connection the knex client hands out (queries and transactions alike) caches its statements. */
function cacheStatementsOfClient(client: { acquireConnection(): Promise<unknown>; [STATEMENT_CACHE]?: true }): void {
  if (client[STATEMENT_CACHE]) return;
  const acquire = client.acquireConnection.bind(client);
  client.acquireConnection = async () => {
    const conn = (await acquire()) as Preparer;
    if (typeof conn?.prepare === 'function') cacheStatements(conn);
    return conn;
  };
  Object.defineProperty(client, STATEMENT_CACHE, { value: true });
}

/**
 * A connection class like `Base` whose `execute` passes the parameters as bindings
 * (see bindParameters) instead of formatting them into the SQL text. Logging,
 * the `onQuery` hook, transactions and result shapes stay MikroORM's.
 */
export function withBoundParameters<T extends SqlConnectionClass>(Base: T, dialect: SqlDialect): T {
  abstract class BoundParametersConnection extends Base {
    /** The SQL dialect of this connection (see sqlDialectOf). */
    readonly [SQL_DIALECT]: SqlDialect = dialect;

    override async execute<R>(
      queryOrKnex: unknown,
      params: unknown[] = [],
      method: 'all' | 'get' | 'run' = 'all',
      ctx?: unknown,
      loggerContext?: Record<string, unknown>,
    ): Promise<R> {
      await this.ensureConnection();
      let query: string;
      if (Utils.isObject<{ toSQL(): { sql: string; bindings?: unknown[] }; client: { transacting?: boolean } }>(queryOrKnex)) {
        ctx ??= queryOrKnex.client.transacting ? queryOrKnex : undefined;
        const q = queryOrKnex.toSQL();
        query = q.sql;
        params = [...(q.bindings ?? [])];
      } else {
        query = String(queryOrKnex);
      }
      const self = this as unknown as {
        config: Configuration;
        platform: AbstractSqlPlatform;
        executeQuery<X>(q: string, cb: () => Promise<X>, context?: Record<string, unknown>): Promise<X>;
        transformRawResult<X>(res: unknown, method: 'all' | 'get' | 'run'): X;
      };
      query = self.config.get('onQuery')(query, params);
      if (DDL.test(query)) schemaGeneration++;
      const bound = params.length ? bindParameters(query, params, dialect, self.platform) : { sql: query, bindings: [] };
      const knex = this.getKnex();
      if (dialect === 'sqlite') cacheStatementsOfClient(knex.client as never);
      // what the query log shows, as MikroORM logs it (values in the text only with `query-params`)
      const logger = self.config.getLogger();
      let logged = query;
      if (logger.isEnabled('query', loggerContext)) {
        logged = logger.isEnabled('query-params', loggerContext)
          ? self.platform.formatQuery(query, params)
          : (knex.client as { positionBindings(s: string): string }).positionBindings(query);
      }
      return self.executeQuery(
        logged,
        async () => {
          const raw = bound.bindings.length ? knex.raw(bound.sql, bound.bindings as never[]) : knex.raw(bound.sql);
          if (ctx) raw.transacting(ctx as never);
          return self.transformRawResult<R>(await raw, method);
        },
        { query, params, ...loggerContext },
      );
    }
  }
  return BoundParametersConnection as unknown as T;
}

interface IdleSqlitePool {
  numUsed(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  free: { resource: Preparer & { open?: boolean } }[];
}

/** A statement that only reads (a write through selectRows would skip MikroORM's bookkeeping). */
const READ_ONLY = /^\s*select\s/i;

interface SqliteRawStatement {
  raw(on?: boolean): unknown;
  columns(): { name: string }[];
  all(bindings: unknown[]): unknown[][];
  get(bindings: unknown[]): unknown[] | undefined;
}

/** Changes of the schema made through a connection (DDL): the column names cached by rawRows are read again after one. */
let schemaGeneration = 0;
const DDL = /^\s*(create|alter|drop)\s/i;

interface RawEntry {
  stmt: SqliteRawStatement;
  names: string[];
  /** Builds a row object from the statement's values (rowBuilder of `names`). */
  build: (values: unknown[]) => Record<string, unknown>;
  generation: number;
}

/**
 * A function that turns a statement's values into an object named by its
 * columns, the properties in column order: `{"id": v[0], "username": v[1], ...}`.
 * Compiled once per statement (the names are the statement's own columns, each
 * written as a JSON string literal), it gives every row of the statement the
 * same hidden class. Setting the properties one by one under names read from
 * an array went through V8's generic keyed store for each: 140 µs for a page of
 * 100 users (40 columns) against 7 µs. A column named twice keeps its last
 * value, as the driver's objects do. A name that an object literal would not
 * take as a plain property (`__proto__` sets the prototype) gets the generic loop.
 */
export function rowBuilder(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  if (names.includes('__proto__')) {
    return (values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) Object.defineProperty(row, names[i]!, { value: values[i], enumerable: true, writable: true, configurable: true });
      return row;
    };
  }
  const members = names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ');
  // the source holds only JSON string literals and indexes (see above)
  return new Function('v', `'use strict'; return { ${members} };`) as (values: unknown[]) => Record<string, unknown>;
}
const RAW_STATEMENTS = Symbol('ferry raw statements');

/**
 * The rows of a read on an idle SQLite connection, as objects named by the
 * statement's columns. The statement runs in raw mode (rows as arrays) and
 * the objects are built here: about 20% cheaper than the driver building
 * each row object property by property through N-API (measured with libsql
 * on the user statements: 18.9 -> 15.3 µs for one user with its mappings,
 * 1,017 -> 812 µs for a page of 100). Raw statements are cached per
 * connection apart from the ones knex shares (raw mode is the statement's).
 * A column named twice keeps its last value, as the driver's objects do.
 * With `first`, only the first row is asked (`get()`: one call into the
 * driver where `all()` makes two and allocates a batch; with libsql 9-13
 * µs less per statement: a token check 23 -> 10 µs, a user 28 -> 16 µs).
 */
function rawRows(db: Preparer, sql: string, bindings: unknown[], first = false): Record<string, unknown>[] {
  const holder = db as Preparer & { [RAW_STATEMENTS]?: Map<string, RawEntry> };
  let cache = holder[RAW_STATEMENTS];
  if (!cache) {
    cache = new Map();
    Object.defineProperty(holder, RAW_STATEMENTS, { value: cache });
  }
  let entry = cache.get(sql);
  if (entry) {
    cache.delete(sql);
  } else {
    // a statement of its own: knex's cached one must keep answering objects
    const stmt = (db[UNCACHED_PREPARE] ?? db.prepare.bind(db))(sql) as SqliteRawStatement;
    stmt.raw(true);
    const names = stmt.columns().map((c) => c.name);
    entry = { stmt, names, build: rowBuilder(names), generation: schemaGeneration };
    if (cache.size >= PREPARED_STATEMENTS_PER_CONNECTION) cache.delete(cache.keys().next().value!);
  }
  cache.set(sql, entry);
  let arrays: unknown[][];
  if (first) {
    const row = entry.stmt.get(bindings);
    arrays = row === undefined ? [] : [row];
  } else arrays = entry.stmt.all(bindings);
  // after a schema change SQLite compiles the statement again: `select *` may name other columns
  if (entry.generation !== schemaGeneration || (arrays.length > 0 && arrays[0]!.length !== entry.names.length)) {
    const names = entry.stmt.columns().map((c) => c.name);
    if (names.length !== entry.names.length || names.some((n, i) => n !== entry!.names[i])) {
      entry.names = names;
      entry.build = rowBuilder(names);
    }
    entry.generation = schemaGeneration;
  }
  const build = entry.build;
  const rows = new Array<Record<string, unknown>>(arrays.length);
  for (let r = 0; r < arrays.length; r++) rows[r] = build(arrays[r]!);
  return rows;
}

/**
 * The idle SQLite connection of `em`, when one can run a read at once: the
 * pool's only connection is free (so no transaction is open on it: a
 * transaction holds its connection until it ends), nobody waits for it, and
 * MikroORM's query log is off (the direct path logs nothing).
 */
function idleSqliteConnection(em: { getConnection(): unknown }): Preparer | null {
  const conn = em.getConnection() as AbstractSqlConnection & { [SQL_DIALECT]?: SqlDialect };
  if (conn[SQL_DIALECT] !== 'sqlite') return null;
  if (queryLogged(conn)) return null;
  const client = conn.getKnex().client as { pool?: IdleSqlitePool };
  const pool = client.pool;
  if (!pool || pool.numUsed() !== 0 || pool.numPendingAcquires() !== 0 || pool.numPendingCreates() !== 0) return null;
  const db = pool.free[0]?.resource;
  if (!db || typeof db.prepare !== 'function' || db.open === false) return null;
  return db;
}

/**
 * The rows of one read-only statement (`select ...`, MikroORM placeholders,
 * see bindParameters), as `connection.execute(sql, params)` answers them.
 *
 * On SQLite, when the connection is idle, the statement runs at once on it,
 * synchronously, from its prepared-statement cache: no pool acquisition, no
 * query builder, no promise chain per query. The read is still a fresh read of
 * committed data: nothing else runs on the connection while it does, and no
 * transaction is open on an idle connection. Otherwise (PostgreSQL, a busy
 * connection, the query log on) it is `execute` as usual.
 */
export function selectRows<R = Record<string, unknown>>(em: { getConnection(): unknown }, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  return select<R>(em, sql, params, false);
}

/**
 * The first row of a read (undefined when there is none), as selectRows
 * reads it, for lookups by a unique key: on SQLite only that row is asked of
 * the driver.
 */
export async function selectFirstRow<R = Record<string, unknown>>(
  em: { getConnection(): unknown },
  sql: string,
  params: readonly unknown[] = [],
): Promise<R | undefined> {
  return (await select<R>(em, sql, params, true))[0];
}

function select<R>(em: { getConnection(): unknown }, sql: string, params: readonly unknown[], first: boolean): Promise<R[]> {
  const connection = em.getConnection() as AbstractSqlConnection & { [SQL_DIALECT]?: SqlDialect };
  if (!READ_ONLY.test(sql)) throw new Error(`selectRows runs reads only: ${sql.slice(0, 40)}`);
  const db = idleSqliteConnection(em);
  if (db) {
    const platform = (connection as unknown as { platform: AbstractSqlPlatform }).platform;
    const bound = params.length ? bindParameters(sql, params, 'sqlite', platform) : { sql, bindings: [] };
    // a literal `?` is knex's business (it unescapes `\?`); such statements take the usual path
    if (!bound.sql.includes('\\?')) {
      cacheStatements(db);
      const bindings = bound.bindings.map((b) => (typeof b === 'boolean' ? Number(b) : b));
      try {
        return Promise.resolve(rawRows(db, bound.sql, bindings, first) as R[]);
      } catch {
        // the usual path runs it again and reports the error as every query's error is reported
      }
    }
  }
  if (connection[SQL_DIALECT] === 'postgresql' && !queryLogged(connection)) return selectPostgres<R>(connection, sql, params);
  return connection.execute(sql, params as unknown[]) as Promise<R[]>;
}

/**
 * Runs one write statement (`update ... set col = ? where id = ?`) as it is,
 * with `?` placeholders bound as for selectRows: for the small writes of
 * every request (counters, last login), whose query-builder form cost more
 * than running them. MikroORM's identity map does not see the change.
 */
export async function runStatement(em: { getConnection(): unknown }, sql: string, params: readonly unknown[]): Promise<void> {
  const connection = em.getConnection() as { execute(sql: string, params: unknown[], method: 'run'): Promise<unknown> };
  await connection.execute(sql, params as unknown[], 'run');
}

function queryLogged(connection: AbstractSqlConnection): boolean {
  return (connection as unknown as { config: Configuration }).config.getLogger().isEnabled('query');
}

interface PgClient {
  query(q: { text: string; values: unknown[]; name?: string }): Promise<{ rows: unknown[] }>;
}

interface PgKnexClient {
  positionBindings(sql: string): string;
  acquireConnection(): Promise<PgClient>;
  releaseConnection(c: PgClient): Promise<unknown>;
}

/**
 * selectRows on PostgreSQL: the statement goes to a pooled client as it is,
 * without the query builder, and a statement whose text is fixed (no list
 * parameter, whose length would change it) is a named prepared statement of
 * that connection: the server parses and plans it once per connection.
 * Any failure runs it again the usual way, which reports it as every query's
 * failure is reported (and retries a read cut by a lost connection).
 */
async function selectPostgres<R>(connection: AbstractSqlConnection & { [SQL_DIALECT]?: SqlDialect }, sql: string, params: readonly unknown[]): Promise<R[]> {
  const platform = (connection as unknown as { platform: AbstractSqlPlatform }).platform;
  const client = connection.getKnex().client as unknown as PgKnexClient;
  let pg: PgClient | undefined;
  try {
    const bound = params.length ? bindParameters(sql, params, 'postgresql', platform) : { sql, bindings: [] };
    const text = client.positionBindings(bound.sql);
    const fixed = !params.some((p) => Array.isArray(p));
    const name = fixed ? statementName(text) : undefined;
    pg = await client.acquireConnection();
    try {
      const res = await pg.query({ text, values: bound.bindings, ...(name ? { name } : {}) });
      return res.rows as R[];
    } catch (err) {
      // a prepared statement the server no longer accepts (e.g. its tables changed shape): prepared again next time
      if (name) await forgetStatement(pg, name);
      throw err;
    }
  } catch {
    // below
  } finally {
    if (pg) await client.releaseConnection(pg);
  }
  return connection.execute(sql, params as unknown[]) as Promise<R[]>;
}

/** Drops a named statement on the server and in the client's list of parsed statements. */
async function forgetStatement(pg: PgClient, name: string): Promise<void> {
  await pg.query({ text: `deallocate ${name}`, values: [] }).catch(() => undefined);
  const parsed = (pg as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements;
  if (parsed) delete parsed[name];
}

const statementNames = new Map<string, string>();
/** A stable name per statement text (PostgreSQL prepared statement names are per connection). */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = 'ferry_' + createHash('sha1').update(text).digest('hex').slice(0, 20);
    if (statementNames.size < 1000) statementNames.set(text, name);
  }
  return name;
}

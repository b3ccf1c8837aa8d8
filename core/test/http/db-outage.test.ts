/**
 * The database goes away under a running node (always PostgreSQL, reached
 * through a TCP relay the test cuts and restores; the shared server is never
 * stopped): every request answers 503 with Retry-After and a JSON message,
 * /readyz says not ready while /healthz stays up, knex's own messages go
 * through Ferry's JSON logger only, and the node recovers by itself.
 */
import { Writable } from 'node:stream';
import { DriverException } from '@mikro-orm/core';
import { pino } from 'pino';
import t from 'tap';
import { createTestApp } from '../../src/testing.js';
import { isConnectionLost, isDatabaseUnavailable } from '../../src/data/db-errors.js';
import { pgBehindRelay } from '../helpers/pg-relay.js';

t.test('database outage: 503 with Retry-After on every route, readiness, recovery', async (t) => {
  const { relay, url } = await pgBehindRelay((fn) => t.teardown(fn));

  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const consoleWarnings: string[] = [];
  const warn = console.warn;
  console.warn = (...a: unknown[]) => void consoleWarnings.push(a.map(String).join(' '));
  t.teardown(() => {
    console.warn = warn;
  });

  const ta = await createTestApp({ databaseUrl: url, logger: pino({ level: 'debug' }, sink) });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const ready = await ta.inject('GET', '/readyz');
  t.equal(ready.statusCode, 200);
  t.same(ready.result, { status: 'ready', database: 'ok' });

  await relay.cut();
  const requests: [string, string, Parameters<typeof ta.inject>[2]][] = [
    ['GET', '/api/v2/users', { token }],
    ['GET', '/api/v2/users/admin', { token }],
    ['POST', '/api/v2/users', { token, payload: { username: 'u1', password: 'password-1', status: 1, home_dir: '/tmp/u1', permissions: { '/': ['*'] } } }],
    ['GET', '/api/v2/token', { basic: { username: 'admin', password: 'admin-password-1' } }],
    ['GET', '/api/v2/user/token', { basic: { username: 'someone', password: 'password-1' } }],
    ['GET', '/api/v2/roles', { token }],
    ['PUT', '/api/v2/groups/g', { token, payload: { name: 'g', description: 'x' } }],
  ];
  for (const [method, path, o] of requests) {
    const r = await ta.inject(method, path, o);
    t.equal(r.statusCode, 503, `${method} ${path}: ${r.payload}`);
    t.equal(r.headers['retry-after'], '5', `${method} ${path}: Retry-After`);
    t.same(JSON.parse(r.payload), { message: 'the database is unavailable; try again later', error: 'Service Unavailable' }, `${method} ${path}: body`);
  }
  const notReady = await ta.inject('GET', '/readyz');
  t.equal(notReady.statusCode, 503);
  t.equal(notReady.headers['retry-after'], '5');
  t.same(JSON.parse(notReady.payload), { message: 'not ready: the database is unavailable', error: 'Service Unavailable' });
  t.notMatch(notReady.payload, /5432|127\.0\.0\.1|ECONN/, 'no connection detail in the answer');
  const live = await ta.inject('GET', '/healthz');
  t.equal(live.statusCode, 200, '/healthz: the process is up');

  await relay.start();
  const back = await ta.inject('GET', '/api/v2/users', { token });
  t.equal(back.statusCode, 200, `recovered by itself: ${back.payload}`);
  t.equal((await ta.inject('GET', '/readyz')).statusCode, 200, 'ready again');

  t.same(
    consoleWarnings.filter((w) => /Connection Error|knex/i.test(w)),
    [],
    'nothing from knex on the console',
  );
  t.ok(
    lines.some((l) => l.component === 'database' && /Connection Error/.test(String(l.msg))),
    "knex's connection warning went through Ferry's JSON logger",
  );
  t.ok(
    lines.some((l) => l.msg === 'request failed' || l.msg === 'not ready: the database does not answer'),
    'the outage is logged',
  );
});

t.test('a read cut by a lost connection runs again once; a write fails with 503 and stores nothing', async (t) => {
  const { relay, url } = await pgBehindRelay((fn) => t.teardown(fn));
  const ta = await createTestApp({ databaseUrl: url });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();

  relay.dropNext(/select[^]*from "?users"?/i);
  const list = await ta.inject('GET', '/api/v2/users', { token });
  t.equal(relay.dropped, 1, 'the listing query was cut');
  t.equal(list.statusCode, 200, `GET answered after one retry: ${list.payload}`);

  relay.dropNext(/insert into "?users"?/i);
  const created = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: { username: 'cut1', password: 'password-1', status: 1, home_dir: '/tmp/cut1', permissions: { '/': ['*'] } },
  });
  t.equal(relay.dropped, 2, 'the insert was cut');
  t.equal(created.statusCode, 503, `a cut write is not run again: ${created.payload}`);
  t.equal(created.headers['retry-after'], '5');
  t.equal((await ta.inject('GET', '/api/v2/users/cut1', { token })).statusCode, 404, 'nothing was stored');

  const again = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: { username: 'cut1', password: 'password-1', status: 1, home_dir: '/tmp/cut1', permissions: { '/': ['*'] } },
  });
  t.equal(again.statusCode, 201, `the client's retry succeeds: ${again.payload}`);
});

t.test('isDatabaseUnavailable tells database errors from others', async (t) => {
  const marked = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  Object.defineProperty(marked, Symbol.for('ferry.fromDatabase'), { value: true });
  t.ok(isDatabaseUnavailable(marked), 'a socket error out of the database connection');
  t.ok(
    isDatabaseUnavailable(new DriverException(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))),
    "MikroORM's wrapper of a driver error",
  );
  t.notOk(
    isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' })),
    'the same code from elsewhere (a storage backend, an identity provider)',
  );
  t.ok(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })), 'PostgreSQL shutting down');
  t.ok(isDatabaseUnavailable(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })), 'SQLite busy');
  t.ok(
    isDatabaseUnavailable(new Error('wrapped', { cause: Object.assign(new Error('x'), { name: 'KnexTimeoutError' }) })),
    'a pool timeout in the cause chain',
  );
  const noConnection = new Error('Unable to acquire a connection');
  Object.defineProperty(noConnection, Symbol.for('ferry.fromDatabase'), { value: true });
  t.ok(isDatabaseUnavailable(noConnection), 'knex could not get a connection (pool being destroyed, SQLite file not openable)');
  const endedTransaction = new Error('Transaction query already complete, run with DEBUG=knex:tx for more info');
  Object.defineProperty(endedTransaction, Symbol.for('ferry.fromDatabase'), { value: true });
  t.ok(isDatabaseUnavailable(endedTransaction), 'a statement of a transaction its lost connection ended');
  t.ok(
    isDatabaseUnavailable(new AggregateError([new Error('render failed'), endedTransaction], 'the answer to a create failed, and removing it failed too')),
    'an outage among several failures (a create whose answer and undo both failed)',
  );
  t.notOk(isDatabaseUnavailable(new AggregateError([new Error('a'), new Error('b')])), 'several failures, none an outage');
  t.notOk(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })), 'a constraint violation is not an outage');
  t.notOk(isDatabaseUnavailable(new Error('Connection terminated')), 'a connection message not from the database');
  const lost = Object.assign(new Error('Connection terminated unexpectedly'), {});
  Object.defineProperty(lost, Symbol.for('ferry.fromDatabase'), { value: true });
  t.ok(isConnectionLost(lost), 'a connection lost under a query');
  t.notOk(isConnectionLost(marked), 'a refused connection is unavailable, not lost (no immediate retry)');
});

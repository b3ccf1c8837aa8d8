import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDatabase, createTestApp, type TestApp } from '../../src/testing.js';
import { compileSchedule, scheduleMatches } from '../../src/event-manager/cron.js';
import { matchPatterns } from '../../src/event-manager/patterns.js';
import { EventManager } from '../../src/event-manager/event-manager.js';
import { EventScheduler, ManualClock } from '../../src/event-manager/scheduler.js';

const FIXTURE = (app: string) => ({ name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app } });
const LOG = ((globalThis as any).__ferryActionLog ??= []) as { app: string; rule: string; params: Record<string, any> }[];

t.test('cron fields: *, lists, ranges, steps, names, day-of-month/day-of-week OR', async (t) => {
  const at = (iso: string) => new Date(iso);
  const m = (s: Record<string, string>, iso: string) =>
    scheduleMatches(compileSchedule({ hour: '*', day_of_week: '*', day_of_month: '*', month: '*', ...s }), at(iso));
  t.ok(m({ minute: '*' }, '2026-03-04T10:17:00Z'));
  t.ok(m({}, '2026-03-04T10:00:00Z'), 'minute defaults to 0');
  t.notOk(m({}, '2026-03-04T10:01:00Z'));
  t.ok(m({ minute: '*/15' }, '2026-03-04T10:45:00Z'));
  t.notOk(m({ minute: '*/15' }, '2026-03-04T10:46:00Z'));
  t.ok(m({ minute: '5,10-12', hour: '9-17/2' }, '2026-03-04T11:11:00Z'));
  t.notOk(m({ minute: '5,10-12', hour: '9-17/2' }, '2026-03-04T10:11:00Z'));
  t.ok(m({ minute: '0', day_of_week: 'mon-fri' }, '2026-03-06T00:00:00Z'), 'friday');
  t.notOk(m({ minute: '0', day_of_week: '1-5' }, '2026-03-07T00:00:00Z'), 'saturday');
  t.ok(m({ minute: '0', day_of_week: '7' }, '2026-03-08T00:00:00Z'), '7 is sunday');
  t.ok(m({ minute: '0', month: 'mar', day_of_month: '4' }, '2026-03-04T00:00:00Z'));
  t.ok(m({ minute: '0', day_of_month: '1', day_of_week: '3' }, '2026-03-04T00:00:00Z'), 'dom or dow when both restricted');
  t.ok(m({ minute: '0', hour: '23' }, '2026-03-04T23:00:00.000Z'), 'UTC');
  for (const bad of [{ minute: '60' }, { hour: '1-' }, { month: '0' }, { day_of_week: 'xyz' }, { minute: '*/0' }, { hour: '' }, { hour: '5-2' }]) {
    t.throws(() => compileSchedule({ hour: '*', day_of_week: '*', day_of_month: '*', month: '*', ...bad }), { message: /\w/ }, JSON.stringify(bad));
  }
});

t.test('wildcard patterns', async (t) => {
  t.ok(matchPatterns('/a/b.txt', [{ pattern: '/a/*.txt' }]));
  t.notOk(matchPatterns('/a/b/c.txt', [{ pattern: '/a/*.txt' }]), '* does not cross /');
  t.ok(matchPatterns('/a/b/c.txt', [{ pattern: '/a/**' }]));
  t.ok(matchPatterns('f1', [{ pattern: 'f[0-9]' }]));
  t.notOk(matchPatterns('tmpx', [{ pattern: 'tmp*', inverse_match: true }]));
  t.ok(matchPatterns('abc', [{ pattern: 'tmp*', inverse_match: true }]));
  t.ok(matchPatterns('anything', []));
});

async function setup(ta: TestApp, rules: { name: string; concurrent?: boolean }[]) {
  const token = await ta.adminToken();
  await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name: 'tick', type: 101, options: { test_config: { message: '{{.Event}}' } } } });
  for (const r of rules) {
    const res = await ta.inject('POST', '/api/v2/eventrules', {
      token,
      payload: {
        name: r.name,
        trigger: 3,
        conditions: {
          schedules: [{ minute: '*/2', hour: '*', day_of_week: '*', day_of_month: '*', month: '*' }],
          options: { concurrent_execution: r.concurrent ?? false },
        },
        actions: [{ name: 'tick' }],
      },
    });
    if (res.statusCode !== 201) throw new Error(res.payload);
  }
}

/**
 * Two nodes on one database: on SQLite (one file shared by both apps) and
 * always on PostgreSQL (127.0.0.1:5432, the cluster case), whatever
 * FERRY_TEST_DB says.
 */
async function twoNodes(t: Test, kind: 'sqlite' | 'postgres') {
  let db: { url: string; drop(): Promise<void> } | undefined;
  let dataDir: string | undefined;
  let sqliteConfig: Record<string, unknown> = {};
  if (kind === 'postgres') {
    db = await createPgDatabase();
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'ferry-sched-'));
    sqliteConfig = { data_provider: { driver: 'sqlite', name: 'shared.db' } };
  }
  const names = [`${kind}-a`, `${kind}-b`];
  const mk = async (app: string) =>
    createTestApp({
      plugins: [FIXTURE(app)],
      ...(db ? { databaseUrl: db.url } : { dataDir }),
      config: { ...sqliteConfig, common: { instance_id: app }, event_manager: { scheduler: true } },
    });
  const a = await mk(names[0]!);
  const b = await mk(names[1]!);
  t.teardown(async () => {
    await a.close();
    await b.close();
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  if (db) {
    t.equal(a.app.orm.config.get('dbName'), b.app.orm.config.get('dbName'), 'both nodes on the same PostgreSQL database');
    t.match(a.app.orm.config.getDriver().constructor.name, /Postgre/i, 'the PostgreSQL driver');
  }
  await setup(a, [{ name: 'single' }, { name: 'everywhere', concurrent: true }]);

  const start = Date.parse('2026-05-01T10:00:30Z');
  const clocks = [new ManualClock(start), new ManualClock(start)];
  const nodes = [a, b];
  nodes.forEach((n, i) => {
    const s = n.app.container.resolve(EventScheduler);
    s.setClock(clocks[i]!);
    s.start();
  });
  // advance both clocks 6 minutes, minute by minute, interleaved like two real nodes
  for (let i = 0; i < 6; i++) {
    await Promise.all(clocks.map((c) => c.advance(60_000)));
  }
  await Promise.all(nodes.map((n) => n.app.container.resolve(EventManager).idle()));
  const ran = LOG.filter((e) => names.includes(e.app));
  const single = ran.filter((e) => e.rule === 'single');
  const everywhere = ran.filter((e) => e.rule === 'everywhere');
  // ticks at 10:01..10:06, */2 matches 10:02, 10:04, 10:06
  t.equal(single.length, 3, 'the scheduled rule ran once per matching minute across the cluster');
  t.same(
    single.map((e) => e.params.Timestamp / 1_000_000n).sort(),
    [Date.parse('2026-05-01T10:02:00Z'), Date.parse('2026-05-01T10:04:00Z'), Date.parse('2026-05-01T10:06:00Z')].map(BigInt),
  );
  t.equal(everywhere.length, 6, 'concurrent_execution: every node runs each tick');
  t.same(new Set(everywhere.map((e) => e.app)), new Set(names));
  t.equal(single[0]!.params.Event, 'Schedule');

  // a tick replayed on one node (late timer, restart) is still claimed once
  const again = await a.app.container.resolve(EventScheduler).tick(Date.parse('2026-05-01T10:02:10Z'));
  t.same(again, ['everywhere'], 'the claimed minute is not run again');
  const replayB = await b.app.container.resolve(EventScheduler).tick(Date.parse('2026-05-01T10:04:50Z'));
  t.same(replayB, ['everywhere'], 'nor on the other node');
}

t.test('scheduler: once per tick across two nodes on one SQLite file, unless concurrent execution is allowed', (t) => twoNodes(t, 'sqlite'));

t.test('scheduler: once per tick across two nodes on one PostgreSQL database, unless concurrent execution is allowed', (t) => twoNodes(t, 'postgres'));

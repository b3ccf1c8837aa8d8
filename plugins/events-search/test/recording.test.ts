import t from 'tap';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOKENS, type EventHistory } from '@ferry/core';
import { createPgDatabase, createTestApp, usePostgres } from '@ferry/core/testing';
import { addUser, appWithSearch, bus, fsEvent, logEvent, providerEvent, search, settled, storeOf } from './helpers.js';

t.test('without the plugin the event routes (searches and aggregates) answer 400 saying event search is not configured', async (t) => {
  const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }] });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const buckets = `start_timestamp=${Date.now() * 1e6}&interval=3600&buckets=24`;
  const urls = ['fs', 'provider', 'logs'].flatMap((p) => ['', '?csv_export=true'].map((q) => `/api/v2/events/${p}${q}`));
  urls.push(`/api/v2/events/fs/aggregate?${buckets}`, `/api/v2/events/logs/aggregate?${buckets}`);
  for (const url of urls) {
    const r = await ta.inject('GET', url, { token });
    t.equal(r.statusCode, 400, url);
    t.same(JSON.parse(r.payload), {
      message: 'event search is not configured: enable the @ferry/events-search plugin (plugins in the configuration) to record and search events',
      error: 'Bad Request',
    });
  }
  const history = ta.app.container.resolve<EventHistory>(TOKENS.EventHistory);
  t.equal(history.source, 'memory', 'event reports read the in-memory recorder');
});

t.test('real traffic: concurrent uploads, logins and provider changes are all recorded', async (t) => {
  // 60 transfers at once from one address: above the default per-host limit (20)
  const ta = await appWithSearch({}, { config: { common: { max_per_host_transfers: 100 } } });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  await addUser(ta, token, 'up1');
  await addUser(ta, token, 'up2');
  const tokens = { up1: await ta.userToken('up1', 'up1-password'), up2: await ta.userToken('up2', 'up2-password') };
  const N = 60;
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) => {
      const user = i % 2 ? 'up2' : 'up1';
      return ta.inject('POST', `/api/v2/user/files/upload?path=%2Ff-${i}.txt`, {
        token: tokens[user],
        payload: Buffer.alloc(100 + i, 'x'),
        headers: { 'content-type': 'application/octet-stream' },
      });
    }),
  );
  t.ok(
    results.every((r) => r.statusCode === 201),
    `every upload stored: ${results.map((r) => r.statusCode).join(',')}`,
  );
  await settled(ta);
  const uploads = await search<{
    action: string;
    username: string;
    virtual_path: string;
    file_size: number;
    status: number;
    protocol: string;
    ip: string;
    session_id: string;
    elapsed: number;
  }>(ta, token, '/api/v2/events/fs?actions=upload&limit=1000');
  t.equal(uploads.length, N, 'one upload event per upload, none lost');
  t.ok(
    uploads.every((e) => e.status === 1),
    'all succeeded',
  );
  t.same(new Set(uploads.map((e) => e.virtual_path)).size, N);
  const e5 = uploads.find((e) => e.virtual_path === '/f-5.txt')!;
  t.match(e5, { username: 'up2', file_size: 105, status: 1, protocol: 'HTTP', ip: '127.0.0.1' });
  t.ok(e5.session_id, 'session id recorded');
  t.ok(Number.isInteger(e5.elapsed) && e5.elapsed >= 0, 'elapsed recorded');
  t.equal((await search(ta, token, '/api/v2/events/fs?actions=upload&username=up1&limit=1000')).length, N / 2);
  t.same(storeOf(ta).stats().dropped, 0);

  // download and delete are recorded too
  const dl = await ta.inject('GET', '/api/v2/user/files?path=%2Ff-0.txt', { token: tokens.up1 });
  t.equal(dl.statusCode, 200);
  const del = await ta.inject('DELETE', '/api/v2/user/files?path=%2Ff-2.txt', { token: tokens.up1 });
  t.equal(del.statusCode, 200);
  await settled(ta);
  t.match(await search(ta, token, '/api/v2/events/fs?actions=download,delete&username=up1&order=ASC'), [
    { action: 'download', virtual_path: '/f-0.txt' },
    { action: 'delete', virtual_path: '/f-2.txt' },
  ]);

  // logins: ok, wrong password, unknown user, no credentials at all
  await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'up1', password: 'wrong' } });
  await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'nobody', password: 'x' } });
  await ta.inject('GET', '/api/v2/token');
  await ta.inject('GET', '/api/v2/token', { basic: { username: 'admin', password: 'wrong' } });
  await settled(ta);
  const logs = await search<{ event: number; username: string; protocol: string; message: string }>(ta, token, '/api/v2/events/logs?order=ASC&limit=1000');
  const summary = logs.map((e) => `${e.event}:${e.username}`);
  t.ok(summary.includes('5:admin'), 'admin login');
  t.ok(summary.includes('5:up1') && summary.includes('5:up2'), 'user logins');
  t.ok(summary.includes('1:up1'), 'failed login of an existing user');
  t.ok(summary.includes('2:nobody'), 'failed login of an unknown user');
  t.ok(summary.includes('3:'), 'no login tried');
  t.ok(summary.includes('1:admin'), 'failed admin login');
  t.equal(summary.filter((s) => s === '1:up1').length, 1, 'a failed login is recorded once');
  t.ok(logs.every((e) => e.protocol === 'HTTP'));

  // a disabled account: refused after the password check, recorded once
  const dis = await ta.inject('PUT', '/api/v2/users/up2', {
    token,
    payload: { status: 0, password: 'up2-password', home_dir: path.join(ta.dataDir, 'homes', 'up2'), permissions: { '/': ['*'] } },
  });
  t.equal(dis.statusCode, 200, dis.payload);
  const refused = await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'up2', password: 'up2-password' } });
  t.not(refused.statusCode, 200);
  await settled(ta);
  t.equal((await search(ta, token, '/api/v2/events/logs?username=up2&events=1')).length, 1, 'disabled user login: one event 1');

  // provider events of real changes, the password never stored
  const prov = await search<{ action: string; object_type: string; object_name: string; object_data: string; username: string }>(
    ta,
    token,
    '/api/v2/events/provider?object_name=up2&order=ASC',
  );
  t.match(prov, [
    { action: 'add', object_type: 'user', object_name: 'up2', username: 'admin' },
    { action: 'update', object_type: 'user', object_name: 'up2', username: 'admin' },
  ]);
  for (const p of prov) {
    const data = Buffer.from(p.object_data, 'base64').toString('utf8');
    t.equal(JSON.parse(data).username, 'up2');
    t.notMatch(data, /up2-password/, 'no password in object_data');
  }
});

t.test('a full queue drops events, counts and logs them; recording resumes', async (t) => {
  const lines: string[] = [];
  const { captureLogger } = await import('@ferry/core/testing');
  const cap = captureLogger();
  const ta = await appWithSearch({ queue_size: 100, batch_size: 1000, flush_interval: 60_000 }, { logger: cap.logger });
  t.teardown(() => ta.close());
  const b = bus(ta);
  // the first admin's creation is already queued (a provider event)
  const before = storeOf(ta).stats();
  t.same(before, { recorded: 0, queued: 1, dropped: 0 });
  for (let i = 0; i < 150; i++) b.publish('fs', fsEvent({ username: 'flood', session_id: `q-${i}` }));
  t.same(storeOf(ta).stats(), { recorded: 0, queued: 100, dropped: 51 });
  lines.push(...cap.lines);
  t.ok(
    lines.some((l) => /event search dropped events: the queue is full \(100 events\)/.test(l)),
    'the drop is logged',
  );
  await ta.close();
  t.match(storeOf(ta).stats(), { recorded: 100, queued: 0, dropped: 51 }, 'stopping writes what was queued');
});

t.test('retention deletes old events; events survive a restart; event reports read the store', async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ferry-es-'));
  const pg = usePostgres() ? await createPgDatabase() : undefined;
  t.teardown(async () => {
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const o = { dataDir, databaseUrl: pg?.url, config: pg ? {} : { data_provider: { driver: 'sqlite', name: 'ferry.db' } } };
  const DAY = 86_400e9;
  const now = Date.now() * 1e6;
  const first = await appWithSearch({ retention_days: 0 }, o);
  const b = bus(first);
  for (const age of [40, 10, 0]) {
    b.publish('fs', fsEvent({ timestamp: now - age * DAY, session_id: `age-${age}` }));
    b.publish('provider', providerEvent({ timestamp: now - age * DAY, object_name: `age-${age}` }));
    b.publish('log', logEvent({ timestamp: now - age * DAY, username: `age-${age}` }));
  }
  // closing writes the queue (a flush interval of 20 ms may not have passed)
  await first.close();

  const second = await appWithSearch({ retention_days: 30 }, o, [{ name: '@ferry/actions-builtin' }]);
  t.teardown(() => second.close());
  const token = await second.adminToken();
  const deadline = Date.now() + 20_000;
  let sessions: string[] = [];
  while (Date.now() < deadline) {
    sessions = (await search<{ session_id: string }>(second, token, '/api/v2/events/fs?order=ASC')).map((e) => e.session_id);
    if (!sessions.includes('age-40')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.same(sessions, ['age-10', 'age-0'], 'events older than retention_days are deleted, the others kept across the restart');
  t.same(
    (await search<{ object_name: string }>(second, token, '/api/v2/events/provider?order=ASC')).map((e) => e.object_name),
    ['age-10', 'age-0', 'admin'],
    'provider events too (then the creation of the first admin)',
  );
  const logs = (await search<{ username: string }>(second, token, '/api/v2/events/logs?order=ASC')).map((e) => e.username);
  t.same(logs.slice(0, 2), ['age-10', 'age-0'], 'log events too (then the logins of this test)');

  const history = second.app.container.resolve<EventHistory>(TOKENS.EventHistory);
  t.equal(history.source, 'store');
  const seen: string[] = [];
  for await (const e of history.events('fs', now - 20 * DAY, now + 1e9)) seen.push((e as { session_id: string }).session_id);
  t.same(seen, ['age-10', 'age-0'], 'event reports read the persisted events of earlier runs');

  // an event report action (19) run on demand writes the events of the earlier run
  const act = await second.inject('POST', '/api/v2/eventactions', {
    token,
    payload: { name: 'report', type: 19, options: { event_report_config: { hours: 24 * 20, event_types: ['fs', 'provider'] } } },
  });
  t.equal(act.statusCode, 201, act.payload);
  const rule = await second.inject('POST', '/api/v2/eventrules', {
    token,
    payload: { name: 'report-rule', trigger: 6, conditions: {}, actions: [{ name: 'report', order: 0, relation_options: {} }] },
  });
  t.equal(rule.statusCode, 201, rule.payload);
  t.equal((await second.inject('POST', '/api/v2/eventrules/run/report-rule', { token })).statusCode, 202);
  await second.app.container.resolve<{ idle(): Promise<void> }>(TOKENS.EventManager).idle();
  const dir = path.join(dataDir, 'reports');
  const fsCsv = readdirSync(dir).find((f) => f.endsWith('-fs.csv'))!;
  const lines = readFileSync(path.join(dir, fsCsv), 'utf8').split('\r\n').filter(Boolean);
  t.equal(lines.length, 3, 'header and the two events of the earlier run');
  t.match(lines[1], /,upload,u1,/);
});

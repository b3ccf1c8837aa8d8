/**
 * GET /status (view_status), the run-time log level (GET/PUT /logs/level),
 * file checksums for users and the storage/bandwidth usage report
 * (GET /saas/usage), through HTTP on SQLite or PostgreSQL (FERRY_TEST_DB).
 */
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { createTestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { Logger } from '../../src/logger.js';
import type { EventBus } from '../../src/events/event-bus.js';
import { UsageService } from '../../src/ops/usage.service.js';
import { pgBehindRelay } from '../helpers/pg-relay.js';

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
    cb();
  },
});
const ta = await fileApp({
  logger: pino({ level: 'info' }, sink),
  config: { defender: { enabled: true }, common: { allow_list_status: false }, mfa: { totp: [] } },
});
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as any;
const q = encodeURIComponent;

async function limitedAdmin(username: string, permissions: string[]): Promise<string> {
  const r = await ta.inject('POST', '/api/v2/admins', {
    token: admin,
    payload: { username, password: 'admin-password-2', status: 1, permissions, filters: { allow_list: [] } },
  });
  if (r.statusCode !== 201) throw new Error(r.payload);
  return ta.adminToken(username, 'admin-password-2');
}
const viewer = await limitedAdmin('viewer', ['view_status', 'view_users']);
const plain = await limitedAdmin('plain', ['view_conns']);

t.test('GET /status: the live state of this node', async (t) => {
  const r = await ta.inject('GET', '/api/v2/status', { token: viewer });
  t.equal(r.statusCode, 200, r.payload);
  t.same(json(r), {
    ssh: { is_active: false, bindings: null, host_keys: null },
    ftp: { is_active: false, bindings: null },
    webdav: { is_active: false, bindings: null },
    data_provider: { is_active: true, driver: ta.config.data_provider.driver },
    defender: { is_active: true },
    mfa: { is_active: false, totp_configs: [] },
    allow_list: { is_active: false },
    rate_limiters: { is_active: false, protocols: [] },
  });
  const denied = await ta.inject('GET', '/api/v2/status', { token: plain });
  t.equal(denied.statusCode, 403);
  t.match(json(denied), { message: /view_status/, error: 'Forbidden' });
  const anon = await ta.inject('GET', '/api/v2/status');
  t.equal(anon.statusCode, 401);
  t.match(json(anon), { message: String, error: 'Unauthorized' });
  const user = await addUser(ta, { username: 'statususer' }).then(() => ta.userToken('statususer', PASSWORD));
  t.equal((await ta.inject('GET', '/api/v2/status', { token: user })).statusCode, 401, 'a user token is not an admin credential');
});

t.test('GET /status reads TOTP configs, rate limits and the allow list from the configuration', async (t) => {
  const other = await fileApp({
    config: {
      common: { allow_list_status: true },
      mfa: {
        totp: [
          { name: 'Default', issuer: 'Ferry', algo: 'sha256' },
          { name: 'Legacy', issuer: 'Old' },
        ],
      },
      rate_limit: { api: { per_host: { average: 10, period: 1000, burst: 5 } } },
    },
  });
  t.teardown(() => other.close());
  // the allow list is on: allow 127.0.0.1 first through the database
  await other.app.orm.em
    .fork()
    .getConnection()
    .execute("insert into ip_lists (type, ipornet, mode, protocols, description, created_at, updated_at) values (1, '127.0.0.1/32', 1, 0, '', 0, 0)");
  const token = await other.adminToken();
  const r = await other.inject('GET', '/api/v2/status', { token });
  t.equal(r.statusCode, 200, r.payload);
  const body = json(r);
  t.same(body.mfa, {
    is_active: true,
    totp_configs: [
      { name: 'Default', issuer: 'Ferry', algo: 'sha256' },
      { name: 'Legacy', issuer: 'Old', algo: 'sha1' },
    ],
  });
  t.same(body.rate_limiters, { is_active: true, protocols: ['HTTP'] });
  t.same(body.allow_list, { is_active: true });
  t.same(body.defender, { is_active: false });
});

t.test('GET /status: a stopped PostgreSQL is reported inactive with its error, then active again', async (t) => {
  const { relay, url } = await pgBehindRelay((fn) => t.teardown(fn));
  const pg = await createTestApp({ databaseUrl: url });
  t.teardown(() => pg.close());
  const token = await pg.adminToken();
  const up = await pg.inject('GET', '/api/v2/status', { token });
  t.equal(up.statusCode, 200, up.payload);
  t.same(json(up).data_provider, { is_active: true, driver: 'postgresql' });

  await relay.cut();
  const down = await pg.inject('GET', '/api/v2/status', { token });
  t.equal(down.statusCode, 200, `an admin token verified before still reads the status: ${down.payload}`);
  const dp = json(down).data_provider;
  t.equal(dp.is_active, false);
  t.equal(dp.driver, 'postgresql');
  t.match(dp.error, /ECONNREFUSED|connect|Connection terminated|timeout/i, `the driver's error: ${dp.error}`);
  t.notMatch(dp.error, /postgres@/, 'no credentials in the error');
  t.same(json(down).defender, { is_active: false }, 'the rest of the status still answers');
  const other = await pg.inject('GET', '/api/v2/users', { token });
  t.equal(other.statusCode, 503, 'other routes still answer 503 while the database is down');
  const anon = await pg.inject('GET', '/api/v2/status');
  t.equal(anon.statusCode, 401, 'without a token: still refused');

  await relay.start();
  const back = await pg.inject('GET', '/api/v2/status', { token });
  t.same(json(back).data_provider, { is_active: true, driver: 'postgresql' }, 'active again after the restart');
});

t.test('log level: read, change at run time (components created at start-up follow), refusals', async (t) => {
  const get = await ta.inject('GET', '/api/v2/logs/level', { token: admin });
  t.equal(get.statusCode, 200);
  t.same(json(get), { level: 'info' });
  const requestLines = () => lines.filter((l) => l.msg === 'request').length;

  let before = requestLines();
  await ta.inject('GET', '/api/v2/version', { token: admin });
  t.ok(requestLines() > before, 'request lines at info');

  const put = await ta.inject('PUT', '/api/v2/logs/level', { token: admin, payload: { level: 'warn' } });
  t.equal(put.statusCode, 200, put.payload);
  t.same(json(put), { level: 'warn', previous: 'info' });
  t.ok(
    lines.some((l) => l.msg === 'log level changed' && l.admin === 'admin' && l.new_level === 'warn' && l.previous_level === 'info'),
    'the change is logged',
  );
  before = requestLines();
  await ta.inject('GET', '/api/v2/version', { token: admin });
  await ta.inject('GET', '/api/v2/logs/level', { token: admin });
  t.equal(requestLines(), before, 'the httpd logger (a child made at start-up) no longer writes info lines');
  t.same(json(await ta.inject('GET', '/api/v2/logs/level', { token: admin })), { level: 'warn' });
  t.equal(ta.app.container.resolve<Logger>(TOKENS.Logger).level, 'warn');

  const debug = await ta.inject('PUT', '/api/v2/logs/level', { token: admin, payload: { level: 'debug' } });
  t.same(json(debug), { level: 'debug', previous: 'warn' });
  before = requestLines();
  await ta.inject('GET', '/api/v2/version', { token: admin });
  t.ok(requestLines() > before, 'info lines again at debug');

  for (const [payload, msg] of [
    [{ level: 'loud' }, /"level" must be one of/],
    [{}, /"level" is required/],
  ] as const) {
    const bad = await ta.inject('PUT', '/api/v2/logs/level', { token: admin, payload });
    t.equal(bad.statusCode, 400, JSON.stringify(payload));
    t.match(json(bad), { message: msg, error: 'Bad Request' });
  }
  const denied = await ta.inject('PUT', '/api/v2/logs/level', { token: viewer, payload: { level: 'info' } });
  t.equal(denied.statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/logs/level', { token: viewer })).statusCode, 403);
  t.equal((await ta.inject('PUT', '/api/v2/logs/level', { payload: { level: 'info' } })).statusCode, 401);
  await ta.inject('PUT', '/api/v2/logs/level', { token: admin, payload: { level: 'info' } });
});

t.test('file checksum: streamed from the backend, download permission, errors', async (t) => {
  await addUser(ta, { username: 'sumuser', permissions: { '/': ['*'], '/nodl': ['list', 'upload'] } } as never);
  const token = await ta.userToken('sumuser', PASSWORD);
  const data = crypto.randomBytes(3 * 1024 * 1024 + 17);
  const up = async (p: string, body: Buffer | string) => {
    const r = await ta.inject('POST', `/api/v2/user/files/upload?path=${q(p)}&mkdir_parents=true`, {
      token,
      payload: body,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (r.statusCode !== 201) t.comment(JSON.stringify(lines.filter((l) => Number(l.level) >= 50)));
    t.equal(r.statusCode, 201, r.payload);
  };
  await up('/big.bin', data);
  await up('/empty.txt', '');
  await up('/nodl/secret.txt', 'no');
  const sum = (algo: string, b: Buffer | string) => crypto.createHash(algo).update(b).digest('hex');

  const def = await ta.inject('GET', `/api/v2/user/files/checksum?path=${q('/big.bin')}`, { token });
  t.equal(def.statusCode, 200, def.payload);
  t.same(json(def), { path: '/big.bin', size: data.length, algo: 'sha256', checksum: sum('sha256', data) });
  for (const algo of ['md5', 'sha1', 'sha256', 'sha512']) {
    const r = await ta.inject('GET', `/api/v2/user/files/checksum?path=big.bin&algo=${algo}`, { token });
    t.equal(r.statusCode, 200);
    t.equal(json(r).checksum, sum(algo, data), algo);
  }
  t.same(json(await ta.inject('GET', '/api/v2/user/files/checksum?path=/empty.txt&algo=md5', { token })), {
    path: '/empty.txt',
    size: 0,
    algo: 'md5',
    checksum: sum('md5', ''),
  });
  const cases: [string, number, RegExp][] = [
    ['', 400, /"path" is required/],
    ['?path=/big.bin&algo=crc32', 400, /"algo" must be one of/],
    ['?path=/missing.bin', 404, /./],
    ['?path=/nodl', 400, /is a directory/],
    ['?path=/nodl/secret.txt', 403, /download/],
  ];
  for (const [query, status, msg] of cases) {
    const r = await ta.inject('GET', `/api/v2/user/files/checksum${query}`, { token });
    t.equal(r.statusCode, status, `${query}: ${r.payload}`);
    t.match(json(r), { message: msg, error: String }, query);
  }
  t.equal((await ta.inject('GET', '/api/v2/user/files/checksum?path=/big.bin', { token: admin })).statusCode, 401, 'an admin token is not a user credential');
  t.equal((await ta.inject('GET', '/api/v2/user/files/checksum?path=/big.bin')).statusCode, 401);
});

t.test('GET /saas/usage: storage from the quota counters, bandwidth per day from transfers', async (t) => {
  await addUser(ta, { username: 'usage1' });
  await addUser(ta, { username: 'usage2' });
  const token = await ta.userToken('usage1', PASSWORD);
  const body = Buffer.alloc(5000, 1);
  for (let i = 0; i < 3; i++) {
    const r = await ta.inject('POST', `/api/v2/user/files/upload?path=/f${i}.bin`, {
      token,
      payload: body,
      headers: { 'content-type': 'application/octet-stream' },
    });
    t.equal(r.statusCode, 201);
  }
  // the download event is published once the answer's stream has ended, just after inject resolves
  const downloaded = new Promise<void>((resolve) => {
    const off = ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('fs', (ev) => {
      if (ev.action === 'download' && ev.username === 'usage1') {
        off();
        resolve();
      }
    });
  });
  const dl = await ta.inject('GET', '/api/v2/user/files?path=/f0.bin', { token });
  await downloaded;
  t.equal(dl.statusCode, 200);
  t.equal(dl.rawPayload.length, 5000);

  const today = new Date().toISOString().slice(0, 10);
  const r = await ta.inject('GET', '/api/v2/saas/usage?usernames=usage1,usage2', { token: viewer });
  t.equal(r.statusCode, 200, r.payload);
  const report = json(r);
  t.equal(report.to, today);
  t.equal(report.from, `${today.slice(0, 8)}01`, 'default: the current month');
  t.same(
    report.users.map((u: any) => u.username),
    ['usage1', 'usage2'],
  );
  const u1 = report.users[0];
  t.match(u1.storage, { used_size: 15000, used_files: 3, quota_size: 0, quota_files: 0 });
  t.same(u1.bandwidth, {
    upload_bytes: 15000,
    download_bytes: 5000,
    total_bytes: 20000,
    uploads: 3,
    downloads: 1,
    days: [{ day: today, upload_bytes: 15000, download_bytes: 5000, uploads: 3, downloads: 1 }],
  });
  t.match(u1.transfer_quota, { used_upload: Number, used_download: Number, upload_limit: 0, download_limit: 0, total_limit: 0 });
  t.same(report.users[1].bandwidth.days, []);

  // survives the process: the counters are in the database
  await ta.app.container.resolve(UsageService).flush();
  const rows = await ta.app.orm.em
    .fork()
    .getConnection()
    .execute('select username, day, upload_bytes, uploads from transfer_usage where username = ?', ['usage1']);
  t.same(
    rows.map((x: any) => [x.username, x.day, Number(x.upload_bytes), Number(x.uploads)]),
    [['usage1', today, 15000, 3]],
  );

  const past = await ta.inject('GET', '/api/v2/saas/usage?usernames=usage1&from=2020-01-01&to=2020-01-31', { token: viewer });
  t.same(json(past).users[0].bandwidth.days, [], 'another period: nothing');
  t.equal(json(past).users[0].storage.used_size, 15000, 'storage is the current usage');
  const page = await ta.inject('GET', '/api/v2/saas/usage?limit=1&offset=0', { token: viewer });
  t.equal(json(page).users.length, 1);

  const cases: [string, number, RegExp][] = [
    ['?from=2026-13-01', 400, /"from" must be a date as YYYY-MM-DD/],
    ['?from=yesterday', 400, /"from" must be a date as YYYY-MM-DD/],
    ['?from=2026-02-01&to=2026-01-01', 400, /"from" must not be after "to"/],
    ['?from=2020-01-01&to=2026-01-01', 400, /at most 366 days/],
    ['?usernames=a%2Fb', 400, /usernames/],
    ['?limit=0', 400, /"limit" must be greater than or equal to 1/],
  ];
  for (const [query, status, msg] of cases) {
    const bad = await ta.inject('GET', `/api/v2/saas/usage${query}`, { token: viewer });
    t.equal(bad.statusCode, status, `${query}: ${bad.payload}`);
    t.match(json(bad), { message: msg, error: 'Bad Request' }, query);
  }
  t.equal((await ta.inject('GET', '/api/v2/saas/usage', { token: plain })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/saas/usage')).statusCode, 401);
});

t.test('GET /saas/usage of a role admin lists the users of its role only', async (t) => {
  t.equal((await ta.inject('POST', '/api/v2/roles', { token: admin, payload: { name: 'team-u' } })).statusCode, 201);
  await addUser(ta, { username: 'in-role', role: 'team-u' } as never);
  await addUser(ta, { username: 'out-of-role' });
  const ra = await ta.inject('POST', '/api/v2/admins', {
    token: admin,
    payload: { username: 'lead-u', password: 'lead-u-pass-1', status: 1, permissions: ['view_users'], role: 'team-u', filters: { allow_list: [] } },
  });
  t.equal(ra.statusCode, 201, ra.payload);
  const lead = await ta.adminToken('lead-u', 'lead-u-pass-1');
  const all = await ta.inject('GET', '/api/v2/saas/usage', { token: lead });
  t.equal(all.statusCode, 200, all.payload);
  t.same(
    json(all).users.map((u: { username: string }) => u.username),
    ['in-role'],
  );
  const named = await ta.inject('GET', '/api/v2/saas/usage?usernames=out-of-role,in-role', { token: lead });
  t.same(
    json(named).users.map((u: { username: string }) => u.username),
    ['in-role'],
    'naming a user of another role shows nothing of it',
  );
});

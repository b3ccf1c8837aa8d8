import t from 'tap';
import crypto from 'node:crypto';
import Boom from '@hapi/boom';
import { accountsApp, FS_FIXTURE, user } from './accounts-helpers.js';
import { createTestApp, TEST_ADMIN, type TestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { IpBlockedEvent } from '../../src/events/event-types.js';
import { EventManager } from '../../src/event-manager/event-manager.js';
import { DefenderService, defenderHostId, defenderHostIp, defenderIpOfId } from '../../src/security/defender.service.js';
import { loadConfig } from '../../src/config/load.js';

const MINUTE = 60_000;
const ACTIONS = { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'defender' } };
const DEFENDER = {
  enabled: true,
  ban_time: 10,
  ban_time_increment: 50,
  threshold: 10,
  score_invalid: 3,
  score_valid: 2,
  score_limit_exceeded: 5,
  score_no_auth: 1,
  observation_time: 5,
  entries_soft_limit: 100,
  entries_hard_limit: 150,
};

const A = await accountsApp({ plugins: [FS_FIXTURE, ACTIONS], config: { defender: DEFENDER, event_manager: { rules_cache_ttl: 0 } } });
t.teardown(() => A.close());
const defender = A.app.container.resolve(DefenderService);
let now = Date.UTC(2030, 0, 1, 12, 0, 0);
defender.clock = () => now;
const blocked: IpBlockedEvent[] = [];
A.app.container.resolve<EventBus>(TOKENS.EventBus).on('ip-blocked', (e) => void blocked.push(e));
const mgr = A.app.container.resolve(EventManager);

interface Call {
  ip?: string;
  token?: string;
  basic?: { username: string; password: string };
  apiKey?: string;
  payload?: unknown;
}

/** A request from `ip` (default 127.0.0.1, which the tests never make fail) with A's admin token unless other credentials are given. */
async function call(app: TestApp & { token?: string }, method: string, url: string, o: Call = {}) {
  const headers: Record<string, string> = {};
  const token = o.token ?? (o.basic || o.apiKey ? '' : app.token);
  if (token) headers.authorization = `Bearer ${token}`;
  if (o.basic) headers.authorization = 'Basic ' + Buffer.from(`${o.basic.username}:${o.basic.password}`).toString('base64');
  if (o.apiKey) headers['x-service-api-key'] = o.apiKey;
  const r = await app.server.inject({ method, url, headers, payload: o.payload as never, remoteAddress: o.ip ?? '127.0.0.1' });
  const json = String(r.headers['content-type'] ?? '').startsWith('application/json');
  return { status: r.statusCode, body: json ? JSON.parse(r.payload) : r.payload };
}

const H = '/api/v2/defender/hosts';
const hostUrl = (ip: string) => `${H}/${defenderHostId(ip)}`;
const admin = TEST_ADMIN;
const badAdmin = { username: admin.username, password: 'wrong-password' };
const nobody = { username: 'nobody-here', password: 'whatever-1' };
const alice = { username: 'alice', password: 'alice-password' };
/** Lets hapi emit its response events, then waits for the scores they report. */
const settle = async () => {
  await new Promise((r) => setImmediate(r));
  await defender.idle();
};
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The host as GET /defender/hosts/{id} shows it (null on 404). */
async function host(ip: string) {
  const r = await call(A, 'GET', hostUrl(ip));
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`GET host ${ip}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; ip: string; score: number; ban_time?: string };
}

t.equal((await call(A, 'POST', '/api/v2/users', { payload: user('alice', { filters: { allow_api_key_auth: true } }) })).status, 201);

t.test('host ids, addresses and the config schema', async (t) => {
  t.equal(defenderHostId('192.168.1.10'), '3139322e3136382e312e3130');
  t.equal(defenderIpOfId('3139322e3136382e312e3130'), '192.168.1.10');
  t.equal(defenderIpOfId('3139322E3136382E312E3130'), '192.168.1.10', 'upper-case hex');
  t.equal(defenderHostIp('::ffff:10.1.2.3'), '10.1.2.3', 'IPv4-mapped IPv6 is the IPv4 host');
  t.equal(defenderHostIp('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  for (const bad of ['', 'zz', 'abc', '68656c6c6f' /* "hello" */, defenderHostId('10.0.0.0/8')]) t.equal(defenderIpOfId(bad), null, bad);

  const cfg = loadConfig({ env: {} }).config.defender;
  t.match(cfg, {
    enabled: false,
    ban_time: 30,
    ban_time_increment: 50,
    threshold: 15,
    score_invalid: 2,
    score_valid: 1,
    score_limit_exceeded: 3,
    score_no_auth: 0,
    observation_time: 30,
  });
  t.throws(() => loadConfig({ env: {}, overrides: { defender: { entries_soft_limit: 10, entries_hard_limit: 5 } } }), /entries_soft_limit/);
  t.throws(() => loadConfig({ env: {}, overrides: { defender: { threshold: 0 } } }), /defender\.threshold/);
});

t.test('failed logins score the host (unknown account more than a wrong password) until it is banned once', async (t) => {
  const ip = '10.0.0.1';
  t.equal((await call(A, 'GET', '/api/v2/token', { ip, basic: nobody })).status, 401);
  t.match(await host(ip), { id: defenderHostId(ip), ip, score: 3 }, 'unknown admin: score_invalid');
  t.notOk((await host(ip))!.ban_time, 'not banned: no ban_time');
  t.equal((await call(A, 'GET', '/api/v2/token', { ip, basic: badAdmin })).status, 401);
  t.match(await host(ip), { score: 5 }, 'wrong admin password: score_valid');
  t.equal((await call(A, 'GET', '/api/v2/user/token', { ip, basic: { ...alice, password: 'nope' } })).status, 401);
  t.match(await host(ip), { score: 7 }, 'wrong user password: score_valid');
  t.equal(blocked.length, 0);
  const r = await call(A, 'GET', '/api/v2/user/token', { ip, basic: { username: 'ghost', password: 'x' } });
  t.equal(r.status, 401, 'the request reaching the threshold still answers for itself');
  const h = (await host(ip))!;
  t.same(h, { id: defenderHostId(ip), ip, score: 0, ban_time: isoSeconds(now + 10 * MINUTE) }, 'banned for ban_time, events cleared');
  t.same(blocked, [{ timestamp: now * 1e6, ip, protocol: 'HTTP', instance_id: blocked[0]?.instance_id }], 'ip-blocked published once');
  t.ok(blocked[0]!.instance_id);
  const list = await call(A, 'GET', H);
  t.equal(list.status, 200);
  t.same(
    list.body.find((x: { ip: string }) => x.ip === ip),
    h,
  );

  // banned: 403 before authentication, valid credentials included, on every route
  for (const [method, url, o] of [
    ['GET', '/api/v2/token', { basic: admin }],
    ['GET', '/api/v2/user/token', { basic: alice }],
    ['GET', '/api/v2/users', {}],
    ['GET', '/healthz', { token: '' }],
  ] as const) {
    const res = await call(A, method, url, { ip, ...o });
    t.equal(res.status, 403, `${url} refused`);
    t.match(res.body, { message: `access denied: ${ip} is banned by the defender`, error: 'Forbidden' });
  }
  t.equal(
    (await host(ip))!.ban_time,
    isoSeconds(now + 10 * MINUTE + 4 * 5 * MINUTE),
    'each attempt extended the ban by ban_time_increment (50% of 10 minutes)',
  );
  t.equal((await call(A, 'GET', '/api/v2/token', { ip: '10.0.0.2', basic: admin })).status, 200, 'other hosts are not affected');
  t.equal((await call(A, 'GET', '/api/v2/token', { ip: '::ffff:10.0.0.1', basic: admin })).status, 403, 'the IPv4-mapped form is the same host');
  t.equal(blocked.length, 1, 'still one event');

  // the ban ends at ban_time; the host starts from zero and may be banned again (one more event)
  now += 60 * MINUTE;
  t.equal((await call(A, 'GET', '/api/v2/token', { ip, basic: admin })).status, 200, 'ban expired');
  t.equal(await host(ip), null, 'neither banned nor scored: 404');
  for (let i = 0; i < 4; i++) await call(A, 'GET', '/api/v2/token', { ip, basic: nobody });
  t.match(await host(ip), { score: 0, ban_time: isoSeconds(now + 10 * MINUTE) }, 'banned again');
  t.equal(blocked.length, 2);
  t.equal((await call(A, 'DELETE', hostUrl(ip))).status, 200);
});

t.test('scores add up only within observation_time', async (t) => {
  const ip = '10.0.0.3';
  for (let i = 0; i < 3; i++) await call(A, 'GET', '/api/v2/token', { ip, basic: nobody });
  t.match(await host(ip), { score: 9 });
  now += 6 * MINUTE;
  t.equal(await host(ip), null, 'old events expired');
  await call(A, 'GET', '/api/v2/token', { ip, basic: nobody });
  t.same(await host(ip), { id: defenderHostId(ip), ip, score: 3 }, 'a new window: not banned');
  t.equal((await call(A, 'GET', '/api/v2/token', { ip, basic: admin })).status, 200);
});

t.test('API keys, forged tokens, limits and credential-less token requests are scored', async (t) => {
  const ip = '10.0.0.4';
  t.equal((await call(A, 'GET', '/api/v2/users', { ip, apiKey: 'no-such-key.admin' })).status, 401);
  t.match(await host(ip), { score: 3 }, 'unknown API key: score_invalid');

  // a token signed with another key
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'admin', aud: 'admin', jti: 'x', uid: 1, exp: Math.floor(Date.now() / 1000) + 600 })}`;
  const forged = `${body}.${crypto.createHmac('sha256', 'not-the-key').update(body).digest('base64url')}`;
  t.equal((await call(A, 'GET', '/api/v2/users', { ip, token: forged })).status, 401);
  await settle();
  t.match(await host(ip), { score: 6 }, 'forged JWT: score_invalid, once per request');

  const ip2 = '10.0.0.5';
  A.server.route({ method: 'GET', path: '/test/defender/limit', options: { auth: false }, handler: () => Boom.tooManyRequests('slow down') });
  t.equal((await call(A, 'GET', '/test/defender/limit', { ip: ip2, token: '' })).status, 429);
  await settle();
  t.match(await host(ip2), { score: 5 }, '429: score_limit_exceeded');
  t.equal((await call(A, 'GET', '/api/v2/token', { ip: ip2, token: '' })).status, 401);
  await settle();
  t.match(await host(ip2), { score: 6 }, 'token request without credentials: score_no_auth');
  t.equal((await call(A, 'GET', '/api/v2/users', { ip: ip2, token: '' })).status, 401);
  await settle();
  t.match(await host(ip2), { score: 6 }, 'other routes without credentials are not scored');
  t.equal((await call(A, 'GET', '/api/v2/users', { ip: '10.0.0.6' })).status, 200, 'valid token');
  t.equal(await host('10.0.0.6'), null, 'successes are not scored');
});

t.test('the defender list: allow entries are never scored nor banned, deny entries stay refused', async (t) => {
  t.equal((await call(A, 'POST', '/api/v2/iplists/2', { payload: { ipornet: '10.0.1.0/24', mode: 1, description: 'office' } })).status, 201);
  const safe = '10.0.1.5';
  for (let i = 0; i < 6; i++) t.equal((await call(A, 'GET', '/api/v2/token', { ip: safe, basic: nobody })).status, 401);
  t.equal(await host(safe), null, 'never scored');
  t.equal((await call(A, 'GET', '/api/v2/token', { ip: safe, basic: admin })).status, 200);

  // a host banned before its network was allow-listed gets in at once
  const late = '10.0.2.7';
  for (let i = 0; i < 4; i++) await call(A, 'GET', '/api/v2/token', { ip: late, basic: nobody });
  t.equal((await call(A, 'GET', '/api/v2/token', { ip: late, basic: admin })).status, 403);
  t.equal((await call(A, 'POST', '/api/v2/iplists/2', { payload: { ipornet: '10.0.2.7', mode: 1 } })).status, 201);
  t.equal((await call(A, 'GET', '/api/v2/token', { ip: late, basic: admin })).status, 200, 'allow entry wins over a ban');

  t.equal((await call(A, 'POST', '/api/v2/iplists/2', { payload: { ipornet: '10.0.3.0/24', mode: 2 } })).status, 201);
  const denied = await call(A, 'GET', '/api/v2/token', { ip: '10.0.3.1', basic: admin });
  t.equal(denied.status, 403);
  t.match(denied.body.message, /10\.0\.3\.1 is banned/);
  t.equal(await host('10.0.3.1'), null, 'deny entries are the IP list, not defender hosts');
});

t.test('routes: permissions, roles, ids, unban', async (t) => {
  const ip = '2001:db8::7';
  for (let i = 0; i < 4; i++) await call(A, 'GET', '/api/v2/token', { ip, basic: nobody });
  t.match(await host(ip), { ip, score: 0 });
  t.equal(defenderHostId(ip), defenderHostId('2001:db8::7'));
  t.match(
    (await call(A, 'GET', `${H}/${defenderHostId('2001:DB8:0::7')}`)).body,
    { id: defenderHostId(ip), ip },
    'an id of any form of the address finds the host',
  );

  t.equal((await call(A, 'POST', '/api/v2/admins', { payload: { username: 'viewer', password: 'viewer-pw-1', permissions: ['view_defender'] } })).status, 201);
  t.equal(
    (await call(A, 'POST', '/api/v2/admins', { payload: { username: 'manager', password: 'manager-pw-1', permissions: ['manage_defender'] } })).status,
    201,
  );
  t.equal((await call(A, 'POST', '/api/v2/admins', { payload: { username: 'other', password: 'other-pw-1', permissions: ['view_users'] } })).status, 201);
  t.equal((await call(A, 'POST', '/api/v2/roles', { payload: { name: 'team' } })).status, 201);
  t.equal(
    (await call(A, 'POST', '/api/v2/admins', { payload: { username: 'teamroot', password: 'teamroot-pw-1', permissions: ['*'], role: 'team' } })).status,
    201,
  );
  const viewer = await A.adminToken('viewer', 'viewer-pw-1');
  const manager = await A.adminToken('manager', 'manager-pw-1');
  const other = await A.adminToken('other', 'other-pw-1');
  const teamroot = await A.adminToken('teamroot', 'teamroot-pw-1');

  for (const [method, url] of [
    ['GET', H],
    ['GET', hostUrl(ip)],
    ['DELETE', hostUrl(ip)],
  ] as const) {
    const r = await call(A, method, url, { token: '' });
    t.equal(r.status, 401, `${method} ${url} without credentials`);
    t.match(r.body, { error: 'Unauthorized' });
    t.equal((await call(A, method, url, { token: other })).status, 403, `${method} without the permission`);
    const role = await call(A, method, url, { token: teamroot });
    t.equal(role.status, 403, `${method}: admins with a role`);
    t.match(role.body.message, /server-wide/);
  }
  t.equal((await call(A, 'GET', H, { token: viewer })).status, 200);
  t.match((await call(A, 'GET', hostUrl(ip), { token: viewer })).body, { ip });
  t.equal((await call(A, 'DELETE', hostUrl(ip), { token: viewer })).status, 403, 'view_defender cannot unban');
  t.equal((await call(A, 'GET', H, { token: manager })).status, 403, 'manage_defender alone cannot list');

  for (const bad of ['zz', 'abc', '68656c6c6f', defenderHostId('10.0.0.0/8')]) {
    const r = await call(A, 'GET', `${H}/${bad}`);
    t.equal(r.status, 400, `malformed id ${bad}`);
    t.match(r.body, { message: /"id" must be the hex encoding of an IP address/, error: 'Bad Request' });
    t.equal((await call(A, 'DELETE', `${H}/${bad}`, { token: manager })).status, 400);
  }
  const unknown = await call(A, 'GET', hostUrl('192.0.2.99'));
  t.equal(unknown.status, 404);
  t.match(unknown.body, { message: /192\.0\.2\.99 is neither banned nor scored/, error: 'Not Found' });
  t.equal((await call(A, 'DELETE', hostUrl('192.0.2.99'), { token: manager })).status, 404);

  t.equal((await call(A, 'GET', '/api/v2/token', { ip, basic: admin })).status, 403);
  const del = await call(A, 'DELETE', hostUrl(ip), { token: manager });
  t.equal(del.status, 200);
  t.same(del.body, { message: 'host removed from the defender' });
  t.equal(await host(ip), null);
  t.equal((await call(A, 'GET', '/api/v2/token', { ip, basic: admin })).status, 200, 'unbanned');
  t.equal((await call(A, 'DELETE', hostUrl(ip), { token: manager })).status, 404, 'already removed');

  // a scored (not banned) host is removed with its score
  await call(A, 'GET', '/api/v2/token', { ip: '10.0.0.8', basic: nobody });
  t.equal((await call(A, 'DELETE', hostUrl('10.0.0.8'))).status, 200);
  t.equal(await host('10.0.0.8'), null, 'score cleared');
  const ips = ((await call(A, 'GET', H)).body as { ip: string }[]).map((h) => h.ip);
  t.same(ips, [...ips].sort(), 'listed by address');
});

t.test('a ban runs the rules of trigger 4', async (t) => {
  t.equal(
    (
      await call(A, 'POST', '/api/v2/eventactions', {
        payload: { name: 'on-ban', type: 101, options: { test_config: { message: '{{.Event}} {{.IP}} {{.Protocol}} {{.Name}}' } } },
      })
    ).status,
    201,
  );
  t.equal(
    (await call(A, 'POST', '/api/v2/eventrules', { payload: { name: 'banned-ip', trigger: 4, conditions: {}, actions: [{ name: 'on-ban' }] } })).status,
    201,
  );
  const LOG = ((globalThis as { __ferryActionLog?: { app: string; rule: string; trigger: number; options: { message: string } }[] }).__ferryActionLog ??= []);
  const ip = '10.0.0.9';
  for (let i = 0; i < 4; i++) await call(A, 'GET', '/api/v2/token', { ip, basic: nobody });
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    await mgr.idle();
  }
  const runs = LOG.filter((e) => e.app === 'defender' && e.rule === 'banned-ip');
  t.equal(runs.length, 1, 'the rule ran once');
  t.match(runs[0], { trigger: 4, options: { message: `IP Blocked ${ip} HTTP ${ip}` } });
});

t.test('entries limits and a disabled defender', async (t) => {
  const L = await createTestApp({ plugins: [], config: { defender: { ...DEFENDER, entries_soft_limit: 3, entries_hard_limit: 5 } } });
  t.teardown(() => L.close());
  const d = L.app.container.resolve(DefenderService);
  let clock = Date.UTC(2030, 0, 1);
  d.clock = () => clock;
  const token = await L.adminToken();
  const list = async () => ((await call(Object.assign(L, { token }), 'GET', H)).body as { ip: string; score: number; ban_time?: string }[]).map((h) => h.ip);
  for (let i = 0; i < 3; i++) t.notOk(await d.addEvent('10.9.0.1', 'invalid', 'HTTP'), 'not yet banned');
  t.ok(await d.addEvent('10.9.0.1', 'valid', 'HTTP'), 'this event banned the host');
  t.notOk(await d.addEvent('10.9.0.1', 'invalid', 'HTTP'), 'banned hosts are not scored');
  for (let i = 2; i <= 5; i++) {
    clock += 1000;
    await d.addEvent(`10.9.0.${i}`, 'valid', 'HTTP');
  }
  t.same(await list(), ['10.9.0.1', '10.9.0.2', '10.9.0.3', '10.9.0.4', '10.9.0.5'], 'at the hard limit');
  clock += 1000;
  await d.addEvent('10.9.0.6', 'valid', 'HTTP');
  t.same(await list(), ['10.9.0.1', '10.9.0.5', '10.9.0.6'], 'beyond it: down to the soft limit, the oldest scored hosts first, the banned kept');
  t.notOk(await d.addEvent('not-an-ip', 'invalid', 'HTTP'));
  t.notOk(await d.isBanned('not-an-ip', 'HTTP'));

  const D = await createTestApp({ plugins: [] });
  t.teardown(() => D.close());
  const dToken = await D.adminToken();
  for (let i = 0; i < 10; i++) t.equal((await call(D, 'GET', '/api/v2/token', { ip: '10.8.0.1', basic: nobody })).status, 401);
  t.equal((await call(D, 'GET', '/api/v2/token', { ip: '10.8.0.1', basic: admin })).status, 200, 'disabled: never banned');
  // clients of the API expect the list to be empty, not missing, while the defender is disabled
  const empty = await call(D, 'GET', H, { token: dToken });
  t.equal(empty.status, 200, `GET ${H} while disabled`);
  t.same(empty.body, [], 'an empty list');
  for (const [method, url] of [
    ['GET', hostUrl('10.8.0.1')],
    ['DELETE', hostUrl('10.8.0.1')],
  ] as const) {
    const r = await call(D, method, url, { token: dToken });
    t.equal(r.status, 404, `${method} ${url} while disabled`);
    t.match(r.body.message, /defender is not enabled/);
  }
});

import t from 'tap';
import path from 'node:path';
import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { User } from '../../src/data/entities/index.js';
import { AccountCache } from '../../src/accounts/account-cache.js';
import { createTestApp, type TestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import { totpNow } from '../helpers/rfc6238.js';

// Browser sessions of the REST API (POST/GET/DELETE /api/v2/user/web-session, cookie ferry_web,
// X-CSRF-Token), end to end through the server on the test database (SQLite or PostgreSQL).

const WS = '/api/v2/user/web-session';
type Obj = Record<string, any>;

const ta = await createTestApp({
  config: {
    mfa: { totp: [{ name: 'Default', issuer: 'Ferry', algo: 'sha1' }] },
    defender: { enabled: true, ban_time: 10, threshold: 6, score_invalid: 2, score_valid: 2, score_limit_exceeded: 2, score_no_auth: 0, observation_time: 5 },
    rate_limit: {
      // 3 logins per minute per host; the other scopes unlimited
      token: { global: { average: 0, period: 1000, burst: 0 }, per_host: { average: 3, period: 60_000, burst: 3, add_to_defender: false } },
    },
  },
});
t.teardown(() => ta.close());
const adminToken = await ta.adminToken();
const bus = ta.app.container.resolve<EventBus>(TOKENS.EventBus);

/** A new client address: the rate limit (3 logins a minute) and the defender count per host. */
let hosts = 0;
const freshIp = () => `10.200.${Math.floor(++hosts / 250)}.${(hosts % 250) + 1}`;

/** A request from `ip` (each part of the test its own address: the rate limit and the defender count per host). */
async function call(method: string, url: string, o: { ip?: string; payload?: unknown; headers?: Record<string, string>; app?: TestApp } = {}) {
  const r = await (o.app ?? ta).server.inject({ method, url, headers: o.headers ?? {}, payload: o.payload as never, remoteAddress: o.ip ?? '127.0.0.1' });
  const body = r.payload && String(r.headers['content-type'] ?? '').startsWith('application/json') ? (JSON.parse(r.payload) as Obj) : ({} as Obj);
  const setCookie = r.headers['set-cookie'];
  return { status: r.statusCode, body, headers: r.headers, cookie: Array.isArray(setCookie) ? setCookie[0] : setCookie };
}

async function createUser(username: string, filters: Obj = {}, app: TestApp = ta, token = adminToken) {
  const r = await app.inject('POST', '/api/v2/users', {
    token,
    payload: { username, password: `${username}-pass-1`, home_dir: path.join(app.dataDir, username), permissions: { '/': ['*'] }, filters },
  });
  if (r.statusCode !== 201) throw new Error(`create user: ${r.statusCode} ${r.payload}`);
}

interface Session {
  cookie: string;
  csrf: string;
  expiresAt: string;
  setCookie: string;
}
/** Logs in; the session's Cookie header value, its CSRF token and the raw Set-Cookie. */
async function login(username: string, o: { ip?: string; passcode?: string; app?: TestApp; password?: string } = {}): Promise<Session> {
  const r = await call('POST', WS, {
    ...o,
    ip: o.ip ?? freshIp(),
    payload: { username, password: o.password ?? `${username}-pass-1`, ...(o.passcode ? { passcode: o.passcode } : {}) },
  });
  if (r.status !== 200) throw new Error(`login: ${r.status} ${JSON.stringify(r.body)}`);
  return { cookie: r.cookie!.split(';')[0]!, csrf: r.body.csrf_token, expiresAt: r.body.expires_at, setCookie: r.cookie! };
}
/** A user bearer token, from an address of its own (the token route counts in the same rate limit). */
async function userToken(username: string): Promise<string> {
  const authorization = 'Basic ' + Buffer.from(`${username}:${username}-pass-1`).toString('base64');
  const r = await call('GET', '/api/v2/user/token', { ip: freshIp(), headers: { authorization } });
  if (r.status !== 200) throw new Error(`token: ${r.status}`);
  return r.body.access_token as string;
}
/** Sets a user's status through the admin API (the whole object put back, as clients do). */
async function setStatus(username: string, status: 0 | 1): Promise<void> {
  const current = JSON.parse((await ta.inject('GET', `/api/v2/users/${username}`, { token: adminToken })).payload) as Obj;
  const r = await ta.inject('PUT', `/api/v2/users/${username}`, { token: adminToken, payload: { ...current, status } });
  if (r.statusCode !== 200) throw new Error(`status: ${r.statusCode} ${r.payload}`);
}
const withCookie = (s: Session, csrf?: string) => ({ cookie: s.cookie, ...(csrf !== undefined ? { 'x-csrf-token': csrf } : {}) });

t.test('login: the cookie, its flags and the answer', async (t) => {
  await createUser('ws-alice');
  const events: Obj[] = [];
  t.teardown(
    bus.on('log', (e) => {
      events.push(e);
    }),
  );
  const r = await call('POST', WS, { ip: freshIp(), payload: { username: 'ws-alice', password: 'ws-alice-pass-1' } });
  t.equal(r.status, 200);
  t.match(r.body, { username: 'ws-alice', csrf_token: /^[0-9a-f]{64}$/, expires_at: String });
  t.ok(Date.parse(r.body.expires_at) > Date.now(), 'expires in the future');
  const parts = r.cookie!.split(/;\s*/);
  t.match(parts[0], /^ferry_web=[A-Za-z0-9_-]{43}$/, 'a random id of 256 bits');
  t.ok(parts.includes('HttpOnly'));
  t.ok(parts.includes('SameSite=Strict'));
  t.ok(parts.includes('Path=/'));
  t.ok(parts.includes('Max-Age=43200'), 'the default maximum lifetime');
  t.notOk(parts.includes('Secure'), 'no Secure flag over plain HTTP');
  t.equal(r.headers['cache-control'], 'no-store');
  t.notOk(JSON.stringify(r.body).includes(parts[0]!.split('=')[1]!), 'the session id is only in the cookie');
  t.match(events, [{ event: 5, protocol: 'HTTP', username: 'ws-alice' }], 'a login event of protocol HTTP');
  // the database keeps a hash of the id, not the id
  const rows = (await ta.app.orm.em.fork().getConnection().execute('select id_hash, username from web_sessions')) as Obj[];
  t.ok(rows.some((x) => x.username === 'ws-alice'));
  t.notOk(
    rows.some((x) => x.id_hash === parts[0]!.split('=')[1]),
    'the id itself is not stored',
  );
  const user = await ta.inject('GET', '/api/v2/users/ws-alice', { token: adminToken });
  t.ok(JSON.parse(user.payload).last_login > 0, 'last_login set');
});

t.test('login refusals follow the rules of /api/v2/user/token', async (t) => {
  await createUser('ws-bob');
  await createUser('ws-off');
  await setStatus('ws-off', 0);
  await createUser('ws-nohttp', { denied_protocols: ['HTTP'] });
  const events: Obj[] = [];
  t.teardown(
    bus.on('log', (e) => {
      events.push(e);
    }),
  );
  const wrong = await call('POST', WS, { ip: '10.1.0.1', payload: { username: 'ws-bob', password: 'nope' } });
  t.equal(wrong.status, 401);
  t.same(wrong.body, { message: 'invalid credentials', error: 'Unauthorized' });
  t.notOk(wrong.cookie, 'no cookie');
  const unknown = await call('POST', WS, { ip: '10.1.0.2', payload: { username: 'nobody-here', password: 'nope' } });
  t.equal(unknown.status, 401);
  t.same(unknown.body, wrong.body, 'an unknown user answers as a wrong password');
  t.match(
    events.map((e) => [e.event, e.username, e.protocol]),
    [
      [1, 'ws-bob', 'HTTP'],
      [2, 'nobody-here', 'HTTP'],
    ],
    'login events: 1 for a known user, 2 for an unknown one',
  );
  const off = await call('POST', WS, { ip: '10.1.0.3', payload: { username: 'ws-off', password: 'ws-off-pass-1' } });
  t.equal(off.status, 401);
  t.match(off.body, { error: 'Unauthorized', message: /disabled/ });
  t.notOk(off.cookie);
  const denied = await call('POST', WS, { ip: '10.1.0.4', payload: { username: 'ws-nohttp', password: 'ws-nohttp-pass-1' } });
  t.equal(denied.status, 403);
  t.match(denied.body, { error: 'Forbidden', message: /HTTP/ });
  t.notOk(denied.cookie);
  for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
    const form = await call('POST', WS, {
      ip: freshIp(),
      headers: { 'content-type': type },
      payload: type === 'text/plain' ? JSON.stringify({ username: 'ws-bob', password: 'ws-bob-pass-1' }) : 'username=ws-bob&password=ws-bob-pass-1',
    });
    t.equal(form.status, 415, `${type}: a cross-site form cannot log in`);
    t.notOk(form.cookie);
  }
  const bad = await call('POST', WS, { ip: '10.1.0.5', payload: { username: 'ws-bob' } });
  t.equal(bad.status, 400, 'a body without password');
  t.match(bad.body, { error: 'Bad Request', message: /password/ });
});

t.test('defender: wrong passwords ban the host, then even the right one is refused', async (t) => {
  const ip = '10.2.0.1';
  for (let i = 0; i < 3; i++) t.equal((await call('POST', WS, { ip, payload: { username: 'ws-bob', password: `wrong-${i}` } })).status, 401);
  const banned = await call('POST', WS, { ip, payload: { username: 'ws-bob', password: 'ws-bob-pass-1' } });
  t.equal(banned.status, 403, 'the host is banned');
  t.match(banned.body, { error: 'Forbidden' });
  t.notOk(banned.cookie);
  t.equal((await call('POST', WS, { ip: '10.2.0.2', payload: { username: 'ws-bob', password: 'ws-bob-pass-1' } })).status, 200, 'another host logs in');
});

t.test('rate limit: the login shares the token scope; GET of the session does not count', async (t) => {
  const ip = '10.3.0.1';
  const s = await login('ws-bob', { ip });
  for (let i = 0; i < 5; i++) t.equal((await call('GET', WS, { ip, headers: withCookie(s) })).status, 200, 'GET is an API request');
  t.equal(
    (await call('GET', '/api/v2/user/token', { ip, headers: { authorization: 'Basic ' + Buffer.from('ws-bob:ws-bob-pass-1').toString('base64') } })).status,
    200,
  );
  t.equal((await call('POST', WS, { ip, payload: { username: 'ws-bob', password: 'ws-bob-pass-1' } })).status, 200, 'the third login');
  const limited = await call('POST', WS, { ip, payload: { username: 'ws-bob', password: 'ws-bob-pass-1' } });
  t.equal(limited.status, 429);
  t.ok(limited.headers['retry-after'], 'Retry-After');
  t.notOk(limited.cookie);
});

t.test('two-factor: code required, code accepted, recovery code accepted once', async (t) => {
  await createUser('ws-carol');
  const token = await userToken('ws-carol');
  const g = await ta.inject('POST', '/api/v2/user/totp/generate', { token, payload: { config_name: 'Default' } });
  const secret = JSON.parse(g.payload).secret as string;
  const save = await ta.inject('POST', '/api/v2/user/totp/save', {
    token,
    payload: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: secret }, protocols: ['HTTP'] },
  });
  t.equal(save.statusCode, 200, save.payload);
  const rc = await ta.inject('GET', '/api/v2/user/2fa/recoverycodes', { token });
  const recovery = (JSON.parse(rc.payload) as { secret: { payload: string } }[])[0]!.secret.payload;

  const need = await call('POST', WS, { ip: '10.4.0.1', payload: { username: 'ws-carol', password: 'ws-carol-pass-1' } });
  t.equal(need.status, 401);
  t.match(need.body, { two_factor_required: true, error: 'Unauthorized', message: /passcode/ });
  t.notOk(need.cookie);
  const wrongPass = await call('POST', WS, { ip: '10.4.0.2', payload: { username: 'ws-carol', password: 'nope' } });
  t.equal(wrongPass.status, 401);
  t.notOk(wrongPass.body.two_factor_required, 'a wrong password does not say that 2FA applies');
  const wrongCode = await call('POST', WS, {
    ip: '10.4.0.3',
    payload: { username: 'ws-carol', password: 'ws-carol-pass-1', passcode: '000000' === totpNow(secret) ? '111111' : '000000' },
  });
  t.equal(wrongCode.status, 401);
  t.notOk(wrongCode.cookie);
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 3000) await new Promise((r) => setTimeout(r, left + 100));
  const s = await login('ws-carol', { ip: '10.4.0.4', passcode: totpNow(secret) });
  t.match(s.csrf, /^[0-9a-f]{64}$/, 'a TOTP code opens the session');
  t.equal((await call('GET', '/api/v2/user/dirs', { ip: '10.4.0.4', headers: withCookie(s) })).status, 200);
  const r = await login('ws-carol', { ip: '10.4.0.5', passcode: recovery.toLowerCase() });
  t.ok(r.cookie, 'a recovery code opens it too');
  const again = await call('POST', WS, { ip: '10.4.0.6', payload: { username: 'ws-carol', password: 'ws-carol-pass-1', passcode: recovery } });
  t.equal(again.status, 401, 'a recovery code works once');
});

t.test('the cookie authenticates the user routes; CSRF guards the changes', async (t) => {
  await createUser('ws-dave');
  const s = await login('ws-dave');
  const list = await call('GET', '/api/v2/user/dirs?path=/', { headers: withCookie(s) });
  t.equal(list.status, 200);
  t.same(list.body, []);
  t.equal((await call('GET', '/api/v2/user/profile', { headers: withCookie(s) })).status, 200, 'the profile too (bearer or cookie)');
  t.equal((await call('GET', '/api/v2/user/shares', { headers: withCookie(s) })).status, 200);
  t.equal((await call('GET', '/api/v2/users', { headers: withCookie(s) })).status, 401, 'not an admin route');

  const noCsrf = await call('POST', '/api/v2/user/dirs?path=/made', { headers: withCookie(s) });
  t.equal(noCsrf.status, 403);
  t.match(noCsrf.body, { error: 'Forbidden', message: /^missing or wrong X-CSRF-Token/ });
  const wrongCsrf = await call('POST', '/api/v2/user/dirs?path=/made', {
    headers: withCookie(
      s,
      s.csrf.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
    ),
  });
  t.equal(wrongCsrf.status, 403);
  const other = await login('ws-dave');
  t.equal((await call('POST', '/api/v2/user/dirs?path=/made', { headers: withCookie(s, other.csrf) })).status, 403, "another session's token");
  t.same((await call('GET', '/api/v2/user/dirs?path=/', { headers: withCookie(s) })).body, [], 'nothing was made');
  const profile = await call('PUT', '/api/v2/user/profile', { headers: withCookie(s), payload: { description: 'changed' } });
  t.equal(profile.status, 403, 'a profile change needs it too');
  t.equal((await call('GET', '/api/v2/user/profile', { headers: withCookie(s) })).body.description ?? '', '', 'the profile unchanged');

  const foreign = await call('GET', '/api/v2/user/dirs?path=/', { headers: { cookie: `prefs={"a": 1}; ${s.cookie}; other=x y` } });
  t.equal(foreign.status, 200, "another application's cookies that are no valid cookie values are skipped");
  const made = await call('POST', '/api/v2/user/dirs?path=/made', { headers: withCookie(s, s.csrf) });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.match((await call('GET', '/api/v2/user/dirs?path=/', { headers: withCookie(s) })).body, [{ name: 'made' }]);
});

t.test('bearer and API key requests are unaffected; an unknown cookie is refused', async (t) => {
  await createUser('ws-erin', { allow_api_key_auth: true });
  const token = await userToken('ws-erin');
  t.equal((await call('POST', '/api/v2/user/dirs?path=/b', { headers: { authorization: `Bearer ${token}` } })).status, 201, 'bearer: no CSRF token asked');
  const s = await login('ws-erin');
  const both = await call('POST', '/api/v2/user/dirs?path=/c', { headers: { authorization: `Bearer ${token}`, cookie: s.cookie } });
  t.equal(both.status, 201, 'a bearer token wins over a cookie');
  const key = await ta.inject('POST', '/api/v2/apikeys', { token: adminToken, payload: { name: 'k', scope: 2, user: 'ws-erin' } });
  t.equal(key.statusCode, 201, key.payload);
  const apiKey = JSON.parse(key.payload).key as string;
  t.equal((await call('POST', '/api/v2/user/dirs?path=/d', { headers: { 'x-service-api-key': apiKey } })).status, 201, 'API key: no CSRF token asked');
  const forged = await call('GET', '/api/v2/user/dirs', { headers: { cookie: 'ferry_web=' + 'A'.repeat(43) } });
  t.equal(forged.status, 401);
  t.match(forged.body, { error: 'Unauthorized', message: /web session has ended/ });
  t.match(String(forged.headers['set-cookie']), /ferry_web=; Max-Age=0/, 'the cookie cleared');
  t.equal((await call('GET', WS, { headers: { authorization: `Bearer ${token}` } })).status, 401, 'GET web-session is for the cookie');
});

t.test('GET tells the CSRF token and refreshes; DELETE revokes, a replayed cookie is refused', async (t) => {
  await createUser('ws-fay');
  const s = await login('ws-fay');
  const g = await call('GET', WS, { headers: withCookie(s) });
  t.equal(g.status, 200);
  t.same(g.body, { username: 'ws-fay', csrf_token: s.csrf, expires_at: g.body.expires_at, password_change_required: false, start_directory: '/' });
  t.ok(Date.parse(g.body.expires_at) >= Date.parse(s.expiresAt), 'not earlier');
  const noCsrf = await call('DELETE', WS, { headers: withCookie(s) });
  t.equal(noCsrf.status, 403, 'logout needs the CSRF token (no forced logout)');
  const out = await call('DELETE', WS, { headers: withCookie(s, s.csrf) });
  t.equal(out.status, 200);
  t.same(out.body, { message: 'logged out' });
  t.match(out.cookie, /^ferry_web=; Max-Age=0; Path=\/; HttpOnly; SameSite=Strict/);
  const replay = await call('GET', '/api/v2/user/dirs', { headers: withCookie(s) });
  t.equal(replay.status, 401, 'the cookie replayed after logout');
  t.equal((await call('GET', WS, { headers: withCookie(s) })).status, 401);
});

t.test('a password change, a disabled or deleted account end the sessions', async (t) => {
  await createUser('ws-gus');
  const a = await login('ws-gus');
  const b = await login('ws-gus');
  const change = await call('PUT', '/api/v2/user/changepwd', {
    headers: withCookie(a, a.csrf),
    payload: { current_password: 'ws-gus-pass-1', new_password: 'ws-gus-pass-2-Longer' },
  });
  t.equal(change.status, 200, JSON.stringify(change.body));
  t.equal((await call('GET', WS, { headers: withCookie(a) })).status, 401, 'the session that changed it ended too');
  t.equal((await call('GET', WS, { headers: withCookie(b) })).status, 401, 'every session of the user ended');
  const c = await login('ws-gus', { password: 'ws-gus-pass-2-Longer' });
  t.equal((await call('GET', WS, { headers: withCookie(c) })).status, 200, 'a new login works');
  await setStatus('ws-gus', 0);
  t.equal((await call('GET', WS, { headers: withCookie(c) })).status, 401, 'disabled: ended');
  await setStatus('ws-gus', 1);
  t.equal((await call('GET', WS, { headers: withCookie(c) })).status, 401, 're-enabled: the session stays ended');
  const d = await login('ws-gus', { password: 'ws-gus-pass-2-Longer' });
  t.equal((await ta.inject('DELETE', '/api/v2/users/ws-gus', { token: adminToken })).statusCode, 200);
  await createUser('ws-gus');
  t.equal((await call('GET', WS, { headers: withCookie(d) })).status, 401, 'deleted (and re-created): ended');
});

t.test('the OpenAPI document lists the routes and the cookie scheme', async (t) => {
  const r = await call('GET', '/openapi.json');
  t.equal(r.status, 200);
  const item = r.body.paths[WS];
  t.ok(item?.post && item.get && item.delete, 'POST, GET and DELETE');
  t.same(item.post.security, [], 'the login needs no credentials');
  t.same(item.get.security, [{ WebSessionCookie: [] }]);
  t.match(item.post.responses['200'].content['application/json'].schema, { properties: { csrf_token: {}, expires_at: {}, username: {} } });
  t.same(r.body.components.securitySchemes.WebSessionCookie, { type: 'apiKey', in: 'cookie', name: 'ferry_web' });
  t.same(r.body.paths['/api/v2/user/dirs'].get.security, [{ BearerAuth: [] }, { APIKeyAuth: [] }, { WebSessionCookie: [] }]);
  t.same(r.body.paths['/api/v2/user/profile'].get.security, [{ BearerAuth: [] }, { WebSessionCookie: [] }]);
});

t.test('idle timeout, refresh and maximum lifetime (small config values)', async (t) => {
  const short = await createTestApp({ config: { httpd: { web_session: { idle_timeout: 2, max_lifetime: 4 } } } });
  t.teardown(() => short.close());
  const token = await short.adminToken();
  await createUser('ws-hal', {}, short, token);
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const s = await login('ws-hal', { app: short });
  t.match(s.setCookie, /Max-Age=4;/, 'Max-Age is the maximum lifetime');
  // used every second: the idle timeout (2 s) slides, the session lives on
  let last = Date.parse(s.expiresAt);
  await wait(1100);
  const g = await call('GET', WS, { app: short, headers: withCookie(s) });
  t.equal(g.status, 200);
  t.ok(Date.parse(g.body.expires_at) > last, 'GET slid the expiry');
  last = Date.parse(g.body.expires_at);
  await wait(1100);
  const g2 = await call('GET', WS, { app: short, headers: withCookie(s) });
  t.equal(g2.status, 200, 'alive after more than the idle timeout since the login, used meanwhile');
  t.ok(Date.parse(g2.body.expires_at) <= Date.parse(s.expiresAt) + 2000 + 100, 'never past the absolute end');
  // until the absolute end (4 s after the login) whatever the use
  while (Date.now() < Date.parse(s.expiresAt) - 2000 + 4000 + 50) {
    await wait(700);
    const r = await call('GET', WS, { app: short, headers: withCookie(s) });
    if (r.status !== 200) break;
  }
  t.equal((await call('GET', WS, { app: short, headers: withCookie(s) })).status, 401, 'past the maximum lifetime: ended');
  // unused for longer than the idle timeout
  const idle = await login('ws-hal', { app: short });
  await wait(2300);
  const r = await call('GET', '/api/v2/user/dirs', { app: short, headers: withCookie(idle) });
  t.equal(r.status, 401, 'idle too long: ended');
  t.match(r.body, { message: /web session has ended/ });
});

t.test('password_change_required: an expired or admin-required password is told, the session works', async (t) => {
  await createUser('ws-ida', { require_password_change: true });
  const r = await call('POST', WS, { ip: freshIp(), payload: { username: 'ws-ida', password: 'ws-ida-pass-1' } });
  t.equal(r.status, 200, 'the login succeeds, as GET /api/v2/user/token does');
  t.equal(r.body.password_change_required, true);
  const s = { cookie: r.cookie!.split(';')[0]!, csrf: r.body.csrf_token } as Session;
  t.equal((await call('GET', WS, { headers: withCookie(s) })).body.password_change_required, true, 'GET tells it too');
  const change = await call('PUT', '/api/v2/user/changepwd', {
    headers: withCookie(s, s.csrf),
    payload: { current_password: 'ws-ida-pass-1', new_password: 'ws-ida-pass-2-Longer' },
  });
  t.equal(change.status, 200);
  const after = await call('POST', WS, { ip: freshIp(), payload: { username: 'ws-ida', password: 'ws-ida-pass-2-Longer' } });
  t.equal(after.body.password_change_required, false, 'changed: no longer required');

  await createUser('ws-jon', { password_expiration: 30 });
  t.equal((await call('POST', WS, { ip: freshIp(), payload: { username: 'ws-jon', password: 'ws-jon-pass-1' } })).body.password_change_required, false);
  await ta.app.orm.em.fork().nativeUpdate(User, { username: 'ws-jon' }, { last_password_change: Date.now() - 31 * 86_400_000 });
  ta.app.container.resolve(AccountCache).changed({ type: 'user', name: 'ws-jon' });
  const expired = await call('POST', WS, { ip: freshIp(), payload: { username: 'ws-jon', password: 'ws-jon-pass-1' } });
  t.equal(expired.status, 200);
  t.equal(expired.body.password_change_required, true, '31 days after the last change, with password_expiration 30');
});

t.test('over TLS the cookie is Secure (a real HTTPS request)', async (t) => {
  const dir = t.testdir({});
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'k.pem',
      '-out',
      'c.pem',
      '-days',
      '2',
      '-subj',
      '/CN=ws.ferry.test',
    ],
    { cwd: dir, stdio: 'ignore' },
  );
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const tls = await createTestApp({
    config: {
      httpd: {
        bindings: [
          {
            address: '127.0.0.1',
            port: 0,
            enable_https: true,
            certificate_file: path.relative(root, path.join(dir, 'c.pem')),
            certificate_key_file: path.relative(root, path.join(dir, 'k.pem')),
          },
        ],
      },
    },
  });
  t.teardown(() => tls.close());
  await createUser('ws-kim', {}, tls, await tls.adminToken());
  await tls.app.start();
  const port = tls.server.info.port as number;
  const request = (method: string, urlPath: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port, method, path: urlPath, headers, rejectUnauthorized: false, agent: false }, (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: data }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const r = await request('POST', WS, { 'content-type': 'application/json' }, JSON.stringify({ username: 'ws-kim', password: 'ws-kim-pass-1' }));
  t.equal(r.status, 200, r.body);
  const cookie = String((r.headers['set-cookie'] as string[])[0]);
  t.match(cookie, /; Secure$/, 'Secure');
  t.match(cookie, /HttpOnly; SameSite=Strict/);
  const csrf = (JSON.parse(r.body) as Obj).csrf_token as string;
  const made = await request('POST', '/api/v2/user/dirs?path=/over-tls', { cookie: cookie.split(';')[0]!, 'x-csrf-token': csrf });
  t.equal(made.status, 201, 'the cookie and the CSRF token work over a real connection');
});

import t from 'tap';
import path from 'node:path';
import { createTestApp, TEST_ADMIN } from '../../src/testing.js';
import { totpNow } from '../helpers/rfc6238.js';

// The web admin's browser sessions (POST/GET/DELETE /api/v2/admin/web-session, cookie ferry_admin,
// X-CSRF-Token), accepted by the admin routes with the admin's permissions, end to end on the test
// database (SQLite or PostgreSQL).

const WS = '/api/v2/admin/web-session';
type Obj = Record<string, any>;

const ta = await createTestApp({
  config: {
    mfa: { totp: [{ name: 'Default', issuer: 'Ferry', algo: 'sha1' }] },
    defender: { enabled: true, ban_time: 10, threshold: 6, score_invalid: 2, score_valid: 2, score_limit_exceeded: 2, score_no_auth: 0, observation_time: 5 },
    rate_limit: {
      token: { global: { average: 0, period: 1000, burst: 0 }, per_host: { average: 3, period: 60_000, burst: 3, add_to_defender: false } },
    },
  },
});
t.teardown(() => ta.close());
const adminToken = await ta.adminToken();

let hosts = 0;
/** A new client address: the login rate limit (3 a minute) counts per host. */
const freshIp = () => `10.201.${Math.floor(++hosts / 250)}.${(hosts % 250) + 1}`;

async function call(method: string, url: string, o: { ip?: string; payload?: unknown; headers?: Record<string, string> } = {}) {
  const r = await ta.server.inject({ method, url, headers: o.headers ?? {}, payload: o.payload as never, remoteAddress: o.ip ?? '127.0.0.1' });
  const body = r.payload && String(r.headers['content-type'] ?? '').startsWith('application/json') ? (JSON.parse(r.payload) as Obj) : ({} as Obj);
  const setCookie = r.headers['set-cookie'];
  return { status: r.statusCode, body, cookie: Array.isArray(setCookie) ? setCookie[0] : setCookie };
}

interface Session {
  cookie: string;
  csrf: string;
  body: Obj;
  setCookie: string;
}
async function login(username: string, password: string, passcode?: string): Promise<Session> {
  const r = await call('POST', WS, { ip: freshIp(), payload: { username, password, ...(passcode ? { passcode } : {}) } });
  if (r.status !== 200) throw new Error(`login: ${r.status} ${JSON.stringify(r.body)}`);
  return { cookie: r.cookie!.split(';')[0]!, csrf: r.body.csrf_token, body: r.body, setCookie: r.cookie! };
}
const withCookie = (s: Session, csrf?: string) => ({ cookie: s.cookie, ...(csrf !== undefined ? { 'x-csrf-token': csrf } : {}) });

async function createAdmin(username: string, permissions: string[]) {
  const r = await ta.inject('POST', '/api/v2/admins', { token: adminToken, payload: { username, password: `${username}-pass-1`, permissions } });
  if (r.statusCode !== 201) throw new Error(`create admin: ${r.statusCode} ${r.payload}`);
}

t.test("login with a password: the cookie ferry_admin, its flags, the admin's permissions", async (t) => {
  const r = await call('POST', WS, { ip: freshIp(), payload: { username: TEST_ADMIN.username, password: TEST_ADMIN.password } });
  t.equal(r.status, 200);
  t.match(r.body, {
    username: TEST_ADMIN.username,
    csrf_token: /^[0-9a-f]{64}$/,
    expires_at: String,
    permissions: ['*'],
    role: '',
    password_change_required: false,
  });
  const parts = r.cookie!.split(/;\s*/);
  t.match(parts[0], /^ferry_admin=[A-Za-z0-9_-]{43}$/);
  for (const flag of ['HttpOnly', 'SameSite=Strict', 'Path=/']) t.ok(parts.includes(flag), flag);
  t.notOk(parts.includes('Secure'), 'no Secure flag over plain HTTP');
  const s = { cookie: parts[0]! };
  t.equal((await call('GET', '/api/v2/status', { headers: s })).status, 200, 'an admin route accepts the cookie');
  t.equal((await call('GET', '/api/v2/users', { headers: s })).status, 200);
  const refreshed = await call('GET', WS, { headers: s });
  t.equal(refreshed.status, 200);
  t.equal(refreshed.body.csrf_token, r.body.csrf_token, 'GET tells the same CSRF token');
  t.same(refreshed.body.permissions, ['*']);
  // an admin's session is no user's session, and the other way round
  const asUser = await call('GET', '/api/v2/user/dirs', { headers: { cookie: `ferry_web=${parts[0]!.split('=')[1]}` } });
  t.equal(asUser.status, 401, "the admin's id in the user cookie lets nobody in");
  t.equal((await call('GET', '/api/v2/user/dirs', { headers: s })).status, 401, 'the admin cookie is no user credential');
  const rows = (await ta.app.orm.em.fork().getConnection().execute(`select kind from web_sessions where username = '${TEST_ADMIN.username}'`)) as Obj[];
  t.ok(rows.length > 0 && rows.every((x) => x.kind === 'admin'), 'stored as an admin session');
});

t.test('a wrong password or an unknown admin opens nothing', async (t) => {
  const wrong = await call('POST', WS, { ip: freshIp(), payload: { username: TEST_ADMIN.username, password: 'nope' } });
  t.equal(wrong.status, 401);
  t.match(wrong.body, { message: 'invalid credentials', error: 'Unauthorized' });
  t.notOk(wrong.cookie);
  const user = await ta.inject('POST', '/api/v2/users', {
    token: adminToken,
    payload: { username: 'aws-user', password: 'aws-user-pass-1', home_dir: path.join(ta.dataDir, 'aws-user'), permissions: { '/': ['*'] } },
  });
  t.equal(user.statusCode, 201);
  const asUser = await call('POST', WS, { ip: freshIp(), payload: { username: 'aws-user', password: 'aws-user-pass-1' } });
  t.equal(asUser.status, 401, "a user's credentials open no admin session");
  t.equal((await call('POST', WS, { ip: freshIp(), payload: { username: TEST_ADMIN.username } })).status, 400, 'no password: 400');
});

t.test('state-changing requests need the CSRF token', async (t) => {
  const s = await login(TEST_ADMIN.username, TEST_ADMIN.password);
  const payload = { username: 'aws-csrf', password: 'aws-csrf-pass-1', home_dir: path.join(ta.dataDir, 'aws-csrf'), permissions: { '/': ['*'] } };
  const none = await call('POST', '/api/v2/users', { headers: withCookie(s), payload });
  t.equal(none.status, 403);
  t.match(none.body.message, /X-CSRF-Token/);
  t.equal((await call('POST', '/api/v2/users', { headers: withCookie(s, 'f'.repeat(64)), payload })).status, 403, 'a wrong token');
  t.equal((await ta.inject('GET', '/api/v2/users/aws-csrf', { token: adminToken })).statusCode, 404, 'nothing was created');
  const ok = await call('POST', '/api/v2/users', { headers: withCookie(s, s.csrf), payload });
  t.equal(ok.status, 201, JSON.stringify(ok.body));
});

t.test("an admin's permissions apply to the cookie as to its tokens", async (t) => {
  await createAdmin('aws-viewer', ['view_status']);
  const s = await login('aws-viewer', 'aws-viewer-pass-1');
  t.same(s.body.permissions, ['view_status']);
  t.equal((await call('GET', '/api/v2/status', { headers: withCookie(s) })).status, 200);
  const users = await call('GET', '/api/v2/users', { headers: withCookie(s) });
  t.equal(users.status, 403);
  t.match(users.body, { error: 'Forbidden' });
  const token = await ta.adminToken('aws-viewer', 'aws-viewer-pass-1');
  t.equal((await ta.inject('GET', '/api/v2/users', { token })).statusCode, 403, 'as with its token');
  t.equal((await call('GET', WS, { headers: withCookie(s) })).status, 200, 'any admin may read its session');
});

t.test('two-factor: the passcode step', async (t) => {
  await createAdmin('aws-mfa', ['*']);
  const token = await ta.adminToken('aws-mfa', 'aws-mfa-pass-1');
  const g = await ta.inject('POST', '/api/v2/admin/totp/generate', { token, payload: { config_name: 'Default' } });
  const secret = JSON.parse(g.payload).secret as string;
  const save = await ta.inject('POST', '/api/v2/admin/totp/save', {
    token,
    payload: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: secret } },
  });
  t.equal(save.statusCode, 200, save.payload);
  const need = await call('POST', WS, { ip: freshIp(), payload: { username: 'aws-mfa', password: 'aws-mfa-pass-1' } });
  t.equal(need.status, 401);
  t.match(need.body, { two_factor_required: true, message: /passcode/ });
  t.notOk(need.cookie);
  const wrong = await call('POST', WS, {
    ip: freshIp(),
    payload: { username: 'aws-mfa', password: 'aws-mfa-pass-1', passcode: totpNow(secret) === '000000' ? '111111' : '000000' },
  });
  t.equal(wrong.status, 401);
  t.notOk(wrong.cookie);
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 3000) await new Promise((r) => setTimeout(r, left + 100));
  const s = await login('aws-mfa', 'aws-mfa-pass-1', totpNow(secret));
  t.equal((await call('GET', '/api/v2/users', { headers: withCookie(s) })).status, 200, 'the passcode opens the session');
});

t.test('two-factor settings through the cookie (CSRF for the changes), as with a bearer token', async (t) => {
  await createAdmin('aws-2fa', ['*']);
  const s = await login('aws-2fa', 'aws-2fa-pass-1');
  const configs = await call('GET', '/api/v2/admin/totp/configs', { headers: withCookie(s) });
  t.equal(configs.status, 200);
  t.match(configs.body, [{ name: 'Default' }]);
  const payload = { config_name: 'Default' };
  t.equal((await call('POST', '/api/v2/admin/totp/generate', { headers: withCookie(s), payload })).status, 403, 'no CSRF token: refused');
  const g = await call('POST', '/api/v2/admin/totp/generate', { headers: withCookie(s, s.csrf), payload });
  t.equal(g.status, 200);
  const secret = g.body.secret as string;
  const save = { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: secret } };
  t.equal((await call('POST', '/api/v2/admin/totp/save', { headers: withCookie(s), payload: save })).status, 403, 'no CSRF token: not saved');
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 3000) await new Promise((r) => setTimeout(r, left + 100));
  const check = await call('POST', '/api/v2/admin/totp/validate', {
    headers: withCookie(s, s.csrf),
    payload: { config_name: 'Default', passcode: totpNow(secret), secret },
  });
  t.equal(check.status, 200, JSON.stringify(check.body));
  const saved = await call('POST', '/api/v2/admin/totp/save', { headers: withCookie(s, s.csrf), payload: save });
  t.equal(saved.status, 200, JSON.stringify(saved.body));
  const codes = await call('GET', '/api/v2/admin/2fa/recoverycodes', { headers: withCookie(s) });
  t.equal(codes.status, 200);
  t.ok(Array.isArray(codes.body) && codes.body.length > 0, 'the recovery codes');
  t.equal((await call('POST', '/api/v2/admin/2fa/recoverycodes', { headers: withCookie(s) })).status, 403, 'regenerate without CSRF: refused');
  const fresh = await call('POST', '/api/v2/admin/2fa/recoverycodes', { headers: withCookie(s, s.csrf) });
  t.equal(fresh.status, 200);
  t.ok(Array.isArray(fresh.body) && typeof fresh.body[0] === 'string', 'new codes');
  const need = await call('POST', WS, { ip: freshIp(), payload: { username: 'aws-2fa', password: 'aws-2fa-pass-1' } });
  t.match(need.body, { two_factor_required: true }, 'the next login asks for the code');
  const s2 = await login('aws-2fa', 'aws-2fa-pass-1', fresh.body[0] as string);
  t.equal((await call('GET', '/api/v2/status', { headers: withCookie(s2) })).status, 200, 'a recovery code opens a session');
  const off = await call('POST', '/api/v2/admin/totp/save', { headers: withCookie(s, s.csrf), payload: { enabled: false } });
  t.equal(off.status, 200, JSON.stringify(off.body));
  t.equal((await call('GET', '/api/v2/admin/2fa/recoverycodes', { headers: { cookie: 'ferry_admin=x' } })).status, 401, 'an unknown cookie: 401');
});

t.test('logout revokes the session; a disabled admin is let in no more', async (t) => {
  await createAdmin('aws-out', ['*']);
  const s = await login('aws-out', 'aws-out-pass-1');
  t.equal((await call('DELETE', WS, { headers: withCookie(s) })).status, 403, 'logout without the CSRF token is refused');
  const out = await call('DELETE', WS, { headers: withCookie(s, s.csrf) });
  t.equal(out.status, 200);
  t.match(out.cookie, /^ferry_admin=; Max-Age=0/);
  const after = await call('GET', '/api/v2/status', { headers: withCookie(s) });
  t.equal(after.status, 401, 'the cookie no longer works');
  t.match(after.cookie, /^ferry_admin=; Max-Age=0/, 'and is cleared');

  const s2 = await login('aws-out', 'aws-out-pass-1');
  const current = JSON.parse((await ta.inject('GET', '/api/v2/admins/aws-out', { token: adminToken })).payload) as Obj;
  t.equal((await ta.inject('PUT', '/api/v2/admins/aws-out', { token: adminToken, payload: { ...current, status: 0 } })).statusCode, 200);
  t.equal((await call('GET', '/api/v2/status', { headers: withCookie(s2) })).status, 401, 'disabled: the session ends');
});

t.test('defender: wrong passwords ban the host, then even the right one is refused', async (t) => {
  const ip = freshIp();
  for (let i = 0; i < 3; i++) t.equal((await call('POST', WS, { ip, payload: { username: TEST_ADMIN.username, password: `wrong-${i}` } })).status, 401);
  const banned = await call('POST', WS, { ip, payload: { username: TEST_ADMIN.username, password: TEST_ADMIN.password } });
  t.equal(banned.status, 403, 'the host is banned');
  t.notOk(banned.cookie);
  t.equal(
    (await call('POST', WS, { ip: freshIp(), payload: { username: TEST_ADMIN.username, password: TEST_ADMIN.password } })).status,
    200,
    'another host logs in',
  );
});

t.test('the logins count in the token rate limit', async (t) => {
  const ip = freshIp();
  for (let i = 0; i < 3; i++) t.equal((await call('POST', WS, { ip, payload: { username: TEST_ADMIN.username, password: TEST_ADMIN.password } })).status, 200);
  const limited = await call('POST', WS, { ip, payload: { username: TEST_ADMIN.username, password: TEST_ADMIN.password } });
  t.equal(limited.status, 429);
  t.notOk(limited.cookie);
});

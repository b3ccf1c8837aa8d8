import t from 'tap';
import { createTestApp, TEST_ADMIN } from '../../src/testing.js';
import type { ProviderEvent } from '../../src/events/event-types.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';

const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const events: ProviderEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void events.push(e));

const admin = (username: string, extra: Record<string, unknown> = {}) => ({
  username,
  password: `${username}-password`,
  permissions: ['view_users'],
  ...extra,
});

t.test('create, read, list, update, delete', async (t) => {
  const c = await ta.inject('POST', '/api/v2/admins', { token, payload: admin('ann', { email: 'ann@example.test', additional_info: 'x' }) });
  t.equal(c.statusCode, 201, c.payload);
  t.equal(c.headers.location, '/api/v2/admins/ann');
  const created = c.result as Record<string, unknown>;
  t.match(created, { username: 'ann', email: 'ann@example.test', status: 1, permissions: ['view_users'], role: '' });
  t.notOk('password' in created, 'password never returned');
  t.notOk(c.payload.includes('ann-password'));

  const g = await ta.inject('GET', '/api/v2/admins/ann', { token });
  t.equal(g.statusCode, 200);
  t.match(g.result, { username: 'ann', filters: { allow_api_key_auth: false, allow_list: [] } });

  const u = await ta.inject('PUT', '/api/v2/admins/ann', { token, payload: admin('ann', { password: undefined, permissions: ['view_users', 'add_users'], email: 'a2@example.test' }) });
  t.equal(u.statusCode, 200, u.payload);
  t.match(u.result, { message: String });
  t.equal((await ta.adminToken('ann', 'ann-password')).length > 10, true, 'password kept when omitted');
  t.match((await ta.inject('GET', '/api/v2/admins/ann', { token })).result, { email: 'a2@example.test', permissions: ['view_users', 'add_users'] });

  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('bea') });
  const l = await ta.inject('GET', '/api/v2/admins?order=DESC&limit=2', { token });
  t.same((l.result as { username: string }[]).map((a) => a.username), ['bea', 'ann']);
  const l2 = await ta.inject('GET', '/api/v2/admins?offset=1&limit=1', { token });
  t.same((l2.result as { username: string }[]).map((a) => a.username), ['ann']);

  const d = await ta.inject('DELETE', '/api/v2/admins/bea', { token });
  t.equal(d.statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/admins/bea', { token })).statusCode, 404);
  t.equal((await ta.inject('DELETE', '/api/v2/admins/bea', { token })).statusCode, 404);
  t.equal((await ta.inject('PUT', '/api/v2/admins/bea', { token, payload: admin('bea') })).statusCode, 404);

  const kinds = events.filter((e) => e.object_type === 'admin').map((e) => `${e.action}:${e.object_name}`);
  t.same(kinds, ['add:ann', 'update:ann', 'add:bea', 'delete:bea']);
  t.notOk(JSON.stringify(events).includes('ann-password'), 'no password in provider events');
  t.equal(events[0]!.username, TEST_ADMIN.username);
});

t.test('validation: 400 naming the problem', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ password: 'x', permissions: ['*'] }, /"username" is required/],
    [admin('bad/name'), /"username" with value .* fails to match/],
    [admin('bad\\name'), /"username"/],
    [admin('ctl\u0001name'), /"username"/],
    [admin('noperm', { permissions: [] }), /"permissions" must contain at least 1 items/],
    [admin('weird', { permissions: ['fly'] }), /"permissions\[0\]" must be one of/],
    [admin('ipbad', { filters: { allow_list: ['300.1.1.1'] } }), /"filters.allow_list\[0\]" must be an IP address or a CIDR network/],
    [admin('nopass', { password: undefined }), /"password" is required unless password login is disabled/],
    [admin('norole', { role: 'ghost-role' }), /role "ghost-role" does not exist/],
    [admin('nogroup', { groups: [{ name: 'ghost-group' }] }), /group "ghost-group" does not exist/],
    [admin('ann'), /admin "ann" already exists/],
    ['not json', /Invalid request payload|must be of type object/],
  ];
  for (const [payload, re] of cases) {
    const r = await ta.inject('POST', '/api/v2/admins', { token, payload: payload as object });
    t.equal(r.statusCode, 400, JSON.stringify(payload));
    const body = JSON.parse(r.payload);
    t.match(body.message, re);
    t.equal(body.error, 'Bad Request');
    t.notMatch(r.payload, /at .*\.ts:\d+/, 'no stack trace');
  }
  for (const q of ['limit=0', 'limit=501', 'offset=-1', 'order=UP', 'limit=abc']) {
    const r = await ta.inject('GET', `/api/v2/admins?${q}`, { token });
    t.equal(r.statusCode, 400, q);
    t.match(JSON.parse(r.payload).message, /"(limit|offset|order)"/);
  }
  t.equal((await ta.inject('GET', '/api/v2/nope', { token })).statusCode, 404);
  t.match(JSON.parse((await ta.inject('GET', '/api/v2/nope', { token })).payload), { message: String, error: 'Not Found' });
});

t.test('self-protection: an admin cannot delete, disable or demote itself', async (t) => {
  t.equal((await ta.inject('DELETE', '/api/v2/admins/admin', { token })).statusCode, 400);
  const me = (await ta.inject('GET', '/api/v2/admins/admin', { token })).result as Record<string, unknown>;
  const r = await ta.inject('PUT', '/api/v2/admins/admin', { token, payload: { ...pick(me), permissions: ['view_users'] } });
  t.equal(r.statusCode, 400);
  t.match(JSON.parse(r.payload).message, /own permissions/);
  const r2 = await ta.inject('PUT', '/api/v2/admins/admin', { token, payload: { ...pick(me), status: 0 } });
  t.equal(r2.statusCode, 400);
  const r3 = await ta.inject('PUT', '/api/v2/admins/admin', { token, payload: { ...pick(me), username: 'renamed' } });
  t.equal(r3.statusCode, 400);
});

function pick(a: Record<string, unknown>) {
  const { username, permissions, status, email, filters } = a as Record<string, unknown>;
  const f = { ...(filters as Record<string, unknown>) };
  return { username, permissions, status, email, filters: f };
}

t.test('permissions: 403 without * or the specific permission', async (t) => {
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('viewer', { permissions: ['view_users'] }) });
  const vt = await ta.adminToken('viewer', 'viewer-password');
  for (const [m, u] of [['GET', '/api/v2/admins'], ['POST', '/api/v2/admins'], ['GET', '/api/v2/roles'], ['GET', '/api/v2/apikeys'], ['DELETE', '/api/v2/admins/ann']]) {
    const r = await ta.inject(m!, u!, { token: vt, payload: m === 'POST' ? admin('x') : undefined });
    t.equal(r.statusCode, 403, `${m} ${u}`);
    t.match(JSON.parse(r.payload), { error: 'Forbidden', message: /permission/ });
  }
  t.equal((await ta.inject('GET', '/api/v2/admin/profile', { token: vt })).statusCode, 200, 'profile open to every admin');
  t.equal((await ta.inject('GET', '/api/v2/version', { token: vt })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/version')).statusCode, 401);
});

t.test('disabled admins and allow_list', async (t) => {
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('off', { status: 0 }) });
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'off', password: 'off-password' } })).statusCode, 401);
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('remote', { filters: { allow_list: ['10.1.0.0/16'] } }) });
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'remote', password: 'remote-password' } })).statusCode, 403);
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('local', { filters: { allow_list: ['127.0.0.1/32'] } }) });
  const lt = await ta.adminToken('local', 'local-password');
  t.ok(lt);
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('keyonly', { password: undefined, filters: { disable_password_auth: true, allow_api_key_auth: true } }) });
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'keyonly', password: '' } })).statusCode, 401);
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('nopwlogin', { filters: { disable_password_auth: true } }) });
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'nopwlogin', password: 'nopwlogin-password' } })).statusCode, 403, 'password login disabled');
});

t.test('profile and password change', async (t) => {
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('prof') });
  const pt = await ta.adminToken('prof', 'prof-password');
  const up = await ta.inject('PUT', '/api/v2/admin/profile', { token: pt, payload: { email: 'p@example.test', allow_api_key_auth: true } });
  t.equal(up.statusCode, 200);
  t.match((await ta.inject('GET', '/api/v2/admin/profile', { token: pt })).result, { email: 'p@example.test', allow_api_key_auth: true });
  t.equal((await ta.inject('PUT', '/api/v2/admin/profile', { token: pt, payload: { email: 'not-an-email' } })).statusCode, 400);
  const bad = await ta.inject('PUT', '/api/v2/admin/changepwd', { token: pt, payload: { current_password: 'wrong', new_password: 'n3w-pass' } });
  t.equal(bad.statusCode, 403);
  t.equal((await ta.inject('PUT', '/api/v2/admin/changepwd', { token: pt, payload: { current_password: 'prof-password' } })).statusCode, 400);
  const ok = await ta.inject('PUT', '/api/v2/admin/changepwd', { token: pt, payload: { current_password: 'prof-password', new_password: 'n3w-pass' } });
  t.equal(ok.statusCode, 200);
  t.ok(await ta.adminToken('prof', 'n3w-pass'));
  await t.rejects(ta.adminToken('prof', 'prof-password'));
});

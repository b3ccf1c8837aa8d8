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

  const u = await ta.inject('PUT', '/api/v2/admins/ann', {
    token,
    payload: admin('ann', { password: undefined, permissions: ['view_users', 'add_users'], email: 'a2@example.test' }),
  });
  t.equal(u.statusCode, 200, u.payload);
  t.match(u.result, { message: String });
  t.equal((await ta.adminToken('ann', 'ann-password')).length > 10, true, 'password kept when omitted');
  t.match((await ta.inject('GET', '/api/v2/admins/ann', { token })).result, { email: 'a2@example.test', permissions: ['view_users', 'add_users'] });

  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('bea') });
  const l = await ta.inject('GET', '/api/v2/admins?order=DESC&limit=2', { token });
  t.same(
    (l.result as { username: string }[]).map((a) => a.username),
    ['bea', 'ann'],
  );
  const l2 = await ta.inject('GET', '/api/v2/admins?offset=1&limit=1', { token });
  t.same(
    (l2.result as { username: string }[]).map((a) => a.username),
    ['ann'],
  );

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
  for (const [m, u] of [
    ['GET', '/api/v2/admins'],
    ['POST', '/api/v2/admins'],
    ['GET', '/api/v2/roles'],
    ['GET', '/api/v2/apikeys'],
    ['DELETE', '/api/v2/admins/ann'],
  ]) {
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
  await ta.inject('POST', '/api/v2/admins', {
    token,
    payload: admin('keyonly', { password: undefined, filters: { disable_password_auth: true, allow_api_key_auth: true } }),
  });
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'keyonly', password: '' } })).statusCode, 401);
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('nopwlogin', { filters: { disable_password_auth: true } }) });
  t.equal(
    (await ta.inject('GET', '/api/v2/token', { basic: { username: 'nopwlogin', password: 'nopwlogin-password' } })).statusCode,
    403,
    'password login disabled',
  );
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

t.test('/admins/{username}: bad name, bad body, permissions and roles on GET and PUT', async (t) => {
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('target', { email: 'target@example.test' }) });
  const body = admin('target', { password: undefined, email: 'changed@example.test' });
  for (const bad of ['bad%5Cname', 'ctl%01name', 'x'.repeat(256)]) {
    const g = await ta.inject('GET', `/api/v2/admins/${bad}`, { token });
    t.equal(g.statusCode, 400, `GET ${bad}`);
    t.match(JSON.parse(g.payload), { error: 'Bad Request', message: /"username"/ });
    t.equal((await ta.inject('PUT', `/api/v2/admins/${bad}`, { token, payload: body })).statusCode, 400, `PUT ${bad}`);
  }
  const bodies: [unknown, RegExp][] = [
    [{ ...body, permissions: [] }, /"permissions" must contain at least 1 items/],
    [{ ...body, permissions: ['fly'] }, /"permissions\[0\]" must be one of/],
    [{ ...body, status: 7 }, /"status" must be one of/],
    [{ ...body, email: 'not-an-email' }, /"email" must be a valid email/],
    [{ ...body, username: undefined }, /"username" is required/],
    [{ ...body, username: 'other' }, /cannot be renamed/],
    [{ ...body, role: 'ghost-role' }, /role "ghost-role" does not exist/],
    ['not json', /Invalid request payload|must be of type object/],
  ];
  for (const [payload, re] of bodies) {
    const r = await ta.inject('PUT', '/api/v2/admins/target', { token, payload: payload as object });
    t.equal(r.statusCode, 400, JSON.stringify(payload));
    t.match(JSON.parse(r.payload).message, re);
  }

  const vt = await ta.adminToken('viewer', 'viewer-password');
  for (const m of ['GET', 'PUT']) {
    const r = await ta.inject(m, '/api/v2/admins/target', { token: vt, payload: m === 'PUT' ? body : undefined });
    t.equal(r.statusCode, 403, `${m} without "*"`);
    t.match(JSON.parse(r.payload), { error: 'Forbidden', message: /permission/ });
  }
  t.equal((await ta.inject('PUT', '/api/v2/admins/target', { token, payload: { ...body, email: 'ok@example.test' } })).statusCode, 200);
  t.match((await ta.inject('GET', '/api/v2/admins/target', { token })).result, { email: 'ok@example.test' }, 'only the allowed update applied');

  // role checks: a role admin updates admins of its role only, and only within it
  for (const name of ['adm-r1', 'adm-r2']) await ta.inject('POST', '/api/v2/roles', { token, payload: { name } });
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('r1-lead', { permissions: ['*'], role: 'adm-r1' }) });
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('r1-member', { role: 'adm-r1' }) });
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('r2-member', { role: 'adm-r2' }) });
  const lt = await ta.adminToken('r1-lead', 'r1-lead-password');
  const r1 = admin('r1-member', { password: undefined, role: 'adm-r1' });
  t.equal((await ta.inject('GET', '/api/v2/admins/r2-member', { token: lt })).statusCode, 404, 'another role is invisible');
  t.equal(
    (await ta.inject('PUT', '/api/v2/admins/r2-member', { token: lt, payload: admin('r2-member', { password: undefined, role: 'adm-r1' }) })).statusCode,
    404,
  );
  t.equal(
    (await ta.inject('PUT', `/api/v2/admins/${TEST_ADMIN.username}`, { token: lt, payload: admin(TEST_ADMIN.username, { permissions: ['*'] }) })).statusCode,
    404,
    'global admins are invisible',
  );
  const move = await ta.inject('PUT', '/api/v2/admins/r1-member', { token: lt, payload: { ...r1, role: 'adm-r2' } });
  t.equal(move.statusCode, 403, 'cannot move an admin to another role');
  t.match(JSON.parse(move.payload).message, /role "adm-r1" can only assign that role/);
  t.equal((await ta.inject('PUT', '/api/v2/admins/r1-member', { token: lt, payload: { ...r1, role: '', description: 'kept in role' } })).statusCode, 200);
  t.match(
    (await ta.inject('GET', '/api/v2/admins/r1-member', { token })).result,
    { role: 'adm-r1', description: 'kept in role' },
    'an empty role keeps the caller role',
  );
  const selfMe = (await ta.inject('GET', '/api/v2/admins/r1-lead', { token: lt })).result as Record<string, unknown>;
  const selfMove = await ta.inject('PUT', '/api/v2/admins/r1-lead', { token: lt, payload: { ...pick(selfMe), role: 'adm-r2' } });
  t.equal(selfMove.statusCode, 400, 'nor itself');
  t.match(JSON.parse(selfMove.payload).message, /cannot change your own role/);
  t.equal(
    (await ta.inject('PUT', '/api/v2/admins/r1-member', { token, payload: { ...r1, role: 'adm-r2' } })).statusCode,
    200,
    'a global admin moves admins between roles',
  );
  t.equal((await ta.inject('GET', '/api/v2/admins/r1-member', { token: lt })).statusCode, 404, 'moved out of the role admin view');
});

t.test('profile and password routes: 401 without credentials, never through an API key', async (t) => {
  for (const [m, u] of [
    ['GET', '/api/v2/admin/profile'],
    ['PUT', '/api/v2/admin/profile'],
    ['PUT', '/api/v2/admin/changepwd'],
  ] as const) {
    const r = await ta.inject(m, u, { payload: m === 'PUT' ? {} : undefined });
    t.equal(r.statusCode, 401, `${m} ${u}`);
    t.match(JSON.parse(r.payload), { error: 'Unauthorized' });
  }
  await ta.inject('POST', '/api/v2/admins', { token, payload: admin('keyed', { permissions: ['*'], filters: { allow_api_key_auth: true } }) });
  const k = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'keyed', scope: 1, admin: 'keyed' } });
  const apiKey = (k.result as { key: string }).key;
  t.match((await ta.inject('GET', '/api/v2/admin/profile', { apiKey })).result, { allow_api_key_auth: true }, 'the profile can be read with a key');
  const prof = await ta.inject('PUT', '/api/v2/admin/profile', { apiKey, payload: { description: 'via key' } });
  t.equal(prof.statusCode, 403);
  t.match(JSON.parse(prof.payload).message, /impersonated through an API key cannot be updated/);
  const pwd = await ta.inject('PUT', '/api/v2/admin/changepwd', { apiKey, payload: { current_password: 'keyed-password', new_password: 'taken-over' } });
  t.equal(pwd.statusCode, 403);
  const me = (await ta.inject('GET', '/api/v2/admins/keyed', { apiKey })).result as Record<string, unknown>;
  t.equal(
    (await ta.inject('PUT', '/api/v2/admins/keyed', { apiKey, payload: { ...pick(me), email: 'x@example.test' } })).statusCode,
    403,
    'nor through /admins',
  );
  t.match((await ta.inject('GET', '/api/v2/admins/keyed', { token })).result, { description: '', email: '' }, 'nothing changed');
  t.ok(await ta.adminToken('keyed', 'keyed-password'), 'password unchanged');
  t.equal(
    (
      await ta.inject('PUT', '/api/v2/admins/ann', {
        apiKey,
        payload: admin('ann', { password: undefined, permissions: ['view_users', 'add_users'], description: 'by key' }),
      })
    ).statusCode,
    200,
    'other admins can be updated with the key',
  );
});

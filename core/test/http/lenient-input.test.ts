import t from 'tap';
import { accountsApp, user } from './accounts-helpers.js';

// Clients of other revisions of the v2.7 API (api-spec, "Accept what clients
// of other API revisions send"): unknown members are dropped, not refused;
// null means absent. Known members keep their strict validation.

const ta = await accountsApp();
t.teardown(() => ta.close());
const { token } = ta;

const req = (method: string, url: string, payload?: unknown) => ta.inject(method, url, { token, payload: payload as object });

t.test('a user read, sent back with unknown members and nulls, is updated and read back without them', async (t) => {
  t.equal((await req('POST', '/api/v2/users', user('rmw', { description: 'before', email: 'rmw@example.com' }))).statusCode, 201);
  const got = ta.json(await req('GET', '/api/v2/users/rmw'));
  const sent = {
    ...got,
    description: 'after',
    // members of newer revisions, at the top and nested
    totp_config: { enabled: false, config_name: 'x', secret: { status: 'Plain', payload: 'never stored' } },
    fz_future_field: { deep: [1, 2, { x: null }] },
    filters: { ...got.filters, data_transfer_limits: [{ sources: ['10.0.0.0/8'], upload_data_transfer: 100 }], '2fa_protocols': ['SSH'] },
    // null: absent, so the password is kept (an update without one keeps it) and the email is cleared (PUT replaces)
    password: null,
    email: null,
    additional_info: null,
  };
  const put = await req('PUT', '/api/v2/users/rmw', sent);
  t.equal(put.statusCode, 200, put.payload);
  const back = ta.json(await req('GET', '/api/v2/users/rmw'));
  t.equal(back.description, 'after', 'the known member is applied');
  t.equal(back.email, '', 'null email: as if absent');
  for (const k of ['totp_config', 'fz_future_field']) t.notOk(k in back, `${k} is not stored`);
  t.notOk('data_transfer_limits' in back.filters, 'unknown filter dropped');
  t.notOk('2fa_protocols' in back.filters, 'unknown filter dropped');
  const rows = await ta.sql(`SELECT filters FROM users WHERE username = 'rmw'`);
  t.notMatch(JSON.stringify(rows), /data_transfer_limits|2fa_protocols|never stored/, 'nothing unknown reaches the database');
  t.ok(await ta.userToken('rmw', 'rmw-password'), 'password: null kept the password');
});

t.test('a group sent back with unknown members and nulls is updated', async (t) => {
  t.equal((await req('POST', '/api/v2/groups', { name: 'g-rmw', user_settings: { max_sessions: 2, filters: { denied_protocols: ['FTP'] } } })).statusCode, 201);
  const got = ta.json(await req('GET', '/api/v2/groups/g-rmw'));
  const put = await req('PUT', '/api/v2/groups/g-rmw', {
    ...got,
    description: null,
    user_settings: { ...got.user_settings, filters: { ...got.user_settings.filters, data_transfer_limits: [], '2fa_protocols': ['FTP'] }, fz_x: 1 },
    fz_group_extra: 'x',
  });
  t.equal(put.statusCode, 200, put.payload);
  const back = ta.json(await req('GET', '/api/v2/groups/g-rmw'));
  t.equal(back.user_settings.max_sessions, 2);
  t.notOk('fz_group_extra' in back);
  t.notOk('fz_x' in back.user_settings);
  t.notOk('data_transfer_limits' in (back.user_settings.filters ?? {}));
});

t.test('known members stay strict', async (t) => {
  const bad = await req('PUT', '/api/v2/users/rmw', { ...user('rmw'), filters: { max_upload_file_size: 'lots' }, fz_unknown: 1 });
  t.equal(bad.statusCode, 400);
  t.match(ta.json(bad), { error: 'Bad Request', message: /max_upload_file_size/ });
  const req2 = await req('POST', '/api/v2/users', { ...user('needs-name'), username: null });
  t.equal(req2.statusCode, 400, 'a required member sent as null is missing');
  t.match(ta.json(req2).message, /username/);
  const arr = await req('POST', '/api/v2/groups', { name: 'g-arr', user_settings: { filters: { denied_protocols: [null] } } });
  t.equal(arr.statusCode, 400, 'null array items are values, not absent members');
});

t.test('unknown query parameters are ignored', async (t) => {
  const r = await req('GET', '/api/v2/users?limit=5&fz_cursor=abc&api_version=2.8');
  t.equal(r.statusCode, 200, r.payload);
  t.ok(Array.isArray(ta.json(r)));
  const bad = await req('GET', '/api/v2/users?limit=0&fz_cursor=abc');
  t.equal(bad.statusCode, 400, 'a known parameter is still checked');
});

t.test('a dump from another revision, with unknown members and nulls, restores', async (t) => {
  const dump = {
    version: 17,
    fz_top: { anything: true },
    users: [{ ...user('restored', { description: null }), fz_member: 'x', filters: { data_transfer_limits: [], '2fa_protocols': ['SSH'] } }],
    groups: [{ name: 'g-restored', description: null, user_settings: { fz_nested: 1 } }],
  };
  const r = await req('POST', '/api/v2/loaddata', dump);
  t.equal(r.statusCode, 200, r.payload);
  const u = ta.json(await req('GET', '/api/v2/users/restored'));
  t.equal(u.username, 'restored');
  t.notOk('fz_member' in u);
  t.notOk('data_transfer_limits' in u.filters);
  t.equal(ta.json(await req('GET', '/api/v2/groups/g-restored')).name, 'g-restored');
});

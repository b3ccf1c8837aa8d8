import t from 'tap';
import { createTestApp, TEST_ADMIN } from '../../src/testing.js';
import { hashPassword } from '../../src/accounts/password.js';
import { Role, User } from '../../src/data/entities/index.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { ProviderEvent } from '../../src/events/event-types.js';

const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const events: ProviderEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void events.push(e));
const instanceId = ta.app.container.resolve<string>(TOKENS.InstanceId);

/** Status and message of an error answer. */
async function call(method: string, url: string, o: Parameters<typeof ta.inject>[2] = {}) {
  const r = await ta.inject(method, url, o);
  const body = r.payload ? (JSON.parse(r.payload) as Record<string, unknown>) : {};
  return { status: r.statusCode, body, message: String(body.message ?? ''), headers: r.headers };
}

t.test('roles CRUD, references and role-scoped admins', async (t) => {
  const c = await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'team-a', description: 'A' } });
  t.equal(c.statusCode, 201, c.payload);
  t.equal(c.headers.location, '/api/v2/roles/team-a');
  t.match(c.result, { name: 'team-a', description: 'A', users: [], admins: [] });
  t.equal((await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'team-a' } })).statusCode, 400, 'duplicate');
  t.equal((await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'a/b' } })).statusCode, 400);
  t.equal((await ta.inject('POST', '/api/v2/roles', { token, payload: {} })).statusCode, 400);
  await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'team-b' } });
  t.same(
    ((await ta.inject('GET', '/api/v2/roles?order=DESC', { token })).result as { name: string }[]).map((r) => r.name),
    ['team-b', 'team-a'],
  );
  t.equal((await ta.inject('PUT', '/api/v2/roles/team-a', { token, payload: { name: 'team-a', description: 'B' } })).statusCode, 200);
  t.match((await ta.inject('GET', '/api/v2/roles/team-a', { token })).result, { description: 'B' });
  t.equal((await ta.inject('GET', '/api/v2/roles/ghost', { token })).statusCode, 404);

  // a role admin: sees only admins of its role, creates admins of its role only
  const ra = await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'lead-a', password: 'lead-a-pass', permissions: ['*'], role: 'team-a' } });
  t.equal(ra.statusCode, 201, ra.payload);
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'lead-b', password: 'lead-b-pass', permissions: ['*'], role: 'team-b' } });
  const lt = await ta.adminToken('lead-a', 'lead-a-pass');
  const seen = ((await ta.inject('GET', '/api/v2/admins', { token: lt })).result as { username: string }[]).map((a) => a.username);
  t.same(seen, ['lead-a']);
  t.equal((await ta.inject('GET', '/api/v2/admins/lead-b', { token: lt })).statusCode, 404, 'other role invisible');
  t.equal((await ta.inject('DELETE', '/api/v2/admins/lead-b', { token: lt })).statusCode, 404);
  const mine = await ta.inject('POST', '/api/v2/admins', {
    token: lt,
    payload: { username: 'member-a', password: 'member-a-pass', permissions: ['view_users'] },
  });
  t.equal(mine.statusCode, 201);
  t.match(mine.result, { role: 'team-a' }, 'role forced to the creator role');
  t.equal(
    (await ta.inject('POST', '/api/v2/admins', { token: lt, payload: { username: 'x-b', password: 'x', permissions: ['view_users'], role: 'team-b' } }))
      .statusCode,
    403,
  );
  t.equal((await ta.inject('GET', '/api/v2/roles', { token: lt })).statusCode, 403, 'role admins do not manage roles');

  const refused = await ta.inject('DELETE', '/api/v2/roles/team-a', { token });
  t.equal(refused.statusCode, 400);
  t.match(JSON.parse(refused.payload).message, /role "team-a" is still referenced by admin "lead-a", admin "member-a"/);
  t.match((await ta.inject('GET', '/api/v2/roles/team-a', { token })).result, { admins: ['lead-a', 'member-a'] });
  t.equal((await ta.inject('DELETE', '/api/v2/admins/lead-b', { token })).statusCode, 200);
  t.equal((await ta.inject('DELETE', '/api/v2/roles/team-b', { token })).statusCode, 200);
  t.equal((await ta.inject('DELETE', '/api/v2/roles/team-b', { token })).statusCode, 404);
});

async function addUser(username: string, password: string, filters: Record<string, unknown>, role = '') {
  const em = ta.app.orm.em.fork();
  em.create(User, {
    username,
    password_hash: await hashPassword(password),
    permissions: { '/': ['*'] },
    filters,
    filesystem: { provider: 0 },
    public_keys: [],
    custom_placeholders: [],
    oidc_custom_fields: {},
    home_dir: '/tmp/x',
    role: role ? await em.findOneOrFail(Role, { name: role }) : null,
  } as never);
  await em.flush();
}

t.test('API keys: created once, hashed, scoped, bound, expiring', async (t) => {
  await ta.inject('POST', '/api/v2/admins', {
    token,
    payload: { username: 'bot', password: 'bot-pass', permissions: ['*'], filters: { allow_api_key_auth: true } },
  });
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'nokeys', password: 'nokeys-pass', permissions: ['*'] } });
  const c = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'ci', scope: 1, admin: 'bot' } });
  t.equal(c.statusCode, 201, c.payload);
  const { mesage, key } = c.result as { mesage: string; key: string };
  t.ok(mesage);
  const id = c.headers['x-object-id'] as string;
  t.ok(id);
  t.equal(c.headers.location, `/api/v2/apikeys/${id}`);
  t.ok(key.startsWith(`${id}.`));

  const g = await ta.inject('GET', `/api/v2/apikeys/${id}`, { token });
  t.match(g.result, { id, name: 'ci', scope: 1, admin: 'bot', user: '', last_use_at: 0 });
  t.notOk(g.payload.includes(key.split('.')[1]!), 'key never returned again');
  const raw = await ta.app.orm.em.fork().getConnection().execute('select key_hash from api_keys');
  t.notOk(JSON.stringify(raw).includes(key.split('.')[1]!), 'only a hash is stored');

  // the key acts as the bound admin
  const asBot = await ta.inject('GET', '/api/v2/admins', { apiKey: key });
  t.equal(asBot.statusCode, 200);
  t.ok(((await ta.inject('GET', `/api/v2/apikeys/${id}`, { token })).result as { last_use_at: number }).last_use_at > 0, 'last_use_at updated');
  t.equal((await ta.inject('GET', '/api/v2/apikeys', { apiKey: key })).statusCode, 401, '/apikeys is bearer only');
  const self = (await ta.inject('GET', '/api/v2/admins/bot', { apiKey: key })).result as Record<string, unknown>;
  const upd = await ta.inject('PUT', '/api/v2/admins/bot', { apiKey: key, payload: { username: 'bot', permissions: self.permissions, filters: self.filters } });
  t.equal(upd.statusCode, 403, 'the impersonated admin cannot be updated with its own key');
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: key + 'x' })).statusCode, 401);
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: 'garbage' })).statusCode, 401);
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { apiKey: key })).statusCode, 401, 'admin key refused on user routes');

  // unbound admin key: <key>.<username>, and the account must allow API keys
  const u = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'unbound', scope: 1 } });
  const ukey = (u.result as { key: string }).key;
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: ukey })).statusCode, 401, 'unbound key needs a username');
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: `${ukey}.bot` })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: `${ukey}.nokeys` })).statusCode, 401, 'API key auth not enabled for that admin');

  // user keys
  await addUser('kuser', 'kuser-pass', { allow_api_key_auth: true });
  await addUser('knokey', 'knokey-pass', {});
  const uk = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'user-key', scope: 2, user: 'kuser' } });
  t.equal(uk.statusCode, 201);
  const userKey = (uk.result as { key: string }).key;
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: userKey })).statusCode, 401, 'user key refused on admin routes');
  t.equal((await ta.inject('GET', '/api/v2/version', { apiKey: userKey })).statusCode, 200);
  const uk2 = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'user-unbound', scope: 2 } });
  const uKey2 = (uk2.result as { key: string }).key;
  t.equal((await ta.inject('GET', '/api/v2/version', { apiKey: `${uKey2}.knokey` })).statusCode, 401);
  t.equal((await ta.inject('GET', '/api/v2/version', { apiKey: `${uKey2}.kuser` })).statusCode, 200);

  // validation
  for (const p of [
    { scope: 1 },
    { name: 'x', scope: 3 },
    { name: 'x', scope: 1, user: 'kuser' },
    { name: 'x', scope: 2, admin: 'bot' },
    { name: 'x', scope: 1, admin: 'ghost' },
    { name: 'x', scope: 1, expires_at: Date.now() - 1000 },
  ]) {
    const r = await ta.inject('POST', '/api/v2/apikeys', { token, payload: p });
    t.equal(r.statusCode, 400, JSON.stringify(p));
  }

  // expiry: can be shortened, never extended or removed; expired keys are refused
  const exp = Date.now() + 3600_000;
  const ek = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: exp } });
  const ekId = ek.headers['x-object-id'] as string;
  t.equal(
    (await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: exp + 1000 } })).statusCode,
    400,
  );
  t.equal((await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: 0 } })).statusCode, 400);
  t.equal(
    (await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: Date.now() + 60_000 } }))
      .statusCode,
    200,
  );
  t.equal(
    (await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 2, expires_at: Date.now() + 1000 } })).statusCode,
    400,
    'scope fixed',
  );
  const ekKey = (ek.result as { key: string }).key;
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: ekKey })).statusCode, 200);
  await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: Date.now() + 50 } });
  await new Promise((r) => setTimeout(r, 80));
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: ekKey })).statusCode, 401, 'expired key refused');

  const list = (await ta.inject('GET', '/api/v2/apikeys?limit=500', { token })).result as unknown[];
  t.equal(list.length, 5);
  t.equal((await ta.inject('DELETE', `/api/v2/apikeys/${id}`, { token })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/admins', { apiKey: key })).statusCode, 401, 'deleted key refused');
  t.equal((await ta.inject('GET', `/api/v2/apikeys/${id}`, { token })).statusCode, 404);
  t.equal((await ta.inject('DELETE', `/api/v2/apikeys/${id}`, { token })).statusCode, 404);
});

t.test('API keys disabled on the binding are refused', async (t) => {
  const other = await createTestApp({ plugins: [], config: { httpd: { bindings: [{ address: '127.0.0.1', port: 0, enable_api_key_auth: false }] } } });
  t.teardown(() => other.close());
  const tok = await other.adminToken();
  await other.inject('PUT', '/api/v2/admin/profile', { token: tok, payload: { allow_api_key_auth: true } });
  const k = await other.inject('POST', '/api/v2/apikeys', { token: tok, payload: { name: 'k', scope: 1, admin: 'admin' } });
  const r = await other.inject('GET', '/api/v2/admins', { apiKey: (k.result as { key: string }).key });
  t.equal(r.statusCode, 401);
});

t.test('roles: error codes', async (t) => {
  t.equal((await call('POST', '/api/v2/roles', { token, payload: { name: 'errs' } })).status, 201);
  const rename = await call('PUT', '/api/v2/roles/errs', { token, payload: { name: 'errs-2' } });
  t.equal(rename.status, 400, 'a role cannot be renamed');
  t.match(rename.message, /cannot be renamed/);
  t.equal((await call('GET', '/api/v2/roles/errs-2', { token })).status, 404, 'the rename did not happen');
  t.equal((await call('PUT', '/api/v2/roles/errs', { token, payload: { name: 'errs', description: 7 } })).status, 400, 'bad body');
  t.equal((await call('PUT', '/api/v2/roles/bad%5Cname', { token, payload: { name: 'bad\\name' } })).status, 400, 'bad name in the path');
  const ghostPut = await call('PUT', '/api/v2/roles/ghost', { token, payload: { name: 'ghost' } });
  t.equal(ghostPut.status, 404);
  t.match(ghostPut.body, { error: 'Not Found', message: /role "ghost" not found/ });
  t.equal((await call('DELETE', '/api/v2/roles/ghost', { token })).status, 404);

  for (const q of ['offset=-1', 'limit=0', 'limit=501', 'order=UP']) {
    const r = await call('GET', `/api/v2/roles?${q}`, { token });
    t.equal(r.status, 400, q);
    t.match(r.message, /"(offset|limit|order)"/);
  }
  const page = await call('GET', '/api/v2/roles?offset=0&limit=1&order=ASC', { token });
  t.equal(page.status, 200);
  t.equal((page.body as unknown as unknown[]).length, 1, 'limit honoured');

  // no "*": 403 on every write; a role admin with "*" is refused too
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'rviewer', password: 'rviewer-pass', permissions: ['view_users'] } });
  const vt = await ta.adminToken('rviewer', 'rviewer-pass');
  const lt = await ta.adminToken('lead-a', 'lead-a-pass');
  for (const tok of [vt, lt]) {
    for (const [m, u, payload] of [
      ['POST', '/api/v2/roles', { name: 'nope' }],
      ['PUT', '/api/v2/roles/errs', { name: 'errs', description: 'changed' }],
      ['DELETE', '/api/v2/roles/errs', undefined],
      ['GET', '/api/v2/roles/errs', undefined],
    ] as const) {
      const r = await call(m, u, { token: tok, payload });
      t.equal(r.status, 403, `${m} ${u}`);
      t.equal(r.body.error, 'Forbidden');
    }
  }
  t.match((await call('GET', '/api/v2/roles/errs', { token })).body, { description: '' }, 'refused writes changed nothing');
  t.equal((await call('GET', '/api/v2/roles/nope', { token })).status, 404);
  t.equal((await call('DELETE', '/api/v2/roles/errs', { token })).status, 200);
});

t.test('API keys: error codes', async (t) => {
  const id = (await call('POST', '/api/v2/apikeys', { token, payload: { name: 'errs', scope: 1, admin: 'bot' } })).headers['x-object-id'] as string;
  t.ok(id);
  for (const bad of ['bad.id', 'x'.repeat(65), 'sp%20ace']) {
    for (const m of ['GET', 'DELETE']) t.equal((await call(m, `/api/v2/apikeys/${bad}`, { token })).status, 400, `${m} ${bad}`);
    t.equal((await call('PUT', `/api/v2/apikeys/${bad}`, { token, payload: { name: 'x', scope: 1 } })).status, 400, `PUT ${bad}`);
  }
  const bodies: [unknown, RegExp][] = [
    [{ scope: 1 }, /"name" is required/],
    [{ name: 'x', scope: 3 }, /"scope" must be one of/],
    [{ name: 'x' }, /"scope" is required/],
    [{ name: 'x', scope: 1, expires_at: -1 }, /"expires_at"/],
    [{ name: 'x', scope: 1, admin: 'ghost' }, /admin "ghost" does not exist/],
    [{ name: 'x', scope: 1, user: 'kuser' }, /cannot be bound to a user/],
    ['not json', /Invalid request payload|must be of type object/],
  ];
  for (const [payload, re] of bodies) {
    const r = await call('PUT', `/api/v2/apikeys/${id}`, { token, payload: payload as object });
    t.equal(r.status, 400, JSON.stringify(payload));
    t.match(r.message, re);
  }
  t.match((await call('GET', `/api/v2/apikeys/${id}`, { token })).body, { name: 'errs', admin: 'bot' }, 'refused updates changed nothing');
  const unknown = await call('PUT', '/api/v2/apikeys/NoSuchKey123', { token, payload: { name: 'x', scope: 1 } });
  t.equal(unknown.status, 404);
  t.match(unknown.body, { error: 'Not Found', message: /API key "NoSuchKey123" not found/ });
  t.equal((await call('GET', '/api/v2/apikeys/NoSuchKey123', { token })).status, 404);
  t.equal((await call('DELETE', '/api/v2/apikeys/NoSuchKey123', { token })).status, 404);

  for (const q of ['offset=-1', 'limit=0', 'limit=501', 'order=UP']) {
    const r = await call('GET', `/api/v2/apikeys?${q}`, { token });
    t.equal(r.status, 400, q);
    t.match(r.message, /"(offset|limit|order)"/);
  }

  const vt = await ta.adminToken('rviewer', 'rviewer-pass');
  for (const [m, u, payload] of [
    ['GET', '/api/v2/apikeys', undefined],
    ['POST', '/api/v2/apikeys', { name: 'x', scope: 1, admin: 'bot' }],
    ['GET', `/api/v2/apikeys/${id}`, undefined],
    ['PUT', `/api/v2/apikeys/${id}`, { name: 'renamed', scope: 1, admin: 'bot' }],
    ['DELETE', `/api/v2/apikeys/${id}`, undefined],
  ] as const) {
    const r = await call(m, u, { token: vt, payload });
    t.equal(r.status, 403, `${m} ${u} without "*"`);
    t.match(r.message, /permission/);
  }
  t.equal((await call('GET', '/api/v2/apikeys')).status, 401, 'no credentials');
  t.match((await call('GET', `/api/v2/apikeys/${id}`, { token })).body, { name: 'errs' }, 'the key is still there');

  // a bound key must be sent without a username
  const adminKey = (await call('POST', '/api/v2/apikeys', { token, payload: { name: 'bound-a', scope: 1, admin: 'bot' } })).body.key as string;
  const userKey = (await call('POST', '/api/v2/apikeys', { token, payload: { name: 'bound-u', scope: 2, user: 'kuser' } })).body.key as string;
  t.equal((await call('GET', '/api/v2/admins', { apiKey: adminKey })).status, 200);
  const a = await call('GET', '/api/v2/admins', { apiKey: `${adminKey}.bot` });
  t.equal(a.status, 401, 'bound admin key with .username');
  t.match(a.message, /bound to an admin/);
  t.equal((await call('GET', '/api/v2/admins', { apiKey: `${adminKey}.${TEST_ADMIN.username}` })).status, 401, 'not even another admin');
  t.equal((await call('GET', '/api/v2/version', { apiKey: userKey })).status, 200);
  const u = await call('GET', '/api/v2/version', { apiKey: `${userKey}.kuser` });
  t.equal(u.status, 401, 'bound user key with .username');
  t.match(u.message, /bound to a user/);
});

t.test('API keys: an admin with a role stays in its role', async (t) => {
  for (const name of ['k-team-a', 'k-team-b']) await ta.inject('POST', '/api/v2/roles', { token, payload: { name } });
  const mkAdmin = (username: string, role: string, permissions = ['view_users']) =>
    ta.inject('POST', '/api/v2/admins', {
      token,
      payload: { username, password: `${username}-pass`, permissions, role, filters: { allow_api_key_auth: true } },
    });
  await mkAdmin('klead-a', 'k-team-a', ['*']);
  await mkAdmin('kbot-a', 'k-team-a', ['*']);
  await mkAdmin('kbot-b', 'k-team-b');
  await addUser('kuser-a', 'kuser-a-pass', { allow_api_key_auth: true }, 'k-team-a');
  await addUser('kuser-b', 'kuser-b-pass', { allow_api_key_auth: true }, 'k-team-b');
  await ta.inject('PUT', '/api/v2/admin/profile', { token, payload: { allow_api_key_auth: true } });
  const lt = await ta.adminToken('klead-a', 'klead-a-pass');

  // creation: only keys bound to accounts of the role
  for (const [payload, re] of [
    [{ name: 'x', scope: 1 }, /role "k-team-a" cannot manage unbound API keys: set "admin" to an admin of that role/],
    [{ name: 'x', scope: 2 }, /role "k-team-a" cannot manage unbound API keys: set "user" to a user of that role/],
    [{ name: 'x', scope: 1, admin: TEST_ADMIN.username }, /only bind API keys to admins of that role, and "admin" is not one/],
    [{ name: 'x', scope: 1, admin: 'kbot-b' }, /"kbot-b" is not one/],
    [{ name: 'x', scope: 1, admin: 'ghost' }, /"ghost" is not one/],
    [{ name: 'x', scope: 2, user: 'kuser-b' }, /only bind API keys to users of that role, and "kuser-b" is not one/],
    [{ name: 'x', scope: 2, user: 'kuser' }, /"kuser" is not one/],
  ] as const) {
    const r = await call('POST', '/api/v2/apikeys', { token: lt, payload });
    t.equal(r.status, 403, JSON.stringify(payload));
    t.match(r.body, { error: 'Forbidden', message: re });
  }
  const ka = await call('POST', '/api/v2/apikeys', { token: lt, payload: { name: 'role-admin-key', scope: 1, admin: 'kbot-a' } });
  t.equal(ka.status, 201, ka.message);
  const ku = await call('POST', '/api/v2/apikeys', { token: lt, payload: { name: 'role-user-key', scope: 2, user: 'kuser-a' } });
  t.equal(ku.status, 201, ku.message);
  const kaId = ka.headers['x-object-id'] as string;
  const kuId = ku.headers['x-object-id'] as string;
  const kSelf = await call('POST', '/api/v2/apikeys', { token: lt, payload: { name: 'role-self-key', scope: 1, admin: 'klead-a' } });
  t.equal(kSelf.status, 201, 'a key bound to the role admin itself');

  // keys of other accounts are invisible to the role admin
  const other = await call('POST', '/api/v2/apikeys', { token, payload: { name: 'other-role', scope: 1, admin: 'kbot-b' } });
  const unbound = await call('POST', '/api/v2/apikeys', { token, payload: { name: 'global-unbound', scope: 1 } });
  const global = await call('POST', '/api/v2/apikeys', { token, payload: { name: 'global-bound', scope: 1, admin: TEST_ADMIN.username } });
  const hidden = [other, unbound, global].map((r) => r.headers['x-object-id'] as string);
  const listed = ((await call('GET', '/api/v2/apikeys?limit=500', { token: lt })).body as unknown as { id: string; name: string }[]).map((k) => k.name).sort();
  t.same(listed, ['role-admin-key', 'role-self-key', 'role-user-key']);
  const all = (await call('GET', '/api/v2/apikeys?limit=500', { token })).body as unknown as { id: string }[];
  t.ok(
    hidden.every((id) => all.some((k) => k.id === id)),
    'admins without a role see every key',
  );
  for (const id of hidden) {
    t.equal((await call('GET', `/api/v2/apikeys/${id}`, { token: lt })).status, 404, `GET ${id}`);
    t.equal((await call('PUT', `/api/v2/apikeys/${id}`, { token: lt, payload: { name: 'taken', scope: 1, admin: 'kbot-a' } })).status, 404, `PUT ${id}`);
    t.equal((await call('DELETE', `/api/v2/apikeys/${id}`, { token: lt })).status, 404, `DELETE ${id}`);
  }
  t.match((await call('GET', `/api/v2/apikeys/${hidden[1]}`, { token })).body, { name: 'global-unbound', admin: '' }, 'the unbound key was not re-bound');

  // updates cannot move a key out of the role
  const moveOut = await call('PUT', `/api/v2/apikeys/${kaId}`, { token: lt, payload: { name: 'role-admin-key', scope: 1, admin: TEST_ADMIN.username } });
  t.equal(moveOut.status, 403);
  t.equal((await call('PUT', `/api/v2/apikeys/${kaId}`, { token: lt, payload: { name: 'role-admin-key', scope: 1 } })).status, 403, 'nor unbind it');
  t.equal((await call('PUT', `/api/v2/apikeys/${kuId}`, { token: lt, payload: { name: 'role-user-key', scope: 2, user: 'kuser-b' } })).status, 403);
  t.match((await call('GET', `/api/v2/apikeys/${kaId}`, { token: lt })).body, { admin: 'kbot-a' });
  t.equal((await call('PUT', `/api/v2/apikeys/${kaId}`, { token: lt, payload: { name: 'renamed', scope: 1, admin: 'kbot-a' } })).status, 200);
  t.match((await call('GET', `/api/v2/apikeys/${kaId}`, { token: lt })).body, { name: 'renamed', admin: 'kbot-a' });

  // the role's key acts inside the role only
  const asBot = await call('GET', '/api/v2/admins', { apiKey: ka.body.key as string });
  t.equal(asBot.status, 200);
  t.same(
    (asBot.body as unknown as { username: string }[]).map((a) => a.username),
    ['kbot-a', 'klead-a'],
  );
  t.equal((await call('GET', '/api/v2/roles', { apiKey: kSelf.body.key as string })).status, 403, 'no way to /roles through a role key');
  t.equal((await call('GET', '/api/v2/admins', { apiKey: `${ka.body.key as string}.${TEST_ADMIN.username}` })).status, 401);

  // a key whose account leaves the role leaves the role admin's view
  const kbotA = (await call('GET', '/api/v2/admins/kbot-a', { token })).body;
  await call('PUT', '/api/v2/admins/kbot-a', {
    token,
    payload: { username: 'kbot-a', permissions: kbotA.permissions, filters: kbotA.filters, role: 'k-team-b' },
  });
  t.equal((await call('GET', `/api/v2/apikeys/${kaId}`, { token: lt })).status, 404);
  t.equal((await call('DELETE', `/api/v2/apikeys/${kuId}`, { token: lt })).status, 200);
  t.equal((await call('GET', `/api/v2/apikeys/${kuId}`, { token })).status, 404);
});

t.test('roles and API keys emit provider events', async (t) => {
  events.length = 0;
  await call('POST', '/api/v2/roles', { token, payload: { name: 'ev-role', description: 'd1' } });
  await call('PUT', '/api/v2/roles/ev-role', { token, payload: { name: 'ev-role', description: 'd2' } });
  await call('DELETE', '/api/v2/roles/ev-role', { token });
  const c = await call('POST', '/api/v2/apikeys', { token, payload: { name: 'ev-key', scope: 1, admin: 'bot' } });
  const id = c.headers['x-object-id'] as string;
  const secret = (c.body.key as string).split('.')[1]!;
  await call('PUT', `/api/v2/apikeys/${id}`, { token, payload: { name: 'ev-key-2', scope: 1, admin: 'bot' } });
  await call('DELETE', `/api/v2/apikeys/${id}`, { token });
  // a role admin's change carries its role
  const lt = await ta.adminToken('klead-a', 'klead-a-pass');
  const rc = await call('POST', '/api/v2/apikeys', { token: lt, payload: { name: 'ev-role-key', scope: 1, admin: 'klead-a' } });
  t.equal(rc.status, 201);
  // refused changes emit nothing
  await call('DELETE', '/api/v2/roles/ghost', { token });
  await call('POST', '/api/v2/apikeys', { token: lt, payload: { name: 'nope', scope: 1 } });

  t.same(
    events.map((e) => `${e.action}:${e.object_type}:${e.object_name}`),
    [
      'add:role:ev-role',
      'update:role:ev-role',
      'delete:role:ev-role',
      `add:api_key:${id}`,
      `update:api_key:${id}`,
      `delete:api_key:${id}`,
      `add:api_key:${rc.headers['x-object-id'] as string}`,
    ],
  );
  for (const e of events.slice(0, 6)) {
    t.match(e, { username: TEST_ADMIN.username, ip: '127.0.0.1', role: '', instance_id: instanceId, timestamp: Number });
    t.ok(instanceId.length > 0);
  }
  t.match(events[6], { username: 'klead-a', ip: '127.0.0.1', role: 'k-team-a', instance_id: instanceId });
  t.match(events[0]!.object_data, { name: 'ev-role', description: 'd1' });
  t.match(events[1]!.object_data, { name: 'ev-role', description: 'd2' });
  t.match(events[2]!.object_data, { name: 'ev-role' });
  t.match(events[3]!.object_data, { id, name: 'ev-key', scope: 1, admin: 'bot' });
  t.match(events[4]!.object_data, { id, name: 'ev-key-2' });
  t.match(events[5]!.object_data, { id, name: 'ev-key-2' });
  for (const e of events.filter((e) => e.object_type === 'api_key')) {
    t.notOk('key' in e.object_data || 'key_hash' in e.object_data, `${e.action}: no key or hash in object_data`);
  }
  t.notOk(JSON.stringify(events).includes(secret), 'the key never appears in an event');
});

t.test('names are at most 255 characters wherever they are taken, references to other objects too (400 naming the field)', async (t) => {
  const long = 'n'.repeat(256);
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    ['POST', '/api/v2/roles', { name: long }, /"name" length must be less than or equal to 255/],
    ['POST', '/api/v2/admins', { username: long, password: 'long-pass-1', permissions: ['*'] }, /"username" length must be less than or equal to 255/],
    [
      'POST',
      '/api/v2/admins',
      { username: 'with-role', password: 'long-pass-1', permissions: ['*'], role: long },
      /"role" length must be less than or equal to 255/,
    ],
    ['POST', '/api/v2/users', { username: long, password: 'long-pass-1', home_dir: '/tmp/x', permissions: { '/': ['*'] } }, /"username" length/],
    ['POST', '/api/v2/groups', { name: long }, /"name" length must be less than or equal to 255/],
    ['POST', '/api/v2/folders', { name: long, mapped_path: '/tmp/x' }, /"name" length must be less than or equal to 255/],
    ['POST', '/api/v2/apikeys', { name: long, scope: 1 }, /"name" length must be less than or equal to 255/],
    ['POST', '/api/v2/apikeys', { name: 'k', scope: 1, admin: long }, /"admin" length must be less than or equal to 255/],
    ['POST', '/api/v2/apikeys', { name: 'k', scope: 2, user: long }, /"user" length must be less than or equal to 255/],
    ['POST', '/api/v2/eventactions', { name: long, type: 1 }, /"name" length must be less than or equal to 255/],
    ['POST', '/api/v2/eventrules', { name: long, trigger: 1, actions: [] }, /"name" length must be less than or equal to 255/],
  ];
  for (const [method, url, payload, re] of cases) {
    const r = await call(method, url, { token, payload });
    t.equal(r.status, 400, `${url} ${JSON.stringify(payload).slice(0, 60)}: ${r.message}`);
    t.match(r.message, re, url);
  }
});

import t from 'tap';
import { createTestApp } from '../../src/testing.js';
import { hashPassword } from '../../src/services/password.js';
import { User } from '../../src/data/entities/index.js';

const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());
const token = await ta.adminToken();

t.test('roles CRUD, references and role-scoped admins', async (t) => {
  const c = await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'team-a', description: 'A' } });
  t.equal(c.statusCode, 201, c.payload);
  t.equal(c.headers.location, '/api/v2/roles/team-a');
  t.match(c.result, { name: 'team-a', description: 'A', users: [], admins: [] });
  t.equal((await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'team-a' } })).statusCode, 400, 'duplicate');
  t.equal((await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'a/b' } })).statusCode, 400);
  t.equal((await ta.inject('POST', '/api/v2/roles', { token, payload: {} })).statusCode, 400);
  await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'team-b' } });
  t.same(((await ta.inject('GET', '/api/v2/roles?order=DESC', { token })).result as { name: string }[]).map((r) => r.name), ['team-b', 'team-a']);
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
  const mine = await ta.inject('POST', '/api/v2/admins', { token: lt, payload: { username: 'member-a', password: 'member-a-pass', permissions: ['view_users'] } });
  t.equal(mine.statusCode, 201);
  t.match(mine.result, { role: 'team-a' }, 'role forced to the creator role');
  t.equal((await ta.inject('POST', '/api/v2/admins', { token: lt, payload: { username: 'x-b', password: 'x', permissions: ['view_users'], role: 'team-b' } })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/roles', { token: lt })).statusCode, 403, 'role admins do not manage roles');

  const refused = await ta.inject('DELETE', '/api/v2/roles/team-a', { token });
  t.equal(refused.statusCode, 400);
  t.match(JSON.parse(refused.payload).message, /role "team-a" is still referenced by admin "lead-a", admin "member-a"/);
  t.match((await ta.inject('GET', '/api/v2/roles/team-a', { token })).result, { admins: ['lead-a', 'member-a'] });
  t.equal((await ta.inject('DELETE', '/api/v2/admins/lead-b', { token })).statusCode, 200);
  t.equal((await ta.inject('DELETE', '/api/v2/roles/team-b', { token })).statusCode, 200);
  t.equal((await ta.inject('DELETE', '/api/v2/roles/team-b', { token })).statusCode, 404);
});

async function addUser(username: string, password: string, filters: Record<string, unknown>) {
  const em = ta.app.orm.em.fork();
  em.create(User, {
    username, password_hash: await hashPassword(password), permissions: { '/': ['*'] }, filters,
    filesystem: { provider: 0 }, public_keys: [], custom_placeholders: [], oidc_custom_fields: {}, home_dir: '/tmp/x',
  } as never);
  await em.flush();
}

t.test('API keys: created once, hashed, scoped, bound, expiring', async (t) => {
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'bot', password: 'bot-pass', permissions: ['*'], filters: { allow_api_key_auth: true } } });
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
  for (const p of [{ scope: 1 }, { name: 'x', scope: 3 }, { name: 'x', scope: 1, user: 'kuser' }, { name: 'x', scope: 2, admin: 'bot' }, { name: 'x', scope: 1, admin: 'ghost' }, { name: 'x', scope: 1, expires_at: Date.now() - 1000 }]) {
    const r = await ta.inject('POST', '/api/v2/apikeys', { token, payload: p });
    t.equal(r.statusCode, 400, JSON.stringify(p));
  }

  // expiry: can be shortened, never extended or removed; expired keys are refused
  const exp = Date.now() + 3600_000;
  const ek = await ta.inject('POST', '/api/v2/apikeys', { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: exp } });
  const ekId = ek.headers['x-object-id'] as string;
  t.equal((await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: exp + 1000 } })).statusCode, 400);
  t.equal((await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: 0 } })).statusCode, 400);
  t.equal((await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 1, admin: 'bot', expires_at: Date.now() + 60_000 } })).statusCode, 200);
  t.equal((await ta.inject('PUT', `/api/v2/apikeys/${ekId}`, { token, payload: { name: 'exp', scope: 2, expires_at: Date.now() + 1000 } })).statusCode, 400, 'scope fixed');
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

import t from 'tap';
import { addUser, fileApp, PASSWORD, userRow } from '../helpers/user-files.js';
import type { ProviderEvent } from '../../src/events/event-types.js';
import type { EventBus } from '../../src/events/event-bus.js';
import { TOKENS } from '../../src/tokens.js';

const ta = await fileApp();
t.teardown(() => ta.close());
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOcJk8xUaHbuhh0Ofq6DSI4nTYcc+8mQbT0fUmA+3C8h test@host';
const provider: ProviderEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => {
  provider.push(e);
});

t.test('GET and PUT /user/profile', async (t) => {
  await addUser(ta, { username: 'pat', email: 'pat@example.com' });
  const token = await ta.userToken('pat', PASSWORD);
  const g = await ta.inject('GET', '/api/v2/user/profile', { token });
  t.equal(g.statusCode, 200);
  const noTwoFactor = { enabled: false, config_name: '', protocols: [], required_protocols: [] };
  t.same(JSON.parse(g.payload), {
    email: 'pat@example.com',
    description: '',
    allow_api_key_auth: false,
    public_keys: [],
    web_client: [],
    two_factor: noTwoFactor,
  });
  const p = await ta.inject('PUT', '/api/v2/user/profile', {
    token,
    payload: { email: 'new@example.com', description: 'Pat, sales', allow_api_key_auth: true, public_keys: [KEY] },
  });
  t.equal(p.statusCode, 200, p.payload);
  t.match(JSON.parse(p.payload), { message: String });
  t.same(JSON.parse((await ta.inject('GET', '/api/v2/user/profile', { token })).payload), {
    email: 'new@example.com',
    description: 'Pat, sales',
    allow_api_key_auth: true,
    public_keys: [KEY],
    web_client: [],
    two_factor: noTwoFactor,
  });
  t.match(provider.at(-1), { action: 'update', object_type: 'user', object_name: 'pat', username: 'pat', ip: '127.0.0.1' });
  for (const payload of [{ email: 'not-an-email' }, { public_keys: ['garbage'] }, { allow_api_key_auth: 'maybe' }, { description: 'x'.repeat(4097) }]) {
    const bad = await ta.inject('PUT', '/api/v2/user/profile', { token, payload });
    t.equal(bad.statusCode, 400, JSON.stringify(payload));
    t.match(JSON.parse(bad.payload), { message: String, error: 'Bad Request' });
  }
  // a member of another API revision is dropped, not refused (docs/api-compatibility.md)
  t.equal((await ta.inject('PUT', '/api/v2/user/profile', { token, payload: { email: 'pat@example.com', extra: 1 } })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/user/profile')).statusCode, 401);
  t.equal((await ta.inject('GET', '/api/v2/user/profile', { token: await ta.adminToken() })).statusCode, 401);
});

t.test('web client options limit what the profile may change', async (t) => {
  await addUser(ta, { username: 'quin', email: 'q@example.com', filters: { web_client: ['info-change-disabled', 'api-key-auth-change-disabled'] } });
  const token = await ta.userToken('quin', PASSWORD);
  const r = await ta.inject('PUT', '/api/v2/user/profile', { token, payload: { email: 'x@example.com', allow_api_key_auth: true, public_keys: [KEY] } });
  t.equal(r.statusCode, 200);
  t.same(
    JSON.parse((await ta.inject('GET', '/api/v2/user/profile', { token })).payload),
    {
      email: 'q@example.com',
      description: '',
      allow_api_key_auth: false,
      public_keys: [KEY],
      web_client: ['info-change-disabled', 'api-key-auth-change-disabled'],
      two_factor: { enabled: false, config_name: '', protocols: [], required_protocols: [] },
    },
    'only the public keys changed; the options are told',
  );
  await addUser(ta, { username: 'rory', filters: { web_client: ['info-change-disabled', 'api-key-auth-change-disabled', 'publickey-change-disabled'] } });
  const rt = await ta.userToken('rory', PASSWORD);
  const none = await ta.inject('PUT', '/api/v2/user/profile', { token: rt, payload: { email: 'x@example.com' } });
  t.equal(none.statusCode, 403);
  t.match(JSON.parse(none.payload), { message: /not allowed to change its profile/, error: 'Forbidden' });
});

t.test('PUT /user/changepwd verifies the current password', async (t) => {
  await addUser(ta, { username: 'sam' });
  const token = await ta.userToken('sam', PASSWORD);
  const wrong = await ta.inject('PUT', '/api/v2/user/changepwd', { token, payload: { current_password: 'nope', new_password: 'new-pass-1' } });
  t.equal(wrong.statusCode, 403);
  t.match(JSON.parse(wrong.payload), { message: /current password does not match/ });
  const same = await ta.inject('PUT', '/api/v2/user/changepwd', { token, payload: { current_password: PASSWORD, new_password: PASSWORD } });
  t.equal(same.statusCode, 400);
  for (const payload of [{}, { current_password: PASSWORD }, { new_password: 'x' }, { current_password: PASSWORD, new_password: '' }]) {
    t.equal((await ta.inject('PUT', '/api/v2/user/changepwd', { token, payload })).statusCode, 400, JSON.stringify(payload));
  }
  const before = (await userRow(ta, 'sam')).last_password_change;
  const ok = await ta.inject('PUT', '/api/v2/user/changepwd', { token, payload: { current_password: PASSWORD, new_password: 'new-pass-1' } });
  t.equal(ok.statusCode, 200, ok.payload);
  t.ok((await userRow(ta, 'sam')).last_password_change > before);
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'sam', password: PASSWORD } })).statusCode, 401, 'old password refused');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'sam', password: 'new-pass-1' } })).statusCode, 200);
  t.notOk(JSON.stringify(provider).includes('new-pass-1'), 'the password never reaches an event');

  await addUser(ta, { username: 'tess', filters: { web_client: ['password-change-disabled'] } });
  const tt = await ta.inject('PUT', '/api/v2/user/changepwd', {
    token: await ta.userToken('tess', PASSWORD),
    payload: { current_password: PASSWORD, new_password: 'other-pass-1' },
  });
  t.equal(tt.statusCode, 403);
  t.match(JSON.parse(tt.payload).message, /not allowed to change its password/);
});

t.test('profile routes take bearer tokens only', async (t) => {
  await addUser(ta, { username: 'uri', filters: { allow_api_key_auth: true } });
  const admin = await ta.adminToken();
  const k = await ta.inject('POST', '/api/v2/apikeys', { token: admin, payload: { name: 'uri-key', scope: 2, user: 'uri' } });
  const key = (k.result as { key: string }).key;
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { apiKey: key })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/user/profile', { apiKey: key })).statusCode, 401);
  t.equal((await ta.inject('PUT', '/api/v2/user/changepwd', { apiKey: key, payload: { current_password: PASSWORD, new_password: 'x-1' } })).statusCode, 401);
});

t.test("a user's own API keys (GET/POST /user/apikeys, DELETE /user/apikeys/{id}: an addition)", async (t) => {
  await addUser(ta, { username: 'vic' });
  const token = await ta.userToken('vic', PASSWORD);
  const off = await ta.inject('POST', '/api/v2/user/apikeys', { token, payload: { name: 'k1' } });
  t.equal(off.statusCode, 403, 'refused while API key login is off');
  t.match(JSON.parse(off.payload), { message: /API key login is off/, error: 'Forbidden' });
  t.equal((await ta.inject('PUT', '/api/v2/user/profile', { token, payload: { allow_api_key_auth: true } })).statusCode, 200);
  for (const payload of [{}, { name: '' }, { name: 'k', expires_at: -1 }]) {
    t.equal((await ta.inject('POST', '/api/v2/user/apikeys', { token, payload })).statusCode, 400, JSON.stringify(payload));
  }
  t.equal((await ta.inject('POST', '/api/v2/user/apikeys', { token, payload: { name: 'k', expires_at: 1000 } })).statusCode, 400, 'an expiry in the past');
  const made = await ta.inject('POST', '/api/v2/user/apikeys', { token, payload: { name: 'k1', description: 'backups' } });
  t.equal(made.statusCode, 201, made.payload);
  const { id, key } = JSON.parse(made.payload) as { id: string; key: string };
  t.equal(made.headers['x-object-id'], id);
  t.equal(made.headers.location, `/api/v2/user/apikeys/${id}`);
  t.ok(key.startsWith(`${id}.`), 'the key is answered once');
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { apiKey: key })).statusCode, 200, 'the key acts as vic');
  t.equal((await ta.inject('GET', '/api/v2/user/apikeys', { apiKey: key })).statusCode, 401, 'an API key cannot manage API keys');
  const listed = JSON.parse((await ta.inject('GET', '/api/v2/user/apikeys', { token })).payload) as Record<string, unknown>[];
  t.match(listed, [{ id, name: 'k1', description: 'backups', scope: 2, user: 'vic', admin: '' }]);
  t.notOk(JSON.stringify(listed).includes(key.split('.')[1]!), 'the secret is never listed');

  // another user sees none of vic's keys and cannot delete them
  await addUser(ta, { username: 'wyn', filters: { allow_api_key_auth: true } });
  const other = await ta.userToken('wyn', PASSWORD);
  t.same(JSON.parse((await ta.inject('GET', '/api/v2/user/apikeys', { token: other })).payload), []);
  t.equal((await ta.inject('DELETE', `/api/v2/user/apikeys/${id}`, { token: other })).statusCode, 404);
  t.equal((await ta.inject('DELETE', '/api/v2/user/apikeys/bad%20id', { token })).statusCode, 400);

  const del = await ta.inject('DELETE', `/api/v2/user/apikeys/${id}`, { token });
  t.equal(del.statusCode, 200, del.payload);
  t.equal((await ta.inject('GET', '/api/v2/user/dirs?path=/', { apiKey: key })).statusCode, 401, 'a deleted key is refused');
  t.same(JSON.parse((await ta.inject('GET', '/api/v2/user/apikeys', { token })).payload), []);
  t.equal((await ta.inject('GET', '/api/v2/user/apikeys')).statusCode, 401);
});

t.test('the profile tells the two-factor state', async (t) => {
  await addUser(ta, { username: 'xia', filters: { two_factor_protocols: ['SSH'] } });
  const token = await ta.userToken('xia', PASSWORD);
  const gen = JSON.parse((await ta.inject('POST', '/api/v2/user/totp/generate', { token, payload: { config_name: 'Default' } })).payload) as { secret: string };
  const saved = await ta.inject('POST', '/api/v2/user/totp/save', {
    token,
    payload: { enabled: true, config_name: 'Default', protocols: ['SSH', 'FTP'], secret: { status: 'Plain', payload: gen.secret } },
  });
  t.equal(saved.statusCode, 200, saved.payload);
  const p = JSON.parse((await ta.inject('GET', '/api/v2/user/profile', { token })).payload) as { two_factor: unknown };
  t.same(p.two_factor, { enabled: true, config_name: 'Default', protocols: ['SSH', 'FTP'], required_protocols: ['SSH'] });
});

t.test('GET /user/web-session/login-options (an addition, no credentials)', async (t) => {
  const r = await ta.inject('GET', '/api/v2/user/web-session/login-options');
  t.equal(r.statusCode, 200);
  t.same(JSON.parse(r.payload), { password_reset: false, oidc: false }, 'no mail server, no OpenID provider');
});

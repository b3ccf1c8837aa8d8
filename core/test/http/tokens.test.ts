import t from 'tap';
import { createTestApp, TEST_ADMIN } from '../../src/testing.js';
import { hashPassword } from '../../src/services/password.js';
import { User } from '../../src/data/entities/index.js';
import { totpCode, base32Encode } from '../../src/services/totp.js';

const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());

async function addUser(username: string, password: string, extra: Partial<User> = {}) {
  const em = ta.app.orm.em.fork();
  em.create(User, {
    username,
    password_hash: await hashPassword(password),
    permissions: { '/': ['*'] },
    filters: {},
    filesystem: { provider: 0 },
    public_keys: [],
    custom_placeholders: [],
    oidc_custom_fields: {},
    home_dir: '/tmp/x',
    ...extra,
  } as never);
  await em.flush();
}

t.test('GET /token issues a short-lived admin JWT', async (t) => {
  const r = await ta.inject('GET', '/api/v2/token', { basic: TEST_ADMIN });
  t.equal(r.statusCode, 200);
  const body = r.result as { access_token: string; expires_at: string };
  t.match(body.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const ttl = Date.parse(body.expires_at) - Date.now();
  t.ok(ttl > 19 * 60_000 && ttl <= 20 * 60_000, `default lifetime is 20 minutes (got ${ttl} ms)`);
  t.notOk(r.payload.includes(TEST_ADMIN.password), 'password not echoed');
});

t.test('bad credentials and missing credentials are 401 with a JSON body', async (t) => {
  for (const basic of [{ username: 'admin', password: 'nope' }, { username: 'ghost', password: 'x' }]) {
    const r = await ta.inject('GET', '/api/v2/token', { basic });
    t.equal(r.statusCode, 401);
    t.match(JSON.parse(r.payload), { message: String, error: 'Unauthorized' });
  }
  const none = await ta.inject('GET', '/api/v2/token');
  t.equal(none.statusCode, 401);
  const garbage = await ta.inject('GET', '/api/v2/admins', { token: 'not.a.jwt' });
  t.equal(garbage.statusCode, 401);
});

t.test('logout revokes the token before it expires', async (t) => {
  const token = await ta.adminToken();
  t.equal((await ta.inject('GET', '/api/v2/admins', { token })).statusCode, 200);
  const out = await ta.inject('GET', '/api/v2/logout', { token });
  t.equal(out.statusCode, 200);
  t.match(out.result, { message: String });
  t.equal((await ta.inject('GET', '/api/v2/admins', { token })).statusCode, 401, 'revoked token refused');
  t.equal((await ta.inject('GET', '/api/v2/logout', { token })).statusCode, 401);
});

t.test('user tokens: issued to active users, refused to disabled or expired ones', async (t) => {
  await addUser('alice', 'alice-pass-1');
  await addUser('bob', 'bob-pass-1', { status: 0 });
  await addUser('carol', 'carol-pass-1', { expiration_date: Date.now() - 1000 });
  const ok = await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'alice', password: 'alice-pass-1' } });
  t.equal(ok.statusCode, 200);
  for (const u of ['bob', 'carol']) {
    const r = await ta.inject('GET', '/api/v2/user/token', { basic: { username: u, password: `${u}-pass-1` } });
    t.equal(r.statusCode, 401, `${u} refused`);
  }
  const userToken = (ok.result as { access_token: string }).access_token;
  t.equal((await ta.inject('GET', '/api/v2/admins', { token: userToken })).statusCode, 401, 'user token refused on admin routes');
  const adminToken = await ta.adminToken();
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token: adminToken })).statusCode, 401, 'admin token refused on user routes');
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token: userToken })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token: userToken })).statusCode, 401);
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'alice', password: 'alice-pass-1' } })).statusCode, 401, 'users cannot get admin tokens');
});

t.test('user IP filters and denied protocols refuse the login', async (t) => {
  await addUser('dave', 'dave-pass-1', { filters: { denied_ip: ['127.0.0.0/8'] } });
  await addUser('erin', 'erin-pass-1', { filters: { allowed_ip: ['10.0.0.0/8'] } });
  await addUser('fred', 'fred-pass-1', { filters: { denied_protocols: ['HTTP'] } });
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'dave', password: 'dave-pass-1' } })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'erin', password: 'erin-pass-1' } })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'fred', password: 'fred-pass-1' } })).statusCode, 403);
});

t.test('X-SERVICE-OTP is required and checked when 2FA is enabled', async (t) => {
  const secrets = ta.app.container.resolve<import('../../src/secrets/secret.js').SecretsService>(Symbol.for('ferry.Secrets'));
  const secret = base32Encode(Buffer.from('12345678901234567890'));
  await addUser('gina', 'gina-pass-1', {
    filters: { totp_config: { enabled: true, config_name: 'Default', secret: await secrets.encrypt(secret), protocols: ['HTTP'] } },
  });
  const basic = { username: 'gina', password: 'gina-pass-1' };
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic })).statusCode, 401, 'no code');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic, headers: { 'x-service-otp': '000000' } })).statusCode, 401, 'wrong code');
  const code = totpCode(secret, Math.floor(Date.now() / 30000));
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic, headers: { 'x-service-otp': code } })).statusCode, 200, 'right code');
});

t.test('a token signed with another key or with another audience is refused', async (t) => {
  const jwt = (await import('jsonwebtoken')).default;
  const forged = jwt.sign({ sub: 'admin', aud: 'admin', jti: 'x', uid: 1, exp: Math.floor(Date.now() / 1000) + 60 }, 'wrong-key');
  t.equal((await ta.inject('GET', '/api/v2/admins', { token: forged })).statusCode, 401);
  const expired = await ta.adminToken();
  const parts = JSON.parse(Buffer.from(expired.split('.')[1]!, 'base64url').toString());
  t.equal(parts.aud, 'admin');
});

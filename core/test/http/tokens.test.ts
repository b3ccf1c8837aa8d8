import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { createTestApp, usePostgres, TEST_ADMIN } from '../../src/testing.js';
import { Admin, User } from '../../src/data/entities/index.js';
import { base32Encode, base32Decode, hotp } from '../helpers/rfc6238.js';
import { TokenService } from '../../src/auth/token.service.js';
import { TOKENS } from '../../src/tokens.js';
import { insertUserRow } from '../helpers/user-rows.js';
import type { SecretsService } from '../../src/secrets/secret.js';

/** The TOTP code of a base32 secret at a time step (independent implementation, test/helpers/rfc6238.ts). */
const totpCode = (secret: string, step: number) => hotp(base32Decode(secret), step);

const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());

const addUser = (username: string, password: string, extra: Partial<User> = {}) => insertUserRow(ta, username, password, extra);

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
  for (const basic of [
    { username: 'admin', password: 'nope' },
    { username: 'ghost', password: 'x' },
  ]) {
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
  t.equal(
    (await ta.inject('GET', '/api/v2/token', { basic: { username: 'alice', password: 'alice-pass-1' } })).statusCode,
    401,
    'users cannot get admin tokens',
  );
});

t.test('a token records the login time of the account (last_login), a refused login does not', async (t) => {
  await addUser('dora', 'dora-pass-1');
  const adminToken = await ta.adminToken();
  const lastLogin = async (route: string) => ((await ta.inject('GET', route, { token: adminToken })).result as { last_login?: number }).last_login ?? 0;
  t.equal(await lastLogin('/api/v2/users/dora'), 0, 'never logged in');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'dora', password: 'wrong-pass-1' } })).statusCode, 401);
  t.equal(await lastLogin('/api/v2/users/dora'), 0, 'a wrong password records nothing');
  const before = Date.now();
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'dora', password: 'dora-pass-1' } })).statusCode, 200);
  const user = await lastLogin('/api/v2/users/dora');
  t.ok(user >= before && user <= Date.now(), `user: ${user}`);
  const adminBefore = Date.now();
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: TEST_ADMIN })).statusCode, 200);
  const admin = await lastLogin(`/api/v2/admins/${TEST_ADMIN.username}`);
  t.ok(admin >= adminBefore && admin <= Date.now(), `admin: ${admin}`);
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

t.test('forged, expired, cross-audience and incomplete tokens are refused', async (t) => {
  const key = await ta.app.container.resolve(TokenService).signingKey();
  const uid = ((await ta.inject('GET', `/api/v2/admins/${TEST_ADMIN.username}`, { token: await ta.adminToken() })).result as { id: number }).id;
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: TEST_ADMIN.username, aud: 'admin', jti: 'a'.repeat(32), uid, iat: now, exp: now + 600 };
  const sign = (c: Record<string, unknown>, k = key) => jwt.sign(c, k, { algorithm: 'HS256', noTimestamp: true });
  const status = async (token: string) => (await ta.inject('GET', '/api/v2/admins', { token })).statusCode;

  t.equal(await status(sign(claims)), 200, 'the reference token, signed with the server key, is accepted');
  t.equal(await status(sign(claims, 'wrong-key')), 401, 'another key');
  const expired = await ta.inject('GET', '/api/v2/admins', { token: sign({ ...claims, iat: now - 1300, exp: now - 100 }) });
  t.equal(expired.statusCode, 401, 'expired');
  t.match(JSON.parse(expired.payload), { error: 'Unauthorized', message: /expired/i });
  t.equal(await status(sign({ ...claims, aud: 'user' })), 401, 'a user-audience token on an admin route');
  const { jti: _jti, ...noJti } = claims;
  t.equal(await status(sign(noJti)), 401, 'no token id (could not be revoked)');
  t.equal(await status(sign({ ...claims, uid: uid + 1000 })), 401, 'account id of another (deleted and re-created) account');
  t.equal(await status(sign({ ...claims, sub: 'ghost' })), 401, 'unknown account');
  t.equal(await status(sign({ ...claims, sub: `${TEST_ADMIN.username}\u0000` })), 401, 'a subject with a NUL (was a 500 on PostgreSQL)');
  t.equal(await status(sign({ ...claims, sub: 'adm\ud800' })), 401, 'a subject with a lone surrogate');
  t.equal(await status(sign({ ...claims, jti: 'a\u0000b' })), 401, 'a token id with a NUL');
  t.equal(await status(sign({ ...claims, sub: 42 })), 401, 'a subject that is not a string');
  const [, payload] = sign(claims).split('.');
  const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
  t.equal(await status(none), 401, 'alg none');

  await addUser('tina', 'tina-pass-1');
  const userToken = await ta.userToken('tina', 'tina-pass-1');
  const decoded = jwt.decode(userToken) as Record<string, unknown>;
  t.equal(decoded.aud, 'user');
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token: sign({ ...decoded, exp: now - 100 }) })).statusCode, 401, 'expired user token');
});

t.test('logout routes need a token', async (t) => {
  for (const u of ['/api/v2/logout', '/api/v2/user/logout']) {
    const r = await ta.inject('GET', u);
    t.equal(r.statusCode, 401, u);
    t.match(JSON.parse(r.payload), { error: 'Unauthorized' });
  }
});

t.test('X-SERVICE-OTP for admins with 2FA', async (t) => {
  const secrets = ta.app.container.resolve<SecretsService>(TOKENS.Secrets);
  const secret = base32Encode(Buffer.from('abcdefghijabcdefghij'));
  const token = await ta.adminToken();
  t.equal(
    (await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'otp-admin', password: 'otp-admin-pass', permissions: ['*'] } })).statusCode,
    201,
  );
  const basic = { username: 'otp-admin', password: 'otp-admin-pass' };
  t.equal((await ta.inject('GET', '/api/v2/token', { basic })).statusCode, 200, 'no 2FA: no code needed');
  const em = ta.app.orm.em.fork();
  const a = await em.findOneOrFail(Admin, { username: 'otp-admin' });
  a.filters = { ...a.filters, totp_config: { enabled: true, config_name: 'Default', secret: await secrets.encrypt(secret) } };
  await em.flush();

  const none = await ta.inject('GET', '/api/v2/token', { basic });
  t.equal(none.statusCode, 401, 'no code');
  t.match(JSON.parse(none.payload).message, /X-SERVICE-OTP/);
  const step = Math.floor(Date.now() / 30000);
  const valid = new Set([-1, 0, 1, 2].map((d) => totpCode(secret, step + d)));
  const wrong = ['000000', '111111', '222222', '333333', '444444'].find((c) => !valid.has(c))!;
  const bad = await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': wrong } });
  t.equal(bad.statusCode, 401, 'wrong code');
  t.match(JSON.parse(bad.payload).message, /invalid two-factor authentication code/);
  t.equal((await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': 'abc' } })).statusCode, 401, 'malformed code');
  const ok = await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': totpCode(secret, Math.floor(Date.now() / 30000)) } });
  t.equal(ok.statusCode, 200, 'right code');
  const issued = (ok.result as { access_token: string }).access_token;
  t.equal((await ta.inject('GET', '/api/v2/admins', { token: issued })).statusCode, 200, 'the token works without a code');
  t.equal(
    (await ta.inject('GET', '/api/v2/token', { basic: { ...basic, password: 'wrong' }, headers: { 'x-service-otp': totpCode(secret, step) } })).statusCode,
    401,
    'a code does not replace the password',
  );
});

t.test('two nodes sharing one database: token lifetime from config, logout holds on both', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-tokens-nodes-'));
  const shared = usePostgres() ? {} : { data_provider: { name: 'ferry.db' } };
  const n1 = await createTestApp({ plugins: [], dataDir: dir, config: shared });
  const n2 = await createTestApp({
    plugins: [],
    dataDir: dir,
    config: { ...shared, httpd: { token_lifetime: 3 } },
    ...(n1.databaseUrl ? { databaseUrl: n1.databaseUrl } : {}),
  });
  t.teardown(async () => {
    await n2.close();
    await n1.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // httpd.token_lifetime (minutes) sets expires_at and the JWT expiry
  const r = await n2.inject('GET', '/api/v2/token', { basic: TEST_ADMIN });
  t.equal(r.statusCode, 200);
  const body = r.result as { access_token: string; expires_at: string };
  const ttl = Date.parse(body.expires_at) - Date.now();
  t.ok(ttl > 2 * 60_000 && ttl <= 3 * 60_000, `3 minutes configured (got ${ttl} ms)`);
  t.equal((jwt.decode(body.access_token) as { exp: number }).exp * 1000, Date.parse(body.expires_at), 'expires_at matches the JWT');

  // a token of node 1 works on node 2 until it logs out on node 1
  const tok = await n1.adminToken();
  t.equal((await n1.inject('GET', '/api/v2/admins', { token: tok })).statusCode, 200);
  t.equal((await n2.inject('GET', '/api/v2/admins', { token: tok })).statusCode, 200, 'node 2 accepts a token of node 1');
  t.equal((await n1.inject('GET', '/api/v2/logout', { token: tok })).statusCode, 200);
  t.equal((await n2.inject('GET', '/api/v2/admins', { token: tok })).statusCode, 401, 'revoked on node 2 too');
  t.equal((await n1.inject('GET', '/api/v2/admins', { token: tok })).statusCode, 401);
  t.equal((await n2.inject('GET', '/api/v2/admins', { token: body.access_token })).statusCode, 200, 'other tokens unaffected');
});

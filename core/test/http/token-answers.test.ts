import t from 'tap';
import jwt from 'jsonwebtoken';
import { createTestApp, TEST_ADMIN } from '../../src/testing.js';
import { TokenService } from '../../src/auth/token.service.js';
import { insertUserRow } from '../helpers/user-rows.js';

// The whole answer to each kind of refused bearer token (status, body,
// WWW-Authenticate), and that a token accepted once is still refused once
// expired or revoked: the strategies check tokens in their `verify`
// (core/src/http/auth-strategies.ts) and remember verified signatures
// (core/src/http/verified-tokens.ts); what clients see must be what
// hapi-auth-jwt2's own checks answered.

const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());

const answer = async (url: string, token: string) => {
  const r = await ta.inject('GET', url, { token });
  return { status: r.statusCode, body: JSON.parse(r.payload) as unknown, auth: r.headers['www-authenticate'] };
};

t.test('refused tokens: the same answers as before', async (t) => {
  const key = await ta.app.container.resolve(TokenService).signingKey();
  const uid = ((await ta.inject('GET', `/api/v2/admins/${TEST_ADMIN.username}`, { token: await ta.adminToken() })).result as { id: number }).id;
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: TEST_ADMIN.username, aud: 'admin', jti: 'b'.repeat(32), uid, iat: now, exp: now + 600 };
  const sign = (c: Record<string, unknown>, k = key) => jwt.sign(c, k, { algorithm: 'HS256', noTimestamp: true });
  const invalid = (m: string) => ({ status: 401, body: { message: m, error: 'Unauthorized' }, auth: `Bearer error="${m}"` });
  const cases: [string, string, string, unknown][] = [
    ['forged', '/api/v2/admins', sign(claims, 'wrong-key'), invalid('Invalid token')],
    ['expired', '/api/v2/admins', sign({ ...claims, exp: now - 100 }), invalid('Expired token')],
    ['not yet valid', '/api/v2/admins', sign({ ...claims, nbf: now + 600 }), invalid('Invalid token')],
    ['user audience on an admin route', '/api/v2/admins', sign({ ...claims, aud: 'user' }), invalid('Invalid token')],
    ['no token id', '/api/v2/admins', sign({ sub: claims.sub, aud: 'admin', uid, exp: now + 600 }), invalid('Invalid credentials')],
    ['unknown account', '/api/v2/admins', sign({ ...claims, sub: 'ghost' }), invalid('Invalid credentials')],
    ['admin audience on a user route', '/api/v2/user/profile', sign(claims), invalid('Invalid token')],
    [
      'garbage',
      '/api/v2/admins',
      'not-a-token',
      { status: 401, body: { message: 'Missing authentication', error: 'Unauthorized' }, auth: 'Bearer error="Invalid token format", APIKey, Cookie' },
    ],
    ['three garbage parts', '/api/v2/admins', 'a.b.c', invalid('Invalid token format')],
  ];
  // (these answers were read off the strategies as they were before `verify`, hapi-auth-jwt2's own checks)
  for (const [name, url, token, expected] of cases) {
    t.same(await answer(url, token), expected, name);
    t.same(await answer(url, token), expected, `${name}, asked again`);
  }
  t.equal((await answer('/api/v2/admins', sign(claims))).status, 200, 'the reference token is accepted');
});

t.test('a token accepted before is refused once revoked, and once its account is deleted', async (t) => {
  await insertUserRow(ta, 'rita', 'rita-pass-1');
  const token = await ta.userToken('rita', 'rita-pass-1');
  t.equal((await answer('/api/v2/user/profile', token)).status, 200);
  t.equal((await answer('/api/v2/user/profile', token)).status, 200, 'again (its signature remembered)');
  t.equal((await ta.inject('GET', '/api/v2/user/logout', { token })).statusCode, 200, 'logout');
  t.match(await answer('/api/v2/user/profile', token), { status: 401, body: { message: 'the token has been revoked' } }, 'revoked');

  const other = await ta.userToken('rita', 'rita-pass-1');
  t.equal((await answer('/api/v2/user/profile', other)).status, 200);
  const admin = await ta.adminToken();
  t.equal((await ta.inject('DELETE', '/api/v2/users/rita', { token: admin })).statusCode, 200, 'the account deleted');
  t.match(await answer('/api/v2/user/profile', other), { status: 401, body: { message: 'Invalid credentials' } }, 'a deleted account');
});

import t from 'tap';
import path from 'node:path';
import { createTestApp } from '../../src/testing.js';
import { oidcBindingFor, startOidcProvider } from '../helpers/oidc-provider.js';
import { totpNow } from '../helpers/rfc6238.js';

// Ferry's 2FA and identity-provider (OIDC) logins (docs/two-factor.md, "Logging in with a code"):
// the code is asked on the token routes only (X-SERVICE-OTP); an OIDC login is not asked for it,
// an account that must have 2FA is not held to it on an OIDC login's token, and such a token
// cannot read or change the 2FA settings that protect the password logins.
const op = await startOidcProvider(
  {
    accounts: { guard: { role: 'admin' }, strict: { role: 'admin' }, carol: { role: 'user' }, dave: { role: 'user' } },
    redirectBase: 'http://127.0.0.1:18082',
    claims: { openid: ['sub'], profile: ['preferred_username'], role: ['role'] },
  },
  (fn) => t.teardown(fn),
);
const ta = await createTestApp({
  config: {
    httpd: {
      bindings: [
        {
          address: '127.0.0.1',
          port: 0,
          oidc: oidcBindingFor(op, 'http://127.0.0.1:18082'),
        },
      ],
    },
  },
});
t.teardown(() => ta.close());
const server = ta.app.servers[0]!;
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, any>;

async function must(r: Promise<{ statusCode: number; payload: string }>, status: number, what: string) {
  const res = await r;
  if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode} ${res.payload}`);
  return res;
}
/** A password token (with the current TOTP code when `secret` is given). */
async function passwordToken(kind: 'admin' | 'user', username: string, secret?: string): Promise<string> {
  const url = kind === 'admin' ? '/api/v2/token' : '/api/v2/user/token';
  const headers: Record<string, string> = secret ? { 'x-service-otp': totpNow(secret) } : {};
  const r = await must(ta.inject('GET', url, { basic: { username, password: `${username}-pass-1` }, headers }), 200, `${username} token`);
  return json(r).access_token as string;
}
async function enrol(kind: 'admin' | 'user', token: string): Promise<string> {
  const g = await must(ta.inject('POST', `/api/v2/${kind}/totp/generate`, { token, payload: { config_name: 'Default' } }), 200, 'generate');
  const secret = json(g).secret as string;
  const payload = { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: secret } };
  await must(ta.inject('POST', `/api/v2/${kind}/totp/save`, { token, payload }), 200, 'save');
  return secret;
}
/** The whole OIDC login through the provider; the callback's answer. */
async function oidcLogin(target: 'admin' | 'user', login: string) {
  const start = await server.inject({ method: 'GET', url: `/api/v2/oidc/login?target=${target}`, remoteAddress: '127.0.0.1' });
  if (start.statusCode !== 302) throw new Error(`login: ${start.statusCode} ${start.payload}`);
  const cookie = String([start.headers['set-cookie']].flat()[0]).split(';')[0]!;
  const cb = await op.drive(String(start.headers.location), login);
  return server.inject({ method: 'GET', url: cb.pathname + cb.search, headers: { cookie }, remoteAddress: '127.0.0.1' });
}

await must(
  ta.inject('POST', '/api/v2/admins', { token: adminToken, payload: { username: 'guard', password: 'guard-pass-1', permissions: ['*'] } }),
  201,
  'guard',
);
await must(
  ta.inject('POST', '/api/v2/admins', {
    token: adminToken,
    payload: { username: 'strict', password: 'strict-pass-1', permissions: ['*'], filters: { require_two_factor: true } },
  }),
  201,
  'strict',
);
for (const [username, filters] of [
  ['carol', {}],
  ['dave', { two_factor_protocols: ['HTTP'] }],
] as const) {
  await must(
    ta.inject('POST', '/api/v2/users', {
      token: adminToken,
      payload: { username, password: `${username}-pass-1`, home_dir: path.join(ta.dataDir, username), permissions: { '/': ['*'] }, filters },
    }),
    201,
    username,
  );
}

await t.test('an admin with TOTP on: the password login needs the code, the OIDC login does not', async (t) => {
  const secret = await enrol('admin', await passwordToken('admin', 'guard'));
  const noCode = await ta.inject('GET', '/api/v2/token', { basic: { username: 'guard', password: 'guard-pass-1' } });
  t.equal(noCode.statusCode, 401, 'password alone');
  t.match(json(noCode).message, /X-SERVICE-OTP/);

  const r = await oidcLogin('admin', 'guard');
  t.equal(r.statusCode, 200, r.payload);
  const token = json(r).access_token as string;
  t.equal((await ta.inject('GET', '/api/v2/admins', { token })).statusCode, 200, 'the OIDC token works');

  // the 2FA settings protect password logins: an OIDC token neither reads nor changes them
  for (const [method, url, payload] of [
    ['GET', '/api/v2/admin/2fa/recoverycodes', undefined],
    ['POST', '/api/v2/admin/2fa/recoverycodes', undefined],
    ['POST', '/api/v2/admin/totp/save', { enabled: false }],
    ['POST', '/api/v2/admin/totp/generate', { config_name: 'Default' }],
    ['POST', '/api/v2/admin/totp/validate', { config_name: 'Default', passcode: totpNow(secret), secret }],
  ] as const) {
    const res = await ta.inject(method, url, { token, payload });
    t.equal(res.statusCode, 403, `${method} ${url}`);
    t.match(json(res), { message: /identity-provider \(OIDC\) login/, error: 'Forbidden' });
  }
  t.equal((await ta.inject('GET', '/api/v2/admin/totp/configs', { token })).statusCode, 200, 'the configurations stay readable');
  const read = json(await ta.inject('GET', '/api/v2/admins/guard', { token: adminToken }));
  t.equal(read.filters.totp_config.enabled, true, 'TOTP is still on');
  // with a password token (and code) the same settings are reachable
  const pw = await passwordToken('admin', 'guard', secret);
  t.equal((await ta.inject('GET', '/api/v2/admin/2fa/recoverycodes', { token: pw })).statusCode, 200);
});

await t.test('an admin that must have 2FA: held to it with a password token, not with an OIDC token', async (t) => {
  const pw = await passwordToken('admin', 'strict');
  const held = await ta.inject('GET', '/api/v2/admins', { token: pw });
  t.equal(held.statusCode, 403);
  t.match(json(held).message, /two-factor authentication is required for this admin/);
  const r = await oidcLogin('admin', 'strict');
  t.equal(r.statusCode, 200, r.payload);
  t.equal((await ta.inject('GET', '/api/v2/admins', { token: json(r).access_token })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/admins', { token: pw })).statusCode, 403, 'the password token is still held');
});

await t.test('users: TOTP on HTTP is not asked on an OIDC login; two_factor_protocols does not hold its token', async (t) => {
  const secret = await enrol('user', await passwordToken('user', 'carol'));
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'carol', password: 'carol-pass-1' } })).statusCode, 401);
  const r = await oidcLogin('user', 'carol');
  t.equal(r.statusCode, 200, r.payload);
  const token = json(r).access_token as string;
  t.equal((await ta.inject('GET', '/api/v2/user/profile', { token })).statusCode, 200);
  const codes = await ta.inject('GET', '/api/v2/user/2fa/recoverycodes', { token });
  t.equal(codes.statusCode, 403);
  t.match(json(codes).message, /GET \/api\/v2\/user\/token/);
  t.equal((await ta.inject('POST', '/api/v2/user/totp/save', { token, payload: { enabled: false } })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/user/2fa/recoverycodes', { token: await passwordToken('user', 'carol', secret) })).statusCode, 200);

  const dave = await ta.inject('GET', '/api/v2/user/profile', { token: await passwordToken('user', 'dave') });
  t.equal(dave.statusCode, 403, 'a password token of a user that must have 2FA on HTTP');
  const d = await oidcLogin('user', 'dave');
  t.equal(d.statusCode, 200, d.payload);
  t.equal((await ta.inject('GET', '/api/v2/user/profile', { token: json(d).access_token })).statusCode, 200);
});

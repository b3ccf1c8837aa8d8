import t from 'tap';
import { createTestApp } from '../../src/testing.js';
import { DefenderService, defenderHostId } from '../../src/security/defender.service.js';
import { insertUserRow } from '../helpers/user-rows.js';
import { startOidcProvider } from '../helpers/oidc-provider.js';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// A provider that follows OIDC to the letter (conformIdTokenClaims): the ID token carries only
// sub; role, email and department come from the userinfo endpoint.
const ACCOUNTS: Record<string, { role: string; email?: string; department?: string }> = {
  alice: { role: 'user', email: 'alice@example.test', department: 'it' },
  boss: { role: 'Admin', email: 'boss@example.test' },
  ghost: { role: 'user' },
  newbie: { role: 'user', email: 'newbie@example.test', department: 'sales' },
  chief: { role: 'admin', email: 'chief@example.test', department: 'board' },
};
const REDIRECT_BASE = 'http://127.0.0.1:18081';
const op = await startOidcProvider(
  {
    accounts: ACCOUNTS,
    redirectBase: REDIRECT_BASE,
    claims: { openid: ['sub'], email: ['email'], profile: ['preferred_username'], role: ['role'], org: ['department'] },
    conformIdTokenClaims: true,
  },
  (fn) => t.teardown(fn),
);
const { issuer: ISSUER, client: CLIENT } = op;
const driveProvider = op.drive;

const ta = await createTestApp({
  plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/actions-builtin' }],
  config: {
    event_manager: { rules_cache_ttl: 0 },
    defender: { enabled: true, threshold: 1000, score_invalid: 3, score_valid: 1 },
    httpd: {
      bindings: [
        {
          address: '127.0.0.1',
          port: 0,
          oidc: {
            config_url: ISSUER,
            ...CLIENT,
            redirect_base_url: REDIRECT_BASE,
            role_field: 'role',
            admin_roles: ['admin'],
            scopes: ['openid', 'profile', 'email', 'role', 'org'],
            allow_insecure_http: true,
            custom_fields: ['department'],
          },
        },
      ],
    },
  },
});
t.teardown(() => ta.close());
const server = ta.app.servers[0]!;
const defender = ta.app.container.resolve(DefenderService);
const adminToken = await ta.adminToken();
await insertUserRow(ta, 'alice', 'unused-password-1');
{
  const r = await ta.inject('POST', '/api/v2/admins', {
    token: adminToken,
    payload: { username: 'boss', password: 'unused-password-1', permissions: ['*'], status: 1 },
  });
  if (r.statusCode !== 201) throw new Error(r.payload);
}

const get = (url: string, o: { cookie?: string; ip?: string } = {}) =>
  server.inject({ method: 'GET', url, headers: o.cookie ? { cookie: o.cookie } : {}, remoteAddress: o.ip ?? '127.0.0.1' });

/** GET /oidc/login: the provider URL and the browser cookie Ferry set. */
async function startLogin(target: 'admin' | 'user') {
  const r = await get(`/api/v2/oidc/login?target=${target}`);
  if (r.statusCode !== 302) throw new Error(`login answered ${r.statusCode}: ${r.payload}`);
  const set = String([r.headers['set-cookie']].flat()[0]);
  return { url: new URL(String(r.headers.location)), setCookie: set, cookie: set.split(';')[0]! };
}
const cbPath = (u: URL) => u.pathname + u.search;
async function score(ip: string): Promise<number> {
  const r = await ta.inject('GET', `/api/v2/defender/hosts/${defenderHostId(ip)}`, { token: adminToken });
  return r.statusCode === 404 ? 0 : (JSON.parse(r.payload) as { score: number }).score;
}

await t.test('the login sets an HttpOnly, SameSite=Lax cookie bound to its state', async (t) => {
  const s = await startLogin('user');
  t.match(s.setCookie, /^ferry_oidc_login=[\w-]{43}; Path=\/api\/v2\/oidc; Max-Age=300; HttpOnly; SameSite=Lax$/);
  const other = await startLogin('user');
  t.not(other.cookie, s.cookie, 'one mark per login');
});

await t.test('claims from the userinfo endpoint: the role claim makes an admin login, a user login works', async (t) => {
  const s = await startLogin('admin');
  const cb = await driveProvider(s.url.href, 'boss');
  const r = await get(cbPath(cb), { cookie: s.cookie });
  t.equal(r.statusCode, 200, r.payload);
  const body = JSON.parse(r.payload) as { access_token: string };
  t.equal(
    (await server.inject({ method: 'GET', url: '/api/v2/admins', headers: { authorization: `Bearer ${body.access_token}` } })).statusCode,
    200,
    'an admin token',
  );
  t.match(String([r.headers['set-cookie']].flat()[0]), /^ferry_oidc_login=; .*Max-Age=0/, 'the cookie is cleared');
  const u = await startLogin('user');
  const ok = await get(cbPath(await driveProvider(u.url.href, 'alice')), { cookie: u.cookie });
  t.equal(ok.statusCode, 200, ok.payload);
});

await t.test('the callback must come from the browser that started the login', async (t) => {
  const s = await startLogin('user');
  const cb = await driveProvider(s.url.href, 'alice');
  const none = await get(cbPath(cb), { ip: '10.7.0.1' });
  t.equal(none.statusCode, 400);
  t.match(JSON.parse(none.payload), { message: /does not come from the browser that started the login/, error: 'Bad Request' });
  const other = await startLogin('user');
  const wrong = await get(cbPath(cb), { cookie: other.cookie, ip: '10.7.0.1' });
  t.equal(wrong.statusCode, 400, 'the cookie of another login (an attacker sending a victim their own callback)');
  const forged = await get(cbPath(cb), { cookie: 'ferry_oidc_login=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ip: '10.7.0.1' });
  t.equal(forged.statusCode, 400);
  await defender.idle();
  t.equal(await score('10.7.0.1'), 9, 'each refused callback scores score_invalid');
  const right = await get(cbPath(cb), { cookie: s.cookie });
  t.equal(right.statusCode, 200, 'refused callbacks do not spend the state');
});

await t.test('failed OIDC logins are scored by the defender', async (t) => {
  const s = await startLogin('user');
  const cb = await driveProvider(s.url.href, 'ghost');
  const r = await get(cbPath(cb), { cookie: s.cookie, ip: '10.8.0.1' });
  t.equal(r.statusCode, 401);
  t.same(JSON.parse(r.payload), { message: 'no user "ghost" exists in Ferry', error: 'Unauthorized' });
  await defender.idle();
  t.equal(await score('10.8.0.1'), 3, 'an unknown account scores score_invalid');
  // a user login of an admin account: refused by the role claim (403), score_valid
  const a = await startLogin('user');
  const refused = await get(cbPath(await driveProvider(a.url.href, 'boss')), { cookie: a.cookie, ip: '10.8.0.2' });
  t.equal(refused.statusCode, 403, refused.payload);
  await defender.idle();
  t.equal(await score('10.8.0.2'), 1);
});

await t.test('action 13 (IDP account check): a trigger-7 rule creates the user who logs in from template_user', async (t) => {
  const homes = mkdtempSync(path.join(os.tmpdir(), 'ferry-idp-'));
  const post = (url: string, payload: unknown) => ta.inject('POST', url, { token: adminToken, payload });
  const refused = await post('/api/v2/eventactions', { name: 'idp-none', type: 13, options: { idp_config: { mode: 0 } } });
  t.equal(refused.statusCode, 400);
  t.match(JSON.parse(refused.payload).message, /needs "template_user" or "template_admin"/);
  const template_user = JSON.stringify({
    username: '{{.Name}}',
    email: '{{.Email}}',
    status: 1,
    home_dir: `${homes}/{{.Name}}`,
    permissions: { '/': ['*'] },
    description: 'role {{.Role}}',
    additional_info: '{{.IDPFields.department}}',
  });
  const template_admin =
    '{"username": "{{.Name}}", "email": "{{.Email}}", "status": 1, "permissions": ["view_users"], "password": "generated-Pw-1{{.IDPFields.department}}", "additional_info": {{toJson .IDPFields.department}}}';
  let r = await post('/api/v2/eventactions', { name: 'idp-provision', type: 13, options: { idp_config: { mode: 0, template_user, template_admin } } });
  t.equal(r.statusCode, 201, r.payload);
  r = await post('/api/v2/eventrules', {
    name: 'idp-provisioning',
    trigger: 7,
    conditions: { idp_login_event: 0 },
    actions: [{ name: 'idp-provision', order: 1, relation_options: { execute_sync: true, stop_on_failure: true } }],
  });
  t.equal(r.statusCode, 201, r.payload);

  const s = await startLogin('user');
  const login = await get(cbPath(await driveProvider(s.url.href, 'newbie')), { cookie: s.cookie });
  t.equal(login.statusCode, 200, login.payload);
  const token = (JSON.parse(login.payload) as { access_token: string }).access_token;
  const profile = await server.inject({ method: 'GET', url: '/api/v2/user/profile', headers: { authorization: `Bearer ${token}` } });
  t.equal(profile.statusCode, 200, 'the new user is logged in');
  const u = JSON.parse((await ta.inject('GET', '/api/v2/users/newbie', { token: adminToken })).payload);
  t.match(u, {
    username: 'newbie',
    email: 'newbie@example.test',
    status: 1,
    description: 'role user',
    additional_info: 'sales',
    home_dir: path.join(homes, 'newbie'),
  });

  // an admin login provisions an admin from template_admin (role claim from userinfo)
  const a = await startLogin('admin');
  const adminLogin = await get(cbPath(await driveProvider(a.url.href, 'chief')), { cookie: a.cookie });
  t.equal(adminLogin.statusCode, 200, adminLogin.payload);
  t.match(JSON.parse((await ta.inject('GET', '/api/v2/admins/chief', { token: adminToken })).payload), {
    username: 'chief',
    email: 'chief@example.test',
    permissions: ['view_users'],
    additional_info: 'board',
  });

  // mode 0 updates the account at each login; mode 1 only creates
  await ta.inject('PUT', '/api/v2/users/newbie', { token: adminToken, payload: { ...u, description: 'changed by hand' } });
  const again = await startLogin('user');
  t.equal((await get(cbPath(await driveProvider(again.url.href, 'newbie')), { cookie: again.cookie })).statusCode, 200);
  t.equal(
    JSON.parse((await ta.inject('GET', '/api/v2/users/newbie', { token: adminToken })).payload).description,
    'role user',
    'mode 0: updated from the template',
  );
  r = await ta.inject('PUT', '/api/v2/eventactions/idp-provision', {
    token: adminToken,
    payload: { name: 'idp-provision', type: 13, options: { idp_config: { mode: 1, template_user, template_admin } } },
  });
  t.equal(r.statusCode, 200, r.payload);
  await ta.inject('PUT', '/api/v2/users/newbie', { token: adminToken, payload: { ...u, description: 'changed by hand' } });
  const third = await startLogin('user');
  t.equal((await get(cbPath(await driveProvider(third.url.href, 'newbie')), { cookie: third.cookie })).statusCode, 200);
  t.equal(
    JSON.parse((await ta.inject('GET', '/api/v2/users/newbie', { token: adminToken })).payload).description,
    'changed by hand',
    'mode 1: an existing account is left alone',
  );

  // a template rendering another account aborts the login
  r = await ta.inject('PUT', '/api/v2/eventactions/idp-provision', {
    token: adminToken,
    payload: {
      name: 'idp-provision',
      type: 13,
      options: { idp_config: { mode: 0, template_user: '{"username": "someone-else", "home_dir": "/tmp/x", "permissions": {"/": ["*"]}}' } },
    },
  });
  t.equal(r.statusCode, 200, r.payload);
  const bad = await startLogin('user');
  const badLogin = await get(cbPath(await driveProvider(bad.url.href, 'alice')), { cookie: bad.cookie });
  t.equal(badLogin.statusCode, 403, badLogin.payload);
  t.match(JSON.parse(badLogin.payload).message, /rejected by event rule "idp-provisioning"/);
});

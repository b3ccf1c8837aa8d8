import t from 'tap';
import crypto from 'node:crypto';
import { createTestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import { User } from '../../src/data/entities/index.js';
import { EventManager } from '../../src/event-manager/event-manager.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { LogEvent } from '../../src/events/event-types.js';
import { Setting } from '../../src/data/entities/index.js';
import { loadConfig } from '../../src/config/load.js';
import { claimAt, customFields, loginKind, roleValues } from '../../src/auth/oidc/oidc-claims.js';
import { insertUserRow } from '../helpers/user-rows.js';
import { rsaJwk, startOidcProvider } from '../helpers/oidc-provider.js';

// ---- a real OpenID provider (oidc-provider), in process on 127.0.0.1 (helpers/oidc-provider.ts) ----

const ACCOUNTS: Record<string, Record<string, unknown>> = {
  alice: { role: 'user', email: 'alice@example.test', department: 'it', employee_id: 'e-1' },
  boss: { role: 'ADMIN', email: 'boss@example.test', department: 'board' },
  multi: { role: ['staff', 'Admin'] },
  ghost: { role: 'user' },
  sleepy: { role: 'user' },
  blocked: { role: 'user' },
  newbie: { role: 'user', department: 'sales' },
};
const REDIRECT_BASE = 'http://127.0.0.1:18080';
const op = await startOidcProvider(
  {
    accounts: ACCOUNTS,
    redirectBase: REDIRECT_BASE,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username'], role: ['role'], org: ['department', 'employee_id'] },
    commonClaims: { email_verified: true },
  },
  (fn) => t.teardown(fn),
);
const { issuer: ISSUER, client: CLIENT, callback: CALLBACK } = op;
const driveProvider = op.drive;
const otherKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });

// ---- Ferry with OIDC on its bindings ----

type Srv = Awaited<ReturnType<typeof createTestApp>>['server'];
const OIDC = {
  config_url: ISSUER,
  ...CLIENT,
  redirect_base_url: REDIRECT_BASE,
  role_field: 'role',
  admin_roles: ['admin'],
  scopes: ['openid', 'profile', 'email', 'role', 'org'],
  custom_fields: ['department', 'employee_id'],
  allow_insecure_http: true,
};
const FIXTURE = { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'oidc' } };
const ta = await createTestApp({
  plugins: [FIXTURE],
  config: {
    event_manager: { rules_cache_ttl: 0 },
    httpd: {
      bindings: [
        { address: '127.0.0.1', port: 0, oidc: OIDC },
        { address: '127.0.0.1', port: 0 },
        { address: '127.0.0.1', port: 0, oidc: { ...OIDC, implicit_roles: true } },
        { address: '127.0.0.1', port: 0, oidc: OIDC },
        { address: '127.0.0.1', port: 0, oidc: { ...OIDC, client_id: 'another-client' } },
        { address: '127.0.0.1', port: 0, oidc: { ...OIDC, config_url: 'http://127.0.0.1:1' } },
      ],
    },
  },
});
t.teardown(() => ta.close());
const [main, plain, implicit, sigCheck, otherClient, unreachable] = ta.app.servers as (typeof ta.server)[] as [Srv, Srv, Srv, Srv, Srv, Srv];
const adminToken = await ta.adminToken();
const mgr = ta.app.container.resolve(EventManager);
const bus = ta.app.container.resolve<EventBus>(TOKENS.EventBus);
const logins: LogEvent[] = [];
bus.on('log', (e) => void (e.protocol === 'OIDC' && logins.push(e)));

const addUser = (username: string, extra: Partial<User> = {}) => insertUserRow(ta, username, 'unused-password-1', extra);
for (const u of ['alice', 'blocked']) await addUser(u);
await addUser('sleepy', { status: 0 });
for (const a of ['boss', 'multi']) {
  const r = await ta.inject('POST', '/api/v2/admins', {
    token: adminToken,
    payload: { username: a, password: 'unused-password-1', permissions: ['*'], status: 1 },
  });
  if (r.statusCode !== 201) throw new Error(r.payload);
}

/** The browser's cookie of each login started (by state): the callback must come from the browser that started the login. */
const browserCookies = new Map<string, string>();
const get = (server: typeof ta.server, url: string, token?: string) => {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const state = new URL(url, 'http://x').searchParams.get('state');
  const cookie = state ? browserCookies.get(state) : undefined;
  if (cookie) headers.cookie = cookie;
  return server.inject({ method: 'GET', url, headers, remoteAddress: '127.0.0.1' });
};

/** GET /oidc/login on a binding: the provider's authorization URL. */
async function startLogin(target: 'admin' | 'user', server = main): Promise<URL> {
  const r = await get(server, `/api/v2/oidc/login?target=${target}`);
  if (r.statusCode !== 302) throw new Error(`login answered ${r.statusCode}: ${r.payload}`);
  const u = new URL(String(r.headers.location));
  const set = r.headers['set-cookie'];
  browserCookies.set(u.searchParams.get('state')!, String(Array.isArray(set) ? set[0] : set).split(';')[0]!);
  return u;
}
const callbackPath = (u: URL) => u.pathname + u.search;

/** The whole flow for one account: login redirect, provider, callback. */
async function oidcLogin(login: string, target: 'admin' | 'user', server = main) {
  const cb = await driveProvider((await startLogin(target, server)).href, login);
  return get(server, callbackPath(cb));
}

// ---- event rules (trigger 7) recorded by the fixture action type ----

type Entry = { app: string; rule: string; action: string; trigger: number; username?: string; params: Record<string, any> };
const LOG = ((globalThis as any).__ferryActionLog ??= []) as Entry[];
const take = () => {
  const out = LOG.filter((e) => e.app === 'oidc');
  for (const e of out) LOG.splice(LOG.indexOf(e), 1);
  return out;
};
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    await mgr.idle();
  }
};
async function post(url: string, payload: unknown) {
  const r = await ta.inject('POST', url, { token: adminToken, payload });
  if (r.statusCode !== 201) throw new Error(r.payload);
}

t.test('login redirects to the provider with state, nonce and PKCE (S256)', async (t) => {
  const r = await get(main, '/api/v2/oidc/login?target=admin');
  t.equal(r.statusCode, 302);
  t.equal(r.headers['cache-control'], 'no-store');
  const u = new URL(String(r.headers.location));
  t.equal(u.origin, ISSUER);
  const q = Object.fromEntries(u.searchParams);
  t.match(q, { client_id: 'ferry', response_type: 'code', redirect_uri: CALLBACK, code_challenge_method: 'S256', scope: 'openid profile email role org' });
  t.match(q.state, /^[\w-]{20,}$/);
  t.match(q.nonce, /^[\w-]{20,}$/);
  t.match(q.code_challenge, /^[\w-]{43}$/);
  t.notOk(u.href.includes(CLIENT.client_secret), 'no client secret in the URL');
  const again = new URL(String((await get(main, '/api/v2/oidc/login')).headers.location));
  t.not(again.searchParams.get('state'), q.state, 'a fresh state per login');

  const down = await get(unreachable, '/api/v2/oidc/login');
  t.equal(down.statusCode, 502, 'discovery fails');
  t.same(JSON.parse(down.payload), {
    message: 'the identity provider at http://127.0.0.1:1 could not be reached or its discovery document is invalid',
    error: 'Bad Gateway',
  });

  const bad = await get(main, '/api/v2/oidc/login?target=root');
  t.equal(bad.statusCode, 400);
  t.match(JSON.parse(bad.payload), { message: /target/, error: 'Bad Request' });
  for (const url of ['/api/v2/oidc/login', '/api/v2/oidc/callback?state=x&code=y']) {
    const off = await get(plain, url);
    t.equal(off.statusCode, 404, `${url} without OIDC on the binding`);
    t.same(JSON.parse(off.payload), { message: 'OIDC login is not configured on this binding', error: 'Not Found' });
  }
});

t.test('full flow: a user login returns a Ferry user token', async (t) => {
  const r = await oidcLogin('alice', 'user');
  t.equal(r.statusCode, 200, r.payload);
  const body = JSON.parse(r.payload) as { access_token: string; expires_at: string };
  t.match(body, { access_token: /^[\w-]+\.[\w-]+\.[\w-]+$/, expires_at: String });
  t.ok(Date.parse(body.expires_at) > Date.now());
  const profile = await get(main, '/api/v2/user/profile', body.access_token);
  t.equal(profile.statusCode, 200, profile.payload);
  t.equal((await get(main, '/api/v2/admins', body.access_token)).statusCode, 401, 'not an admin token');
  t.match(logins.pop(), { event: 5, protocol: 'OIDC', username: 'alice', message: 'user OIDC login' });
});

t.test('role claim: admin values match case-insensitively (string or array claim)', async (t) => {
  for (const who of ['boss', 'multi']) {
    const r = await oidcLogin(who, 'admin');
    t.equal(r.statusCode, 200, `${who}: ${r.payload}`);
    const token = (JSON.parse(r.payload) as { access_token: string }).access_token;
    const admins = await get(main, '/api/v2/admins', token);
    t.equal(admins.statusCode, 200, `${who}'s token works on an admin route`);
    t.equal((await get(main, '/api/v2/user/profile', token)).statusCode, 401, 'not a user token');
  }
  // the claim decides, not the requested target
  const asUser = await oidcLogin('boss', 'user');
  t.equal(asUser.statusCode, 403);
  t.match(JSON.parse(asUser.payload), { message: /makes "boss" an admin, not a user/, error: 'Forbidden' });
  const asAdmin = await oidcLogin('alice', 'admin');
  t.equal(asAdmin.statusCode, 403);
  t.match(JSON.parse(asAdmin.payload), { message: /makes "alice" a user, not an admin/ });
});

t.test('implicit_roles: the requested target decides, the role claim is ignored', async (t) => {
  const r = await oidcLogin('boss', 'user', implicit);
  t.equal(r.statusCode, 401, 'no user "boss": the target made it a user login');
  t.match(JSON.parse(r.payload), { message: 'no user "boss" exists in Ferry', error: 'Unauthorized' });
  const u = await oidcLogin('alice', 'user', implicit);
  t.equal(u.statusCode, 200, u.payload);
});

t.test('unknown and disabled accounts are refused', async (t) => {
  const ghost = await oidcLogin('ghost', 'user');
  t.equal(ghost.statusCode, 401);
  t.same(JSON.parse(ghost.payload), { message: 'no user "ghost" exists in Ferry', error: 'Unauthorized' });
  const sleepy = await oidcLogin('sleepy', 'user');
  t.equal(sleepy.statusCode, 403);
  t.same(JSON.parse(sleepy.payload), { message: 'the account is disabled', error: 'Forbidden' });
});

t.test('state: unknown, missing, replayed and foreign states are refused', async (t) => {
  const cb = await driveProvider((await startLogin('user')).href, 'alice');
  const first = await get(main, callbackPath(cb));
  t.equal(first.statusCode, 200, first.payload);
  const replay = await get(main, callbackPath(cb));
  t.equal(replay.statusCode, 400, 'a state is used once');
  t.same(JSON.parse(replay.payload), { message: 'unknown, expired or already used OIDC state: start the login again', error: 'Bad Request' });

  const forged = new URL(cb);
  forged.searchParams.set('state', 'forged-state-value-0123456789');
  t.equal((await get(main, callbackPath(forged))).statusCode, 400, 'unknown state');
  const missing = await get(main, `/api/v2/oidc/callback?code=${encodeURIComponent(cb.searchParams.get('code')!)}`);
  t.equal(missing.statusCode, 400);
  t.match(JSON.parse(missing.payload), { message: /"state" is required/ });

  // the state lives in the database: another binding (its own service instance) finishes the login
  const elsewhere = await get(implicit, callbackPath(await driveProvider((await startLogin('user')).href, 'alice')));
  t.equal(elsewhere.statusCode, 200, elsewhere.payload);
  // a login started for another client is not finished with this one
  const foreign = await get(main, `/api/v2/oidc/callback?state=${(await startLogin('user', otherClient)).searchParams.get('state')}&code=x`);
  t.equal(foreign.statusCode, 400);
  t.same(JSON.parse(foreign.payload), { message: 'this OIDC login was started for another identity provider or client', error: 'Bad Request' });
  // an expired state (its expiry moved to the past in the store)
  const late = await driveProvider((await startLogin('user')).href, 'alice');
  const em = ta.app.orm.em.fork();
  const rows = await em.find(Setting, { key: { $like: 'oidc_pending:%' } });
  t.ok(rows.length >= 1, 'pending logins are stored');
  t.notOk(
    rows.some((r) => r.key.includes(late.searchParams.get('state')!)),
    'keyed by a hash, not the state itself',
  );
  for (const r of rows) await em.nativeUpdate(Setting, { key: r.key }, { value: JSON.stringify({ ...JSON.parse(r.value), expires_at: Date.now() - 1 }) });
  const expired = await get(main, callbackPath(late));
  t.equal(expired.statusCode, 400, 'expired');
  t.match(JSON.parse(expired.payload), { message: /expired/ });

  // the state of one login with the code of another: the provider bound the code to the other PKCE challenge
  const a = await startLogin('user');
  const cb2 = await driveProvider((await startLogin('user')).href, 'alice');
  const swapped = new URL(cb2);
  swapped.searchParams.set('state', a.searchParams.get('state')!);
  const sw = await get(main, callbackPath(swapped));
  t.equal(sw.statusCode, 401, sw.payload);
  t.match(JSON.parse(sw.payload), { error: 'Unauthorized' });
});

t.test('the provider refusing the login, and a wrong nonce, are 401', async (t) => {
  const state = (await startLogin('user')).searchParams.get('state')!;
  const denied = await get(main, `/api/v2/oidc/callback?state=${state}&error=access_denied&error_description=nope`);
  t.equal(denied.statusCode, 401);
  t.same(JSON.parse(denied.payload), { message: 'the identity provider refused the login: access_denied', error: 'Unauthorized' });

  const auth = await startLogin('user');
  auth.searchParams.set('nonce', 'not-the-nonce-ferry-stored-000000');
  const cb = await driveProvider(auth.href, 'alice');
  const r = await get(main, callbackPath(cb));
  t.equal(r.statusCode, 401, r.payload);
  t.match(JSON.parse(r.payload), { message: /failed validation: .*nonce/, error: 'Unauthorized' });
});

t.test('the ID token signature is checked against the provider JWKS', async (t) => {
  op.overrideJwks(JSON.stringify({ keys: [rsaJwk(otherKey.publicKey, 'k1')] }));
  t.teardown(() => op.overrideJwks(undefined));
  const r = await oidcLogin('alice', 'user', sigCheck);
  t.equal(r.statusCode, 401, r.payload);
  t.match(JSON.parse(r.payload), { message: /failed validation/, error: 'Unauthorized' });
});

t.test('trigger 7: idp_login_event 1 fires for user logins only, 2 for admin logins only; .IDPFields holds custom_fields', async (t) => {
  await post('/api/v2/eventactions', {
    name: 'idp-rec',
    type: 101,
    options: { test_config: { message: '{{.Event}} {{.Name}} {{.Role}} {{.Email}} {{.Protocol}}' } },
  });
  await post('/api/v2/eventrules', { name: 'idp-users', trigger: 7, conditions: { idp_login_event: 1 }, actions: [{ name: 'idp-rec' }] });
  await post('/api/v2/eventrules', { name: 'idp-admins', trigger: 7, conditions: { idp_login_event: 2 }, actions: [{ name: 'idp-rec' }] });
  t.teardown(async () => {
    for (const r of ['idp-users', 'idp-admins']) await ta.inject('DELETE', `/api/v2/eventrules/${r}`, { token: adminToken });
  });
  take();

  t.equal((await oidcLogin('alice', 'user')).statusCode, 200);
  await settle();
  const users = take();
  t.same(
    users.map((e) => e.rule),
    ['idp-users'],
    'only the users rule',
  );
  const u = users[0]!;
  t.equal(u.trigger, 7);
  t.equal(u.username, 'alice');
  t.equal(u.params.Event, 'IDP login user');
  t.same(u.params.IDPFields, { department: 'it', employee_id: 'e-1' }, 'only the custom_fields claims');
  t.equal(u.params.Role, 'user', 'the role claim is .Role');
  t.equal(u.params.Email, 'alice@example.test');
  t.equal(u.params.Initiator.User.Username, 'alice');

  t.equal((await oidcLogin('boss', 'admin')).statusCode, 200);
  await settle();
  const admins = take();
  t.same(
    admins.map((e) => e.rule),
    ['idp-admins'],
    'only the admins rule',
  );
  t.equal(admins[0]!.params.Event, 'IDP login admin');
  t.equal(admins[0]!.params.Role, 'ADMIN');
  t.same(admins[0]!.params.IDPFields, { department: 'board' }, 'absent custom fields are left out');
  t.equal(admins[0]!.params.Initiator.Admin.Username, 'boss');
});

t.test('a failing sync rule aborts the login; a sync rule may provision the account', async (t) => {
  await post('/api/v2/eventactions', { name: 'idp-fail', type: 101, options: { test_config: { fail: true } } });
  await post('/api/v2/eventrules', {
    name: 'idp-gate',
    trigger: 7,
    conditions: { idp_login_event: 1, options: { names: [{ pattern: 'blocked' }] } },
    actions: [{ name: 'idp-fail', relation_options: { execute_sync: true, stop_on_failure: true } }],
  });
  const blocked = await oidcLogin('blocked', 'user');
  t.equal(blocked.statusCode, 403, blocked.payload);
  t.same(JSON.parse(blocked.payload), { message: 'login rejected by event rule "idp-gate": action "idp-fail" failed', error: 'Forbidden' });
  t.notOk(blocked.payload.includes('test action'), "the action's own error is not sent");
  t.equal((await oidcLogin('alice', 'user')).statusCode, 200, 'other users are not affected');
  await settle();
  take();

  // a test action type standing in for account provisioning (type 13 itself: oidc-security.test.ts)
  const registry = ta.app.container.resolve<PluginRegistry>(TOKENS.Plugins);
  registry.registerActionType('oidc-test', {
    type: 113,
    key: 'test-provision',
    create: () => ({
      async execute(c) {
        const fields = c.params.IDPFields as Record<string, string>;
        await addUser(c.username!, { additional_info: `provisioned for ${fields.department}` } as Partial<User>);
      },
    }),
  });
  await post('/api/v2/eventactions', { name: 'idp-provision', type: 113, options: {} });
  await post('/api/v2/eventrules', {
    name: 'idp-provisioning',
    trigger: 7,
    conditions: { idp_login_event: 1, options: { names: [{ pattern: 'newbie' }] } },
    actions: [{ name: 'idp-provision', relation_options: { execute_sync: true, stop_on_failure: true } }],
  });
  const r = await oidcLogin('newbie', 'user');
  t.equal(r.statusCode, 200, r.payload);
  const token = (JSON.parse(r.payload) as { access_token: string }).access_token;
  t.equal((await get(main, '/api/v2/user/profile', token)).statusCode, 200, 'the provisioned user is logged in');
  const rec = await ta.app.orm.em.fork().findOne(User, { username: 'newbie' });
  t.equal(rec?.additional_info, 'provisioned for sales');
});

t.test('configuration: an enabled oidc section is validated at start', async (t) => {
  const bind = (oidc: Record<string, unknown>) => ({ overrides: { httpd: { bindings: [{ port: 0, oidc }] } }, env: {} });
  const ok = loadConfig(bind({ config_url: 'https://idp.example.test/realms/x', client_id: 'c', redirect_base_url: 'https://ferry.example.test' })).config;
  t.match(ok.httpd.bindings[0]!.oidc, {
    username_field: 'preferred_username',
    admin_roles: ['admin'],
    scopes: ['openid', 'profile', 'email'],
    insecure_skip_signature_check: false,
    state_ttl: 300,
  });
  t.equal(loadConfig({ env: {} }).config.httpd.bindings[0]!.oidc.config_url, '', 'off by default');
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { config_url: 'http://idp.example.test', client_id: 'c', redirect_base_url: 'https://f.test' },
      /config_url is http:\/\/: use https or set allow_insecure_http/,
    ],
    [{ config_url: 'ftp://idp.example.test', client_id: 'c', redirect_base_url: 'https://f.test' }, /config_url must be an http\(s\) URL/],
    [{ config_url: 'https://idp.example.test', redirect_base_url: 'https://f.test' }, /client_id is required/],
    [{ config_url: 'https://idp.example.test', client_id: 'c' }, /redirect_base_url must be/],
    [{ config_url: 'https://idp.example.test', client_id: 'c', redirect_base_url: 'https://f.test', scopes: ['email'] }, /scopes must include "openid"/],
    [{ config_url: 'https://idp.example.test', client_id: 'c', redirect_base_url: 'https://f.test', state_ttl: 5 }, /state_ttl/],
  ];
  for (const [oidc, re] of cases) t.throws(() => loadConfig(bind(oidc)), re, JSON.stringify(oidc));
});

t.test('claim mapping: dotted paths, string or array roles, custom fields', async (t) => {
  const claims = { sub: 's', 'a.b': 'flat', realm_access: { roles: ['viewer', 'Ferry-Admin'] }, role: 'ADMIN', n: 3, dept: 'it', nested: { x: 1 } };
  t.equal(claimAt(claims, 'a.b'), 'flat', 'a top-level claim with a dot wins');
  t.same(claimAt(claims, 'realm_access.roles'), ['viewer', 'Ferry-Admin']);
  t.equal(claimAt(claims, 'realm_access.missing'), undefined);
  t.equal(claimAt(claims, 'n.x'), undefined, 'no path through a non-object');
  t.same(roleValues(claims, 'role'), ['ADMIN']);
  t.same(roleValues(claims, 'n'), [], 'a number is no role');
  t.same(roleValues(claims, ''), []);
  const o = { implicit_roles: false, role_field: 'realm_access.roles', admin_roles: ['ferry-admin'] };
  t.equal(loginKind(o, claims, 'user'), 'admin', 'case-insensitive match in an array claim');
  t.equal(loginKind({ ...o, admin_roles: ['admin'] }, claims, 'admin'), 'user');
  t.equal(loginKind({ ...o, implicit_roles: true }, claims, 'user'), 'user', 'implicit roles: the target');
  t.same(customFields(claims, ['dept', 'nested', 'absent']), { dept: 'it', nested: { x: 1 } });
});

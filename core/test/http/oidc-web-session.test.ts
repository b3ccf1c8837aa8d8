import t from 'tap';
import { createTestApp } from '../../src/testing.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { LogEvent } from '../../src/events/event-types.js';
import { insertUserRow } from '../helpers/user-rows.js';
import { oidcBindingFor, startOidcProvider } from '../helpers/oidc-provider.js';

// An OIDC login started with web=1 ends in a web session cookie and a redirect to the web client
// (a real OpenID provider in process, helpers/oidc-provider.ts).

const REDIRECT_BASE = 'http://127.0.0.1:18081';
const op = await startOidcProvider(
  {
    accounts: { alice: { role: 'user' }, boss: { role: 'admin' } },
    redirectBase: REDIRECT_BASE,
    claims: { openid: ['sub'], profile: ['preferred_username'], role: ['role'] },
  },
  (fn) => t.teardown(fn),
);
const ta = await createTestApp({
  config: {
    httpd: {
      bindings: [{ address: '127.0.0.1', port: 0, oidc: oidcBindingFor(op, REDIRECT_BASE) }],
    },
  },
});
t.teardown(() => ta.close());
await insertUserRow(ta, 'alice', 'unused-password-1');
const bus = ta.app.container.resolve<EventBus>(TOKENS.EventBus);
const logins: LogEvent[] = [];
t.teardown(bus.on('log', (e) => void logins.push(e)));

const get = (url: string, headers: Record<string, string> = {}) => ta.server.inject({ method: 'GET', url, headers, remoteAddress: '127.0.0.1' });
const cookiesOf = (r: { headers: Record<string, unknown> }) => {
  const set = r.headers['set-cookie'];
  return (Array.isArray(set) ? set : set ? [set] : []).map(String);
};

/** The whole flow with web=1: the callback's answer. */
async function webLogin(login: string) {
  const start = await get('/api/v2/oidc/login?target=user&web=1');
  if (start.statusCode !== 302) throw new Error(`login: ${start.statusCode} ${start.payload}`);
  const browser = cookiesOf(start)[0]!.split(';')[0]!;
  const cb = await op.drive(String(start.headers.location), login);
  return get(cb.pathname + cb.search, { cookie: browser });
}

t.test('web=1: the callback sets the session cookie and redirects to the web client', async (t) => {
  const r = await webLogin('alice');
  t.equal(r.statusCode, 302, r.payload);
  t.equal(r.headers.location, '/web/client/');
  t.equal(r.headers['cache-control'], 'no-store');
  const cookies = cookiesOf(r);
  t.ok(
    cookies.some((c) => c.startsWith('ferry_oidc_login=;')),
    'the login cookie cleared',
  );
  const web = cookies.find((c) => c.startsWith('ferry_web='))!;
  t.match(web, /^ferry_web=[\w-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/);
  t.notOk(r.payload.includes('access_token'), 'no token in the answer');
  t.match(logins.filter((e) => e.event === 5).pop(), { protocol: 'OIDC', username: 'alice', message: 'user OIDC login' });

  const cookie = web.split(';')[0]!;
  const s = await get('/api/v2/user/web-session', { cookie });
  t.equal(s.statusCode, 200, s.payload);
  const body = JSON.parse(s.payload) as Record<string, unknown>;
  t.match(body, { username: 'alice', csrf_token: /^[0-9a-f]{64}$/ });
  t.equal((await get('/api/v2/user/dirs', { cookie })).statusCode, 200, 'the cookie works on the user routes');
  const totp = await get('/api/v2/user/totp/configs', { cookie });
  t.equal(totp.statusCode, 200, 'an OIDC session needs no Ferry 2FA setup');
  const codes = await get('/api/v2/user/2fa/recoverycodes', { cookie });
  t.equal(codes.statusCode, 403, 'but may not read 2FA settings, like an OIDC token');
  t.match(JSON.parse(codes.payload), { message: /identity-provider \(OIDC\) login/ });
});

t.test('web=1 with target=admin: the admin session cookie and a redirect to the web admin', async (t) => {
  const made = await ta.inject('POST', '/api/v2/admins', {
    token: await ta.adminToken(),
    payload: { username: 'boss', password: 'unused-password-1', permissions: ['view_users', 'view_status'], status: 1 },
  });
  t.equal(made.statusCode, 201, made.payload);
  const start = await get('/api/v2/oidc/login?target=admin&web=1');
  t.equal(start.statusCode, 302, start.payload);
  const browser = cookiesOf(start)[0]!.split(';')[0]!;
  const cb = await op.drive(String(start.headers.location), 'boss');
  const r = await get(cb.pathname + cb.search, { cookie: browser });
  t.equal(r.statusCode, 302, r.payload);
  t.equal(r.headers.location, '/web/admin/');
  t.equal(r.headers['cache-control'], 'no-store');
  const cookies = cookiesOf(r);
  t.notOk(
    cookies.some((c) => c.startsWith('ferry_web=')),
    'no user session cookie',
  );
  const admin = cookies.find((c) => c.startsWith('ferry_admin='));
  t.match(admin, /^ferry_admin=[\w-]{43}; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Strict$/);
  t.notOk(r.payload.includes('access_token'), 'no token in the answer');
  t.match(logins.filter((e) => e.event === 5).pop(), { protocol: 'OIDC', username: 'boss', message: 'admin OIDC login' });

  const cookie = admin!.split(';')[0]!;
  const s = await get('/api/v2/admin/web-session', { cookie });
  t.equal(s.statusCode, 200, s.payload);
  t.match(JSON.parse(s.payload), {
    username: 'boss',
    csrf_token: /^[0-9a-f]{64}$/,
    permissions: ['view_users', 'view_status'],
    password_change_required: false,
  });
  t.equal((await get('/api/v2/users', { cookie })).statusCode, 200, "the cookie works on the routes of the admin's permissions");
  t.equal((await get('/api/v2/admins', { cookie })).statusCode, 403, 'and only on those');
  t.equal((await get('/api/v2/user/dirs', { cookie })).statusCode, 401, 'not on the user routes');
  const codes = await get('/api/v2/admin/2fa/recoverycodes', { cookie });
  t.equal(codes.statusCode, 403, "an OIDC session may not read the admin's 2FA settings, like an OIDC token");

  // a user's identity cannot open an admin session: the role claim must match the target
  const wrong = await get('/api/v2/oidc/login?target=admin&web=1');
  const wrongCb = await op.drive(String(wrong.headers.location), 'alice');
  const refused = await get(wrongCb.pathname + wrongCb.search, { cookie: cookiesOf(wrong)[0]!.split(';')[0]! });
  t.equal(refused.statusCode, 302, 'a refused web login goes back to the sign-in page it started from');
  const to = String(refused.headers.location);
  t.match(to, /^\/web\/admin\/#sso-error=/);
  t.match(decodeURIComponent(to.split('#sso-error=')[1]!), /role claim makes "alice" a user, not an admin/, 'with the reason in the fragment');
  t.notOk(
    cookiesOf(refused).some((c) => /^ferry_(admin|web)=[^;]/.test(c)),
    'no session cookie for a refused login',
  );
});

t.test('a refused user web login goes back to the web client with the reason; without web=1 it stays a JSON error', async (t) => {
  const r = await webLogin('boss'); // an admin at the provider, not a user
  t.equal(r.statusCode, 302);
  const to = String(r.headers.location);
  t.match(to, /^\/web\/client\/#sso-error=/);
  t.match(decodeURIComponent(to.split('#sso-error=')[1]!), /makes "boss" an admin, not a user/);
  t.notOk(
    cookiesOf(r).some((c) => /^ferry_(admin|web)=[^;]/.test(c)),
    'no session cookie',
  );
  const start = await get('/api/v2/oidc/login?target=user');
  const cb = await op.drive(String(start.headers.location), 'boss');
  const plain = await get(cb.pathname + cb.search, { cookie: cookiesOf(start)[0]!.split(';')[0]! });
  t.equal(plain.statusCode, 403);
  t.match(JSON.parse(plain.payload), { error: 'Forbidden', message: /makes "boss" an admin/ });
});

t.test('without web=1 the callback answers a token as before', async (t) => {
  const start = await get('/api/v2/oidc/login?target=user');
  const browser = cookiesOf(start)[0]!.split(';')[0]!;
  const cb = await op.drive(String(start.headers.location), 'alice');
  const r = await get(cb.pathname + cb.search, { cookie: browser });
  t.equal(r.statusCode, 200);
  t.match(JSON.parse(r.payload), { access_token: String });
  t.notOk(
    cookiesOf(r).some((c) => c.startsWith('ferry_web=')),
    'no session cookie',
  );
});

import t from 'tap';
import { createTestApp, TEST_ADMIN } from '../../src/testing.js';
import { RateLimiterService } from '../../src/security/rate-limiter.service.js';
import { DefenderService, defenderHostId } from '../../src/security/defender.service.js';
import { loadConfig } from '../../src/config/load.js';

const MINUTE = 60_000;
const off = { average: 0, period: 1000, burst: 0 };
const A = await createTestApp({
  config: {
    defender: { enabled: true, threshold: 100, score_limit_exceeded: 5, score_invalid: 0, score_valid: 0, score_no_auth: 0 },
    rate_limit: {
      // 2 per minute per host (a token every 30 s), scored by the defender
      token: { global: off, per_host: { average: 2, period: MINUTE, burst: 2, add_to_defender: true } },
      // 3 per minute for all clients together
      shares: { global: { average: 3, period: MINUTE, burst: 3 }, per_host: off },
      // 1 per 10 s per host, burst 2, not scored
      tus: { global: off, per_host: { average: 1, period: 10_000, burst: 2 } },
      // 5 per second per host
      api: { global: off, per_host: { average: 5, period: 1000, burst: 0 } },
      max_hosts: 20,
    },
  },
});
t.teardown(() => A.close());
const limiter = A.app.container.resolve(RateLimiterService);
const defender = A.app.container.resolve(DefenderService);
let now = Date.UTC(2030, 0, 1, 12, 0, 0);
limiter.clock = () => now;

const adminToken = await A.adminToken();
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

async function call(method: string, url: string, ip: string, headers: Record<string, string> = {}) {
  const r = await A.server.inject({ method, url, headers, remoteAddress: ip });
  const json = r.payload !== '' && String(r.headers['content-type'] ?? '').startsWith('application/json');
  return { status: r.statusCode, headers: r.headers, body: json ? JSON.parse(r.payload) : r.payload };
}
const token = (ip: string) => call('GET', '/api/v2/token', ip, { authorization: basic(TEST_ADMIN.username, TEST_ADMIN.password) });
const settle = async () => {
  await new Promise((r) => setImmediate(r));
  await defender.idle();
};
async function score(ip: string): Promise<number> {
  const r = await call('GET', `/api/v2/defender/hosts/${defenderHostId(ip)}`, '127.0.0.1', { authorization: `Bearer ${adminToken}` });
  return r.status === 404 ? 0 : (r.body as { score: number }).score;
}

await t.test('token routes: per-host limit, 429 with Retry-After, refill, defender score', async (t) => {
  t.equal((await token('10.1.0.1')).status, 200);
  t.equal((await token('10.1.0.1')).status, 200);
  const r = await token('10.1.0.1');
  t.equal(r.status, 429);
  t.equal(r.headers['retry-after'], '30', 'a token comes back every 30 s');
  t.same(Object.keys(r.body).sort(), ['error', 'message']);
  t.match(r.body.message, /too many requests from 10\.1\.0\.1 to the token routes/);
  // the user token route shares the scope
  t.equal((await call('GET', '/api/v2/user/token', '10.1.0.1', { authorization: basic('x', 'y') })).status, 429);
  await settle();
  t.equal(await score('10.1.0.1'), 10, 'two refusals of a per-host limiter with add_to_defender: 2 x score_limit_exceeded');
  t.equal((await token('10.1.0.2')).status, 200, 'another host has its own bucket');
  now += 29_000;
  t.equal((await token('10.1.0.1')).status, 429);
  t.equal((await token('10.1.0.1')).headers['retry-after'], '1');
  now += 1_000;
  t.equal((await token('10.1.0.1')).status, 200, 'one token refilled after 30 s');
  t.equal((await token('10.1.0.1')).status, 429);
});

await t.test('IP list type 3 exempts a host (and a network) from every limiter', async (t) => {
  const add = (ipornet: string) =>
    A.server.inject({
      method: 'POST',
      url: '/api/v2/iplists/3',
      headers: { authorization: `Bearer ${adminToken}` },
      payload: { ipornet, mode: 1, description: 'load tests' },
      remoteAddress: '127.0.0.1',
    });
  t.equal((await add('10.9.0.0/24')).statusCode, 201);
  for (let i = 0; i < 6; i++) t.equal((await token('10.9.0.7')).status, 200, `token request ${i + 1} of a safe-listed host`);
  for (let i = 0; i < 6; i++)
    t.equal((await call('GET', '/api/v2/shares/nope', '10.9.0.7')).status, 404, `share request ${i + 1} takes nothing from the global bucket`);
  t.equal((await token('10.9.1.7')).status, 200, 'outside the network: limited again');
  t.equal((await token('10.9.1.7')).status, 200);
  t.equal((await token('10.9.1.7')).status, 429);
});

await t.test('shares: a global limit shared by every host, never scored', async (t) => {
  now += MINUTE;
  t.equal((await call('GET', '/api/v2/shares/nope', '10.2.0.1')).status, 404);
  t.equal((await call('GET', '/api/v2/shares/nope/dirs', '10.2.0.2')).status, 404);
  t.equal((await call('POST', '/api/v2/shares/nope/actions/mkdir?path=a', '10.2.0.3')).status, 404);
  const r = await call('GET', '/api/v2/shares/nope', '10.2.0.4');
  t.equal(r.status, 429);
  t.equal(r.headers['retry-after'], '20');
  t.match(r.body.message, /from all clients to the shares routes/);
  await settle();
  t.equal(await score('10.2.0.4'), 0, 'a global refusal does not score the host');
  t.equal((await token('10.2.0.4')).status, 200, 'other scopes are not affected');
});

await t.test('TUS: its own scope, per-host burst', async (t) => {
  const tus = (ip: string) => call('OPTIONS', '/api/v2/shares-chunked-uploads', ip);
  const first = await tus('10.3.0.1');
  t.not(first.status, 429);
  t.not((await tus('10.3.0.1')).status, 429);
  const r = await tus('10.3.0.1');
  t.equal(r.status, 429);
  t.equal(r.headers['retry-after'], '10');
  await settle();
  t.equal(await score('10.3.0.1'), 0, 'add_to_defender false: no score');
  t.equal((await call('HEAD', '/api/v2/shares-chunked-uploads/abc', '10.3.0.1')).status, 429, 'every TUS path shares the scope');
});

await t.test('API: per-host limit with burst 0 meaning the average; /healthz is never limited', async (t) => {
  const auth = { authorization: `Bearer ${adminToken}` };
  for (let i = 0; i < 5; i++) t.equal((await call('GET', '/api/v2/version', '10.4.0.1', auth)).status, 200);
  const r = await call('GET', '/api/v2/version', '10.4.0.1', auth);
  t.equal(r.status, 429);
  t.equal(r.headers['retry-after'], '1');
  t.equal((await call('GET', '/api/v2/nothing-here', '10.4.0.1')).status, 429, 'unknown API paths are limited too (before routing)');
  for (let i = 0; i < 10; i++) t.equal((await call('GET', '/healthz', '10.4.0.1')).status, 200);
  now += 200;
  t.equal((await call('GET', '/api/v2/version', '10.4.0.1', auth)).status, 200, 'one request refilled after 200 ms');
});

await t.test('per-host state is bounded by max_hosts (least recently seen forgotten)', async (t) => {
  for (let i = 0; i < 60; i++) await call('GET', '/api/v2/version', `10.5.${i}.1`);
  t.ok(limiter.trackedHosts('api') <= 20, `${limiter.trackedHosts('api')} hosts remembered`);
  // hosts that stop sending are swept once their bucket is full again
  now += 2 * MINUTE;
  await call('GET', '/api/v2/version', '10.6.0.1');
  t.equal(limiter.trackedHosts('api'), 1);
});

await t.test('configuration: bad values are refused naming the key', async (t) => {
  t.throws(() => loadConfig({ env: { SERVICE_RATE_LIMIT__API__PER_HOST__AVERAGE: '-1' } }), /rate_limit\.api\.per_host\.average/);
  t.throws(() => loadConfig({ env: { SERVICE_RATE_LIMIT__TUS__GLOBAL__PERIOD: '0' } }), /rate_limit\.tus\.global\.period/);
  const { config: c } = loadConfig({ env: { SERVICE_RATE_LIMIT__TOKEN__PER_HOST__AVERAGE: '5' } });
  t.equal(c.rate_limit.token.per_host.average, 5);
  t.equal(c.rate_limit.api.global.average, 0, 'off by default');
});

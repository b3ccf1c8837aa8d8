import t from 'tap';
import { createTestApp } from '../../src/testing.js';
import { DefenderService, defenderHostId } from '../../src/security/defender.service.js';
import { totpNow } from '../helpers/rfc6238.js';

// Wrong two-factor codes score the sending host in the defender like failed logins of an existing
// account (score_valid): on POST .../totp/validate, and on the token routes (missing, wrong or
// replayed TOTP code, unknown recovery code). Each case uses its own source address.
const ta = await createTestApp({ config: { defender: { enabled: true, threshold: 1000, score_invalid: 3, score_valid: 2 } } });
t.teardown(() => ta.close());
const server = ta.app.servers[0]!;
const defender = ta.app.container.resolve(DefenderService);
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, any>;

type Opts = { ip: string; token?: string; basic?: [string, string]; otp?: string; payload?: unknown };
const send = (method: string, url: string, o: Opts) => {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.basic) headers.authorization = 'Basic ' + Buffer.from(o.basic.join(':')).toString('base64');
  if (o.otp !== undefined) headers['x-service-otp'] = o.otp;
  return server.inject({ method, url, headers, payload: o.payload as never, remoteAddress: o.ip });
};
async function score(ip: string): Promise<number> {
  await defender.idle();
  const r = await ta.inject('GET', `/api/v2/defender/hosts/${defenderHostId(ip)}`, { token: adminToken });
  return r.statusCode === 404 ? 0 : (json(r).score as number);
}
/** A code other than the current, previous and next ones of `secret`. */
const wrongCode = (secret: string) => {
  const near = new Set([-1, 0, 1].map((o) => totpNow(secret, 'sha1', o)));
  for (let i = 0; ; i++) {
    const c = String(123456 + i * 7919).slice(-6);
    if (!near.has(c)) return c;
  }
};

for (const [username, kind] of [
  ['vera', 'admin'],
  ['uma', 'user'],
] as const) {
  const payload =
    kind === 'admin'
      ? { username, password: `${username}-pass-1`, permissions: ['*'] }
      : { username, password: `${username}-pass-1`, home_dir: `${ta.dataDir}/${username}`, permissions: { '/': ['*'] } };
  const r = await ta.inject('POST', `/api/v2/${kind}s`, { token: adminToken, payload });
  if (r.statusCode !== 201) throw new Error(r.payload);
}
const userToken = json(await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'uma', password: 'uma-pass-1' } })).access_token as string;
const veraToken = json(await ta.inject('GET', '/api/v2/token', { basic: { username: 'vera', password: 'vera-pass-1' } })).access_token as string;

await t.test('POST .../totp/validate: a wrong passcode scores score_valid, a right one or a malformed request nothing', async (t) => {
  for (const [kind, token, ip] of [
    ['admin', veraToken, '10.20.0.1'],
    ['user', userToken, '10.20.0.2'],
  ] as const) {
    const g = await send('POST', `/api/v2/${kind}/totp/generate`, { ip, token, payload: { config_name: 'Default' } });
    t.equal(g.statusCode, 200, g.payload);
    const secret = json(g).secret as string;
    const url = `/api/v2/${kind}/totp/validate`;
    t.equal((await send('POST', url, { ip, token, payload: { config_name: 'Default', secret, passcode: totpNow(secret) } })).statusCode, 200);
    t.equal(await score(ip), 0, `${kind}: a right code scores nothing`);
    const bad = await send('POST', url, { ip, token, payload: { config_name: 'Default', secret, passcode: wrongCode(secret) } });
    t.equal(bad.statusCode, 400);
    t.match(json(bad), { message: /"passcode" does not match the secret/, error: 'Bad Request' });
    t.equal(await score(ip), 2, `${kind}: a wrong code scores score_valid`);
    await send('POST', url, { ip, token, payload: { config_name: 'Default', secret, passcode: wrongCode(secret) } });
    t.equal(await score(ip), 4, 'every wrong code counts');
    const malformed = await send('POST', url, { ip, token, payload: { config_name: 'Default', secret: 'not base32!', passcode: '123456' } });
    t.equal(malformed.statusCode, 400);
    t.equal((await send('POST', url, { ip, token, payload: { config_name: 'Nope', secret, passcode: '123456' } })).statusCode, 400);
    t.equal(await score(ip), 4, 'a malformed secret or an unknown configuration is not a wrong code');
  }
});

await t.test('token routes: missing, wrong and replayed codes and unknown recovery codes score score_valid', async (t) => {
  const g = await ta.inject('POST', '/api/v2/user/totp/generate', { token: userToken, payload: { config_name: 'Default' } });
  const secret = json(g).secret as string;
  const saved = await ta.inject('POST', '/api/v2/user/totp/save', {
    token: userToken,
    payload: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: secret } },
  });
  t.equal(saved.statusCode, 200, saved.payload);
  const basic: [string, string] = ['uma', 'uma-pass-1'];
  const ip = '10.21.0.1';
  t.equal((await send('GET', '/api/v2/user/token', { ip, basic })).statusCode, 401, 'no code');
  t.equal(await score(ip), 2);
  t.equal((await send('GET', '/api/v2/user/token', { ip, basic, otp: wrongCode(secret) })).statusCode, 401, 'a wrong code');
  t.equal(await score(ip), 4);
  t.equal((await send('GET', '/api/v2/user/token', { ip, basic, otp: 'AAAA-BBBB-CCCC-DDDD' })).statusCode, 401, 'an unknown recovery code');
  t.equal(await score(ip), 6);
  // a right code, then the same code again (replay)
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 3000) await new Promise((r) => setTimeout(r, left + 100));
  const code = totpNow(secret);
  t.equal((await send('GET', '/api/v2/user/token', { ip: '10.21.0.2', basic, otp: code })).statusCode, 200);
  t.equal(await score('10.21.0.2'), 0, 'a right code scores nothing');
  const replay = await send('GET', '/api/v2/user/token', { ip: '10.21.0.2', basic, otp: code });
  t.equal(replay.statusCode, 401);
  t.match(json(replay).message, /already been used/);
  t.equal(await score('10.21.0.2'), 2, 'a replayed code scores score_valid');
});

import t, { type Test } from 'tap';
import crypto from 'node:crypto';
import ssh2 from 'ssh2';
import { createTestApp } from '../../src/testing.js';
import { sshKeyPairs, userAdder } from '../helpers/login-fixtures.js';
import { TOKENS } from '../../src/tokens.js';
import { LoginService } from '../../src/auth/login.service.js';
import { DefenderService } from '../../src/security/defender.service.js';
import { LoginRefusedError, type LoginRefusalReason } from '../../src/errors.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { LogEvent } from '../../src/events/event-types.js';
import type { LoginCredential, LoginRequest } from '../../src/sdk/login.js';
import type { Protocol } from '../../src/sdk/protocols.js';
import { totpNow } from '../helpers/rfc6238.js';
import { matchingPublicKey } from '../../src/auth/public-keys.js';

// The login service (auth/login.service.ts) for a protocol other than HTTP: every credential kind and
// every refusal, with the log events and defender scores a login over HTTP gives. Each case uses its
// own source address, so its events and score are its own.
const ta = await createTestApp({ config: { defender: { enabled: true, threshold: 20, score_invalid: 3, score_valid: 2, observation_time: 60 } } });
t.teardown(() => ta.close());
const login = ta.app.container.resolve<LoginService>(TOKENS.LoginService);
const defender = ta.app.container.resolve(DefenderService);
const bus = ta.app.container.resolve<EventBus>(TOKENS.EventBus);
const logs: LogEvent[] = [];
bus.on('log', (e) => void logs.push(e));
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, any>;

const { utils } = ssh2;
const keys = sshKeyPairs(256);
const parsed = (pem: string) => {
  const k = utils.parseKey(pem);
  if (k instanceof Error) throw k;
  return Array.isArray(k) ? k[0]! : k;
};
/** The public key as an SSH client offers it: the wire-format blob. */
const blob = (k: { public: string }) => parsed(k.public).getPublicSSH();
/** A signed public key request, as an SSH client signs its session data. */
const signedKey = (k: { private: string; public: string }, hashAlgo?: string): LoginCredential => {
  const data = crypto.randomBytes(64);
  return { method: 'publickey', key: blob(k), signed: { data, signature: parsed(k.private).sign(data, hashAlgo), ...(hashAlgo ? { hashAlgo } : {}) } };
};

const addUser = userAdder(ta, adminToken);
await addUser('sam', {
  public_keys: [keys.ed25519.public, keys.rsa.public, keys.ecdsa.public],
});
await addUser('dora', { status: 0 });
await addUser('eve', { expiration_date: Date.now() - 86_400_000 });
await addUser('pia', { filters: { denied_protocols: ['SSH'] } });
await addUser('max', { filters: { denied_login_methods: ['password', 'keyboard-interactive'] } });
await addUser('oss', { filters: { denied_login_methods: ['password-over-SSH'] } });
await addUser('kim', { public_keys: [keys.ed25519.public], filters: { denied_login_methods: ['publickey', 'password', 'publickey+keyboard-interactive'] } });
await addUser('kit', {
  public_keys: [keys.ed25519.public],
  filters: { denied_login_methods: ['publickey', 'publickey+password', 'publickey+keyboard-interactive'] },
});
await addUser('kay', { filters: { allow_api_key_auth: true } });
await addUser('nokey');
await addUser('req', { filters: { two_factor_protocols: ['SSH'] } });
await addUser('tia', { public_keys: [keys.ed25519.public] });

// tia: TOTP for SSH and HTTP, with her recovery codes
const tiaToken = await ta.userToken('tia', 'tia-pass-1');
const generated = await ta.inject('POST', '/api/v2/user/totp/generate', { token: tiaToken, payload: { config_name: 'Default' } });
const secret = json(generated).secret as string;
const saved = await ta.inject('POST', '/api/v2/user/totp/save', {
  token: tiaToken,
  payload: { enabled: true, config_name: 'Default', protocols: ['SSH', 'HTTP'], secret: { status: 'Plain', payload: secret } },
});
if (saved.statusCode !== 200) throw new Error(saved.payload);
const recovery = (json(await ta.inject('GET', '/api/v2/user/2fa/recoverycodes', { token: tiaToken })) as unknown as { secret: { payload: string } }[]).map(
  (c) => c.secret.payload,
);

let nextIp = 1;
/** A fresh source address. */
const newIp = () => `10.77.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`;
const req = (username: string, credential: LoginCredential, ip: string, o: Partial<LoginRequest> = {}): LoginRequest => ({
  username,
  credential,
  ip,
  protocol: 'SFTP',
  ...o,
});
const password = (username: string, pw = `${username}-pass-1`, otp?: string): LoginCredential => ({
  method: 'password',
  password: pw,
  ...(otp ? { otp } : {}),
});
async function score(ip: string): Promise<number> {
  await defender.idle();
  try {
    return (await defender.get(ip)).score;
  } catch {
    return 0;
  }
}
/** The log events of an address: [event, protocol, username]. */
const eventsOf = (ip: string) => logs.filter((e) => e.ip === ip).map((e) => [e.event, e.protocol, e.username]);
/** The refusal of a login, or a failure when it was let in. */
async function refusal(t: Test, r: LoginRequest): Promise<LoginRefusedError> {
  try {
    const result = await login.authenticate(r);
    t.fail(`let in: ${JSON.stringify(result)}`);
  } catch (err) {
    if (err instanceof LoginRefusedError) return err;
    throw err;
  }
  return new LoginRefusedError('unauthorized', 'bad-credentials', 'none');
}
/** A password login over HTTP (the user token route) from `ip`. */
const overHttp = (ip: string, username: string, pw = `${username}-pass-1`, otp?: string) =>
  ta.server.inject({
    method: 'GET',
    url: '/api/v2/user/token',
    headers: { authorization: 'Basic ' + Buffer.from(`${username}:${pw}`).toString('base64'), ...(otp ? { 'x-service-otp': otp } : {}) },
    remoteAddress: ip,
  });

/**
 * A refused login over SFTP and the same credentials over HTTP: the refusal's reason and kind, the
 * same log events (protocol SFTP and HTTP) and the same defender score.
 */
async function sameAsHttp(
  t: Test,
  username: string,
  pw: string,
  want: { reason: LoginRefusalReason; kind: string; status: number; events: number[]; score: number },
) {
  const ip = newIp();
  const err = await refusal(t, req(username, password(username, pw), ip));
  t.equal(err.reason, want.reason);
  t.equal(err.kind, want.kind);
  t.same(
    eventsOf(ip),
    want.events.map((e) => [e, 'SFTP', username]),
    'log events of the SFTP login',
  );
  t.equal(await score(ip), want.score, 'defender score of the SFTP login');
  const httpIp = newIp();
  t.equal((await overHttp(httpIp, username, pw)).statusCode, want.status);
  t.same(
    eventsOf(httpIp),
    want.events.map((e) => [e, 'HTTP', username]),
    'the same log events over HTTP',
  );
  t.equal(await score(httpIp), want.score, 'the same defender score over HTTP');
}

t.test('password: a login is event 5 with the protocol of the request, refusals are events 1 or 2 scored as over HTTP', async (t) => {
  const ip = newIp();
  const ok = await login.authenticate(req('sam', password('sam'), ip));
  t.match(ok, { status: 'ok', account: { kind: 'user', username: 'sam', role: '' }, method: 'password', secondFactor: 'none' });
  t.same(eventsOf(ip), [[5, 'SFTP', 'sam']]);
  t.equal(await score(ip), 0);
  await sameAsHttp(t, 'sam', 'wrong-password', { reason: 'bad-credentials', kind: 'unauthorized', status: 401, events: [1], score: 2 });
  await sameAsHttp(t, 'nobody', 'whatever-1', { reason: 'bad-credentials', kind: 'unauthorized', status: 401, events: [2], score: 3 });
  await sameAsHttp(t, 'dora', 'dora-pass-1', { reason: 'disabled', kind: 'unauthorized', status: 401, events: [1], score: 2 });
  await sameAsHttp(t, 'eve', 'eve-pass-1', { reason: 'expired', kind: 'unauthorized', status: 401, events: [1], score: 2 });
  const malformed = newIp();
  const err = await refusal(t, req('bad\u0001name', password('x', 'y'), malformed));
  t.equal(err.reason, 'malformed');
  t.same(eventsOf(malformed), [], 'malformed credentials are no log event');
  t.equal(await score(malformed), 3, 'but score score_invalid');
});

t.test('denied_protocols: SFTP is checked as SSH, HTTP still logs in', async (t) => {
  const ip = newIp();
  const err = await refusal(t, req('pia', password('pia'), ip));
  t.equal(err.reason, 'protocol-denied');
  t.equal(err.kind, 'forbidden');
  t.match(err.message, /protocol SSH is not allowed/);
  t.same(eventsOf(ip), [[1, 'SFTP', 'pia']]);
  t.equal(await score(ip), 2);
  const scp = await refusal(t, req('pia', password('pia'), newIp(), { protocol: 'SCP' }));
  t.equal(scp.reason, 'protocol-denied', 'SCP too');
  t.equal((await overHttp(newIp(), 'pia')).statusCode, 200);
  const own = await refusal(t, req('sam', password('sam'), newIp(), { protocol: 'EventAction' as Protocol }));
  t.equal(own.reason, 'protocol-denied', 'the server’s own work is no login protocol');
});

t.test('banned host and IP lists: refused before any credential is checked, no log event', async (t) => {
  const ip = newIp();
  for (let i = 0; i < 7; i++) await refusal(t, req('nobody', password('nobody'), ip));
  t.equal(await score(ip), 0, 'the score is gone once banned');
  const before = eventsOf(ip).length;
  const err = await refusal(t, req('sam', password('sam'), ip));
  t.equal(err.reason, 'banned');
  t.equal(err.kind, 'forbidden');
  t.equal(eventsOf(ip).length, before, 'no log event for a banned host');
  t.equal((await overHttp(ip, 'sam')).statusCode, 403, 'banned over HTTP too');
  // the defender list's deny entry for SSH refuses SFTP
  const denied = '192.0.2.77';
  const add = await ta.inject('POST', '/api/v2/iplists/2', { token: adminToken, payload: { ipornet: `${denied}/32`, mode: 2, protocols: 1 } });
  t.equal(add.statusCode, 201, add.payload);
  t.equal((await refusal(t, req('sam', password('sam'), denied))).reason, 'ip-not-allowed');
  t.equal((await overHttp(denied, 'sam')).statusCode, 200, 'an SSH entry does not refuse HTTP');
});

t.test('denied_login_methods: password, password-over-SSH', async (t) => {
  const ip = newIp();
  const err = await refusal(t, req('max', password('max'), ip));
  t.equal(err.reason, 'method-denied');
  t.equal(err.kind, 'forbidden');
  t.same(eventsOf(ip), [[1, 'SFTP', 'max']]);
  t.equal(await score(ip), 0, 'a right password with a denied method scores nothing');
  t.equal((await overHttp(newIp(), 'max')).statusCode, 403, 'password denies HTTP passwords too');
  t.equal((await refusal(t, req('oss', password('oss'), newIp()))).reason, 'method-denied', 'password-over-SSH denies SFTP passwords');
  t.equal((await overHttp(newIp(), 'oss')).statusCode, 200, 'but not HTTP ones');
  t.equal((await refusal(t, req('max', { method: 'keyboard-interactive', answers: ['max-pass-1'] }, newIp()))).reason, 'method-denied', 'keyboard-interactive');
  t.match(
    await login.authenticate(req('oss', { method: 'keyboard-interactive', answers: ['oss-pass-1'] }, newIp())),
    { status: 'ok', method: 'keyboard-interactive' },
    'password-over-SSH does not deny keyboard-interactive',
  );
});

t.test('public keys: ed25519, RSA (sha2) and ECDSA, queries, wrong signatures and keys', async (t) => {
  for (const [name, key, hash] of [
    ['ed25519', keys.ed25519, undefined],
    ['rsa', keys.rsa, 'sha256'],
    ['rsa-sha512', keys.rsa, 'sha512'],
    ['ecdsa', keys.ecdsa, undefined],
  ] as const) {
    const ip = newIp();
    t.same(await login.authenticate(req('sam', { method: 'publickey', key: blob(key) }, ip)), { status: 'key-accepted' }, `${name}: query`);
    t.match(await login.authenticate(req('sam', signedKey(key, hash), ip)), { status: 'ok', method: 'publickey', account: { username: 'sam' } }, name);
    t.same(eventsOf(ip), [[5, 'SFTP', 'sam']], `${name}: one login event, none for the query`);
  }
  // an authorized_keys line offered as text
  t.same(await login.authenticate(req('sam', { method: 'publickey', key: keys.ecdsa.public }, newIp())), { status: 'key-accepted' });

  const query = newIp();
  t.equal((await refusal(t, req('sam', { method: 'publickey', key: blob(keys.other) }, query))).reason, 'bad-credentials', 'a key not authorized');
  t.equal((await refusal(t, req('nobody', { method: 'publickey', key: blob(keys.ed25519) }, query))).reason, 'bad-credentials');
  t.same(eventsOf(query), [], 'a refused query is no login event');
  t.equal(await score(query), 0, 'nor scored');

  const forged = newIp();
  const good = signedKey(keys.ed25519) as Extract<LoginCredential, { method: 'publickey' }>;
  const bad = { ...good, signed: { ...good.signed!, data: crypto.randomBytes(64) } };
  t.equal((await refusal(t, req('sam', bad, forged))).reason, 'bad-credentials', 'a signature over other data');
  t.equal((await refusal(t, req('sam', signedKey(keys.other), forged))).reason, 'bad-credentials', 'a key of nobody signing');
  t.same(eventsOf(forged), [
    [1, 'SFTP', 'sam'],
    [1, 'SFTP', 'sam'],
  ]);
  t.equal(await score(forged), 4);
  const ghost = newIp();
  t.equal((await refusal(t, req('nobody', signedKey(keys.ed25519), ghost))).reason, 'bad-credentials');
  t.same(eventsOf(ghost), [[2, 'SFTP', 'nobody']]);
  t.equal(await score(ghost), 3);
  t.equal((await refusal(t, req('dora', signedKey(keys.ed25519), newIp()))).reason, 'bad-credentials', 'dora has no keys');
});

t.test('multi-step: publickey denied alone, publickey+password allowed', async (t) => {
  const ip = newIp();
  t.same(await login.authenticate(req('kim', signedKey(keys.ed25519), ip)), { status: 'partial', next: ['password'] });
  t.same(eventsOf(ip), [], 'a partial step is no login yet');
  t.equal((await refusal(t, req('kim', password('kim'), ip))).reason, 'method-denied', 'a password alone is denied');
  t.match(await login.authenticate(req('kim', password('kim'), ip, { passed: ['publickey'] })), { status: 'ok', method: 'publickey+password' });
  t.equal(
    (await refusal(t, req('kim', { method: 'keyboard-interactive', answers: ['kim-pass-1'] }, ip, { passed: ['publickey'] }))).reason,
    'method-denied',
    'publickey+keyboard-interactive is denied',
  );
  t.equal((await refusal(t, req('kim', password('kim', 'wrong'), ip, { passed: ['publickey'] }))).reason, 'bad-credentials');
  // every way on from the key denied
  const kit = newIp();
  t.equal((await refusal(t, req('kit', signedKey(keys.ed25519), kit))).reason, 'method-denied');
  t.same(eventsOf(kit), [[1, 'SFTP', 'kit']]);
});

t.test('second factor: TOTP and recovery codes, in the same step, a following step and keyboard-interactive', async (t) => {
  t.same(await login.keyboardInteractivePrompts('sam', 'SFTP'), [{ prompt: 'Password: ', echo: false }]);
  t.same(await login.keyboardInteractivePrompts('tia', 'SFTP'), [
    { prompt: 'Password: ', echo: false },
    { prompt: 'Authentication code: ', echo: false },
  ]);
  t.same(await login.keyboardInteractivePrompts('tia', 'FTP'), [{ prompt: 'Password: ', echo: false }], 'her TOTP does not name FTP');
  t.match(await login.authenticate(req('tia', password('tia'), newIp(), { protocol: 'FTP' })), { status: 'ok', secondFactor: 'none' });

  // missing: refused like over HTTP (event 1, score_valid), or asked in a following step
  const missing = newIp();
  const err = await refusal(t, req('tia', password('tia'), missing));
  t.equal(err.reason, 'second-factor-required');
  t.same(eventsOf(missing), [[1, 'SFTP', 'tia']]);
  t.equal(await score(missing), 2);
  const httpMissing = newIp();
  t.equal((await overHttp(httpMissing, 'tia')).statusCode, 401);
  t.same(eventsOf(httpMissing), [[1, 'HTTP', 'tia']]);
  t.equal(await score(httpMissing), 2);

  const stepIp = newIp();
  t.same(await login.authenticate(req('tia', password('tia'), stepIp, { secondFactorLater: true })), { status: 'second-factor' });
  t.equal((await refusal(t, req('tia', { method: 'otp', code: '000000' }, stepIp))).reason, 'bad-credentials', 'no code without a password step');
  const wrong = await refusal(t, req('tia', { method: 'otp', code: 'AAAA-BBBB-CCCC-DDDD' }, stepIp, { passed: ['password'] }));
  t.equal(wrong.reason, 'second-factor-invalid');
  t.equal(await score(stepIp), 2);
  // a TOTP code, then the same code again (not near the end of its 30 s step)
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 3000) await new Promise((r) => setTimeout(r, left + 100));
  const code = totpNow(secret);
  t.match(await login.authenticate(req('tia', { method: 'otp', code }, stepIp, { passed: ['password'] })), { status: 'ok', secondFactor: 'totp' });
  const replay = await refusal(t, req('tia', password('tia', 'tia-pass-1', code), stepIp));
  t.equal(replay.reason, 'second-factor-replayed');
  t.same(eventsOf(stepIp), [
    [1, 'SFTP', 'tia'],
    [5, 'SFTP', 'tia'],
    [1, 'SFTP', 'tia'],
  ]);
  t.equal(await score(stepIp), 4);

  const same = newIp();
  t.match(await login.authenticate(req('tia', password('tia', 'tia-pass-1', recovery[0]), same)), { status: 'ok', secondFactor: 'recovery' });
  t.equal((await refusal(t, req('tia', password('tia', 'tia-pass-1', recovery[0]), same))).reason, 'second-factor-invalid', 'a recovery code is used once');
  const kbd = newIp();
  t.match(await login.authenticate(req('tia', { method: 'keyboard-interactive', answers: ['tia-pass-1', recovery[1]!] }, kbd)), {
    status: 'ok',
    method: 'keyboard-interactive',
    secondFactor: 'recovery',
  });
  t.equal((await refusal(t, req('tia', { method: 'keyboard-interactive', answers: ['tia-pass-1'] }, kbd))).reason, 'second-factor-required');
  t.equal((await refusal(t, req('tia', { method: 'keyboard-interactive', answers: ['wrong', recovery[2]!] }, kbd))).reason, 'bad-credentials');
  t.match(await login.authenticate(req('tia', signedKey(keys.ed25519), newIp())), { status: 'ok', secondFactor: 'none' }, 'a public key needs no code');

  // two_factor_protocols names SSH and no TOTP is set up: refused over SFTP, HTTP logs in (and is sent to the setup)
  const setup = newIp();
  const need = await refusal(t, req('req', password('req'), setup));
  t.equal(need.reason, 'second-factor-setup-required');
  t.same(eventsOf(setup), [[1, 'SFTP', 'req']]);
  t.equal((await overHttp(newIp(), 'req')).statusCode, 200);
});

t.test('API keys: a login with the protocol of the request; refused keys are events 2 or 1 as over HTTP', async (t) => {
  const mk = async (payload: Record<string, unknown>) => {
    const c = await ta.inject('POST', '/api/v2/apikeys', { token: adminToken, payload });
    if (c.statusCode !== 201) throw new Error(c.payload);
    return String(json(c).key);
  };
  const kayKey = await mk({ name: 'kay', scope: 2, user: 'kay' });
  const nokeyKey = await mk({ name: 'nokey', scope: 2, user: 'nokey' });
  const ip = newIp();
  t.match(await login.authenticate(req('', { method: 'apikey', key: kayKey }, ip, { protocol: 'DAV' })), {
    status: 'ok',
    method: 'apikey',
    account: { username: 'kay' },
  });
  t.same(eventsOf(ip), [[5, 'DAV', 'kay']], 'an API key login over another protocol is a login event');
  const bad = newIp();
  t.equal((await refusal(t, req('', { method: 'apikey', key: 'abcdefgh12.0123456789abcdef0123' }, bad))).reason, 'bad-credentials');
  t.same(eventsOf(bad), [[2, 'SFTP', '']]);
  t.equal(await score(bad), 3);
  const off = newIp();
  t.equal((await refusal(t, req('', { method: 'apikey', key: nokeyKey }, off))).reason, 'method-denied');
  t.same(eventsOf(off), [[1, 'SFTP', 'nokey']]);
  t.equal((await refusal(t, req('', { method: 'apikey', key: kayKey }, newIp(), { audience: 'admin' }))).reason, 'api-key-audience');
  // over HTTP: the same refused key, the same event (protocol HTTP) and score
  const httpBad = newIp();
  const r = await ta.server.inject({
    method: 'GET',
    url: '/api/v2/user/dirs',
    headers: { 'x-service-api-key': 'abcdefgh12.0123456789abcdef0123' },
    remoteAddress: httpBad,
  });
  t.equal(r.statusCode, 401);
  t.same(eventsOf(httpBad), [[2, 'HTTP', '']]);
  t.equal(await score(httpBad), 3);
});

t.test('admins: a password login of the admin audience', async (t) => {
  const ip = newIp();
  t.match(await login.authenticate(req('admin', password('admin', 'admin-password-1'), ip, { audience: 'admin', protocol: 'SSH' })), {
    status: 'ok',
    account: { kind: 'admin', username: 'admin' },
  });
  t.same(eventsOf(ip), [[5, 'SSH', 'admin']]);
  const bad = newIp();
  t.equal((await refusal(t, req('admin', password('admin', 'nope'), bad, { audience: 'admin', protocol: 'SSH' }))).reason, 'bad-credentials');
  t.same(eventsOf(bad), [[1, 'SSH', 'admin']]);
  t.equal(await score(bad), 2);
});

t.test('rate limits: a front-end without its own checks is limited per attempt (scope token), a key query is not', async (t) => {
  const rl = await createTestApp({
    config: {
      defender: { enabled: true, threshold: 100, score_limit_exceeded: 5 },
      rate_limit: { token: { per_host: { average: 1, period: 3_600_000, burst: 2, add_to_defender: true } } },
    },
  });
  t.teardown(() => rl.close());
  const gate = rl.app.container.resolve<LoginService>(TOKENS.LoginService);
  const admin = await rl.adminToken();
  const r = await rl.inject('POST', '/api/v2/users', {
    token: admin,
    payload: { username: 'rae', password: 'rae-pass-1', home_dir: `${rl.dataDir}/rae`, permissions: { '/': ['*'] }, public_keys: [keys.ed25519.public] },
  });
  t.equal(r.statusCode, 201, r.payload);
  const ip = '10.78.0.1';
  const attempt = (credential: LoginCredential) => gate.authenticate({ username: 'rae', credential, ip, protocol: 'SFTP' });
  t.match(await attempt(password('rae')), { status: 'ok' });
  t.same(await attempt({ method: 'publickey', key: blob(keys.ed25519) }), { status: 'key-accepted' }, 'a query takes no token');
  t.match(await attempt(password('rae')), { status: 'ok' });
  let limited: unknown;
  await attempt(password('rae')).catch((err: unknown) => (limited = err));
  t.ok(limited instanceof LoginRefusedError);
  t.match(limited, { reason: 'rate-limited', kind: 'too_many_requests' });
  t.ok((limited as LoginRefusedError).retryAfterSeconds! >= 1, 'with the time to wait');
  const d = rl.app.container.resolve(DefenderService);
  await d.idle();
  t.equal((await d.get(ip)).score, 5, 'scored score_limit_exceeded (add_to_defender)');
});

t.test('authorized_keys lines: options before the key, comments and lines that hold no key', async (t) => {
  const lines = ['# a comment', '', 'not a key at all', `from="10.0.0.0/8",no-pty ${keys.rsa.public} laptop`];
  t.ok(await matchingPublicKey(lines, blob(keys.rsa)), 'the key after its options');
  t.notOk(await matchingPublicKey(lines, blob(keys.ed25519)), 'a key not listed');
  t.notOk(await matchingPublicKey([keys.ed25519.public], Buffer.from('garbage')), 'an offered key that does not parse');
  t.notOk(await matchingPublicKey([], blob(keys.ed25519)), 'no keys');
  t.ok(await matchingPublicKey([keys.ed25519.public], keys.ed25519.public), 'a key offered as an OpenSSH line');
});

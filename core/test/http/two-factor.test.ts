import t from 'tap';
import path from 'node:path';
import { createTestApp } from '../../src/testing.js';
import { Admin, User } from '../../src/data/entities/index.js';
import { base32Decode, hotp, totpAt, totpNow } from '../helpers/rfc6238.js';

// The server's TOTP (otpauth) is checked against codes computed here with node:crypto only.
const ta = await createTestApp({
  config: {
    mfa: {
      totp: [
        { name: 'Default', issuer: 'Ferry', algo: 'sha1' },
        { name: 'Strong', issuer: 'Ferry Strong', algo: 'sha256' },
      ],
    },
  },
});
t.teardown(() => ta.close());
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, any>;
const basicOf = (username: string, password: string) => ({ username, password });

async function createAdmin(username: string, extra: Record<string, unknown> = {}) {
  const r = await ta.inject('POST', '/api/v2/admins', {
    token: adminToken,
    payload: { username, password: `${username}-pass-1`, permissions: ['*'], ...extra },
  });
  if (r.statusCode !== 201) throw new Error(`create admin: ${r.statusCode} ${r.payload}`);
}
async function createUser(username: string, filters: Record<string, unknown> = {}) {
  const r = await ta.inject('POST', '/api/v2/users', {
    token: adminToken,
    payload: { username, password: `${username}-pass-1`, home_dir: path.join(ta.dataDir, username), permissions: { '/': ['*'] }, filters },
  });
  if (r.statusCode !== 201) throw new Error(`create user: ${r.statusCode} ${r.payload}`);
}
/** Enrols TOTP through the API; returns the base32 secret. */
async function enrol(kind: 'admin' | 'user', token: string, extra: Record<string, unknown> = {}, config = 'Default') {
  const g = await ta.inject('POST', `/api/v2/${kind}/totp/generate`, { token, payload: { config_name: config } });
  if (g.statusCode !== 200) throw new Error(`generate: ${g.statusCode} ${g.payload}`);
  const secret = json(g).secret as string;
  const s = await ta.inject('POST', `/api/v2/${kind}/totp/save`, {
    token,
    payload: { enabled: true, config_name: config, secret: { status: 'Plain', payload: secret }, ...extra },
  });
  if (s.statusCode !== 200) throw new Error(`save: ${s.statusCode} ${s.payload}`);
  return secret;
}
/** Waits for the next 30 s step when the current one is about to end (a code used at a step boundary). */
async function freshStep(): Promise<void> {
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 3000) await new Promise((r) => setTimeout(r, left + 100));
}

t.test('the independent TOTP implementation reproduces the RFC 6238 test vectors', async (t) => {
  // RFC 6238 appendix B: 8 digits, seeds of 20, 32 and 64 bytes
  const seeds = {
    sha1: Buffer.from('12345678901234567890'),
    sha256: Buffer.from('12345678901234567890123456789012'),
    sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
  } as const;
  const vectors: [number, string, string, string][] = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ];
  for (const [time, s1, s256, s512] of vectors) {
    t.equal(totpAt(seeds.sha1, time, 'sha1', 8), s1, `SHA1 at ${time}`);
    t.equal(totpAt(seeds.sha256, time, 'sha256', 8), s256, `SHA256 at ${time}`);
    t.equal(totpAt(seeds.sha512, time, 'sha512', 8), s512, `SHA512 at ${time}`);
  }
  // RFC 4226 appendix D (HOTP, 6 digits)
  t.same(
    [0, 1, 2, 9].map((c) => hotp(seeds.sha1, c)),
    ['755224', '287082', '359152', '520489'],
  );
});

t.test('TOTP configurations, generate and validate', async (t) => {
  const configs = await ta.inject('GET', '/api/v2/admin/totp/configs', { token: adminToken });
  t.equal(configs.statusCode, 200);
  t.same(json(configs), [
    { name: 'Default', issuer: 'Ferry', algo: 'sha1' },
    { name: 'Strong', issuer: 'Ferry Strong', algo: 'sha256' },
  ]);
  const g = await ta.inject('POST', '/api/v2/admin/totp/generate', { token: adminToken, payload: { config_name: 'Strong' } });
  t.equal(g.statusCode, 200);
  const body = json(g);
  t.match(body, { config_name: 'Strong', issuer: 'Ferry Strong', secret: /^[A-Z2-7]+$/, url: String, qr_code: String });
  t.equal(base32Decode(body.secret).length, 32, 'a SHA-256 configuration gets a 32-byte secret');
  const url = new URL(body.url);
  t.equal(url.protocol, 'otpauth:');
  t.equal(url.host, 'totp');
  t.equal(url.searchParams.get('secret'), body.secret);
  t.equal(url.searchParams.get('issuer'), 'Ferry Strong');
  t.equal(url.searchParams.get('algorithm'), 'SHA256');
  t.match(decodeURIComponent(url.pathname), /admin/);
  t.same([...Buffer.from(body.qr_code, 'base64').subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'qr_code is a PNG');

  const unknown = await ta.inject('POST', '/api/v2/admin/totp/generate', { token: adminToken, payload: { config_name: 'Nope' } });
  t.equal(unknown.statusCode, 400);
  t.match(json(unknown), { error: 'Bad Request', message: /config_name.*Nope/ });
  const missing = await ta.inject('POST', '/api/v2/admin/totp/generate', { token: adminToken, payload: {} });
  t.equal(missing.statusCode, 400);
  t.match(json(missing).message, /config_name/);

  const validate = (payload: Record<string, unknown>) => ta.inject('POST', '/api/v2/admin/totp/validate', { token: adminToken, payload });
  const ok = await validate({ config_name: 'Strong', secret: body.secret, passcode: totpNow(body.secret, 'sha256') });
  t.equal(ok.statusCode, 200);
  t.match(json(ok), { message: String });
  const sha1Code = totpNow(body.secret, 'sha1');
  const wrongAlgo = await validate({ config_name: 'Strong', secret: body.secret, passcode: sha1Code === totpNow(body.secret, 'sha256') ? '000000' : sha1Code });
  t.equal(wrongAlgo.statusCode, 400, 'a SHA-1 code for a SHA-256 configuration');
  t.match(json(wrongAlgo).message, /passcode/);
  t.equal((await validate({ config_name: 'Strong', secret: 'not base32!', passcode: '123456' })).statusCode, 400);
  const noPass = await validate({ config_name: 'Strong', secret: body.secret });
  t.equal(noPass.statusCode, 400);
  t.match(json(noPass).message, /passcode/);
  t.equal((await ta.inject('GET', '/api/v2/admin/totp/configs')).statusCode, 401, 'no token');
});

t.test('admin: setup, login with a code, replay refused, recovery codes once, disable by an admin', async (t) => {
  await createAdmin('mfa-admin', { email: 'mfa-admin@example.com' });
  const basic = basicOf('mfa-admin', 'mfa-admin-pass-1');
  const token = await ta.adminToken('mfa-admin', 'mfa-admin-pass-1');
  const bad = await ta.inject('POST', '/api/v2/admin/totp/save', {
    token,
    payload: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: 'short' } },
  });
  t.equal(bad.statusCode, 400);
  t.match(json(bad).message, /secret/);
  const noSecret = await ta.inject('POST', '/api/v2/admin/totp/save', { token, payload: { enabled: true, config_name: 'Default' } });
  t.equal(noSecret.statusCode, 400, 'enabling needs a secret');
  const secret = await enrol('admin', token);

  const em = ta.app.orm.em.fork();
  const stored = await em.findOneOrFail(Admin, { username: 'mfa-admin' });
  const totp = stored.filters.totp_config as Record<string, any>;
  t.match(totp, { enabled: true, config_name: 'Default', algo: 'sha1', secret: { status: 'AES-256-GCM', payload: String } }, 'the secret is encrypted at rest');
  t.notOk(JSON.stringify(stored.filters).includes(secret), 'no cleartext secret in the database');
  t.equal(stored.filters.recovery_codes?.length, 12, 'recovery codes made on enrolment');
  const read = json(await ta.inject('GET', '/api/v2/admins/mfa-admin', { token: adminToken }));
  t.same(read.filters.totp_config, { enabled: true, config_name: 'Default' }, 'the API shows a summary');
  t.notOk(JSON.stringify(read).includes('recovery'), 'no recovery codes in the admin object');

  const none = await ta.inject('GET', '/api/v2/token', { basic });
  t.equal(none.statusCode, 401);
  t.match(json(none).message, /X-SERVICE-OTP/);
  await freshStep();
  const code = totpNow(secret);
  const ok = await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': code } });
  t.equal(ok.statusCode, 200, 'the current code');
  const replay = await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': code } });
  t.equal(replay.statusCode, 401, 'the same code again');
  t.match(json(replay).message, /already been used/);
  const previous = await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': totpNow(secret, 'sha1', -1) } });
  t.equal(previous.statusCode, 401, 'a code of an earlier step after a later one was used');

  // recovery codes
  const rc = await ta.inject('GET', '/api/v2/admin/2fa/recoverycodes', { token });
  t.equal(rc.statusCode, 200);
  const codes = json(rc) as unknown as { secret: { status: string; payload: string }; used: boolean }[];
  t.equal(codes.length, 12);
  t.match(codes[0], { secret: { status: 'Plain', payload: /^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/ }, used: false });
  const first = codes[0]!.secret.payload;
  t.equal(
    (await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': first.toLowerCase() } })).statusCode,
    200,
    'a recovery code in place of a TOTP code',
  );
  const again = await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': first } });
  t.equal(again.statusCode, 401, 'a recovery code works once');
  t.match(json(again).message, /invalid two-factor authentication code/);
  const after = json(await ta.inject('GET', '/api/v2/admin/2fa/recoverycodes', { token })) as unknown as { used: boolean }[];
  t.same(
    after.map((c) => c.used),
    [true, ...Array(11).fill(false)],
  );
  const regen = await ta.inject('POST', '/api/v2/admin/2fa/recoverycodes', { token });
  t.equal(regen.statusCode, 200);
  const fresh = json(regen) as unknown as string[];
  t.equal(fresh.length, 12);
  t.equal(
    (await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': codes[1]!.secret.payload } })).statusCode,
    401,
    'old codes stop working',
  );
  t.equal((await ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': fresh[5]! } })).statusCode, 200, 'new codes work');
  t.notOk(JSON.stringify(json(await ta.inject('GET', '/api/v2/admin/2fa/recoverycodes', { token }))).includes(codes[1]!.secret.payload));

  // the account may not turn 2FA off when it is required, an admin with disable_mfa can
  await createAdmin('helpdesk', { permissions: ['view_users', 'disable_mfa'] });
  await createAdmin('viewer', { permissions: ['view_users'] });
  const viewer = await ta.adminToken('viewer', 'viewer-pass-1');
  const denied = await ta.inject('PUT', '/api/v2/admins/mfa-admin/2fa/disable', { token: viewer });
  t.equal(denied.statusCode, 403);
  t.match(json(denied).message, /disable_mfa/);
  const helpdesk = await ta.adminToken('helpdesk', 'helpdesk-pass-1');
  t.equal((await ta.inject('PUT', '/api/v2/admins/ghost/2fa/disable', { token: helpdesk })).statusCode, 404);
  const off = await ta.inject('PUT', '/api/v2/admins/mfa-admin/2fa/disable', { token: helpdesk });
  t.equal(off.statusCode, 200);
  t.match(json(off), { message: String });
  t.equal((await ta.inject('GET', '/api/v2/token', { basic })).statusCode, 200, 'no code needed once disabled');
  const twice = await ta.inject('PUT', '/api/v2/admins/mfa-admin/2fa/disable', { token: helpdesk });
  t.equal(twice.statusCode, 400, 'nothing to disable');
  const gone = await ta.app.orm.em.fork().findOneOrFail(Admin, { username: 'mfa-admin' });
  t.notOk(gone.filters.totp_config ?? gone.filters.recovery_codes, 'TOTP and recovery codes removed');
});

t.test('concurrent logins: one TOTP code and one recovery code are each accepted once', async (t) => {
  await createAdmin('racer');
  const secret = await enrol('admin', await ta.adminToken('racer', 'racer-pass-1'));
  const basic = basicOf('racer', 'racer-pass-1');
  await freshStep();
  const code = totpNow(secret);
  const totpRace = await Promise.all(Array.from({ length: 6 }, () => ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': code } })));
  t.same(totpRace.map((r) => r.statusCode).sort(), [200, 401, 401, 401, 401, 401], 'one of six concurrent logins with one code');
  const token = json(totpRace.find((r) => r.statusCode === 200)!).access_token as string;
  const rc = (json(await ta.inject('GET', '/api/v2/admin/2fa/recoverycodes', { token })) as unknown as { secret: { payload: string } }[])[0]!.secret.payload;
  const rcRace = await Promise.all(Array.from({ length: 6 }, () => ta.inject('GET', '/api/v2/token', { basic, headers: { 'x-service-otp': rc } })));
  t.same(rcRace.map((r) => r.statusCode).sort(), [200, 401, 401, 401, 401, 401], 'one of six concurrent logins with one recovery code');
});

t.test('require_two_factor: 403 naming the setup routes until TOTP is on, which then stays on', async (t) => {
  await createAdmin('must-mfa', { filters: { require_two_factor: true } });
  const token = await ta.adminToken('must-mfa', 'must-mfa-pass-1');
  const r = await ta.inject('GET', '/api/v2/admins', { token });
  t.equal(r.statusCode, 403);
  t.match(json(r), { error: 'Forbidden', message: /two-factor authentication is required.*\/api\/v2\/admin\/totp\/generate/ });
  t.equal((await ta.inject('GET', '/api/v2/admin/profile', { token })).statusCode, 403);
  t.equal((await ta.inject('GET', '/api/v2/admin/totp/configs', { token })).statusCode, 200, 'setup routes stay open');
  const secret = await enrol('admin', token);
  t.equal((await ta.inject('GET', '/api/v2/admins', { token })).statusCode, 200, 'the same token works once TOTP is on');
  const off = await ta.inject('POST', '/api/v2/admin/totp/save', { token, payload: { enabled: false } });
  t.equal(off.statusCode, 403);
  t.match(json(off).message, /require_two_factor/);
  await freshStep();
  t.equal(
    (await ta.inject('GET', '/api/v2/token', { basic: basicOf('must-mfa', 'must-mfa-pass-1'), headers: { 'x-service-otp': totpNow(secret) } })).statusCode,
    200,
  );
  t.equal((await ta.inject('GET', '/api/v2/logout', { token })).statusCode, 200);
});

t.test('users: protocols, two_factor_protocols, mfa-disabled, API keys', async (t) => {
  await createUser('ursula');
  const basic = basicOf('ursula', 'ursula-pass-1');
  let token = await ta.userToken('ursula', 'ursula-pass-1');
  t.same(
    json(await ta.inject('GET', '/api/v2/user/totp/configs', { token })).map((c: { name: string }) => c.name),
    ['Default', 'Strong'],
  );
  t.equal((await ta.inject('GET', '/api/v2/user/2fa/recoverycodes', { token })).statusCode, 200);
  t.equal((await ta.inject('POST', '/api/v2/user/2fa/recoverycodes', { token })).statusCode, 400, 'no recovery codes without 2FA');
  const badProto = await ta.inject('POST', '/api/v2/user/totp/save', {
    token,
    payload: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: 'JBSWY3DPEHPK3PXPJBSWY3DP' }, protocols: ['WEB'] },
  });
  t.equal(badProto.statusCode, 400);
  t.match(json(badProto).message, /protocols/);
  // TOTP only for SSH: REST logins need no code
  const sshOnly = await enrol('user', token, { protocols: ['SSH'] }, 'Strong');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic })).statusCode, 200, 'not asked on HTTP');
  t.match(json(await ta.inject('GET', '/api/v2/users/ursula', { token: adminToken })).filters.totp_config, {
    enabled: true,
    config_name: 'Strong',
    protocols: ['SSH'],
  });
  // keep the secret, add HTTP
  t.equal(
    (await ta.inject('POST', '/api/v2/user/totp/save', { token, payload: { enabled: true, config_name: 'Strong', protocols: ['SSH', 'HTTP'] } })).statusCode,
    200,
  );
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic })).statusCode, 401, 'asked on HTTP now');
  await freshStep();
  const code = totpNow(sshOnly, 'sha256');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic, headers: { 'x-service-otp': code } })).statusCode, 200, 'SHA-256 code of the kept secret');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic, headers: { 'x-service-otp': code } })).statusCode, 401, 'replay refused');

  // API keys do not ask for the code
  const key = await ta.inject('POST', '/api/v2/apikeys', { token: adminToken, payload: { name: 'ursula-key', scope: 2, user: 'ursula' } });
  t.equal(key.statusCode, 201, key.payload);
  await ta.inject('PUT', '/api/v2/user/profile', { token, payload: { allow_api_key_auth: true } });
  const viaKey = await ta.inject('GET', '/api/v2/user/dirs', { apiKey: json(key).key });
  t.equal(viaKey.statusCode, 200, `API key without a code: ${viaKey.payload}`);

  // disabled by an admin holding disable_mfa
  t.equal((await ta.inject('PUT', '/api/v2/users/ursula/2fa/disable', { token: adminToken })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic })).statusCode, 200);
  t.equal((await ta.inject('PUT', '/api/v2/users/nobody/2fa/disable', { token: adminToken })).statusCode, 404);

  // two_factor_protocols with HTTP: 403 until set up, protocols must include HTTP, cannot be disabled
  await createUser('umar', { two_factor_protocols: ['HTTP'] });
  token = await ta.userToken('umar', 'umar-pass-1');
  const need = await ta.inject('GET', '/api/v2/user/profile', { token });
  t.equal(need.statusCode, 403);
  t.match(json(need).message, /\/api\/v2\/user\/totp\/generate/);
  const g = json(await ta.inject('POST', '/api/v2/user/totp/generate', { token, payload: { config_name: 'Default' } }));
  const noHttp = await ta.inject('POST', '/api/v2/user/totp/save', {
    token,
    payload: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: g.secret }, protocols: ['SSH'] },
  });
  t.equal(noHttp.statusCode, 400);
  t.match(json(noHttp).message, /protocols.*HTTP/);
  t.equal(
    (
      await ta.inject('POST', '/api/v2/user/totp/save', {
        token,
        payload: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: g.secret } },
      })
    ).statusCode,
    200,
  );
  t.equal((await ta.inject('GET', '/api/v2/user/profile', { token })).statusCode, 200);
  t.equal((await ta.inject('POST', '/api/v2/user/totp/save', { token, payload: { enabled: false } })).statusCode, 403);

  // mfa-disabled: the user cannot change its 2FA settings
  await createUser('ugo', { web_client: ['mfa-disabled'] });
  token = await ta.userToken('ugo', 'ugo-pass-1');
  const refused = await ta.inject('POST', '/api/v2/user/totp/generate', { token, payload: { config_name: 'Default' } });
  t.equal(refused.statusCode, 403);
  t.match(json(refused).message, /mfa-disabled/);
  t.equal((await ta.inject('GET', '/api/v2/user/totp/configs', { token: adminToken })).statusCode, 401, 'an admin token on a user route');
});

t.test('create/update never set 2FA, backups keep it', async (t) => {
  await createUser('bkp');
  const token = await ta.userToken('bkp', 'bkp-pass-1');
  const secret = await enrol('user', token, { protocols: ['HTTP'] });
  const u = json(await ta.inject('GET', '/api/v2/users/bkp', { token: adminToken }));
  const upd = await ta.inject('PUT', '/api/v2/users/bkp', { token: adminToken, payload: { ...u, filters: { ...u.filters, totp_config: { enabled: false } } } });
  t.equal(upd.statusCode, 200);
  t.match((await ta.app.orm.em.fork().findOneOrFail(User, { username: 'bkp' })).filters, { totp_config: { enabled: true } }, 'an update keeps it');
  const created = await ta.inject('POST', '/api/v2/users', {
    token: adminToken,
    payload: {
      username: 'sneaky',
      password: 'sneaky-pass-1',
      home_dir: path.join(ta.dataDir, 'sneaky'),
      permissions: { '/': ['*'] },
      filters: { totp_config: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: secret } } },
    },
  });
  t.equal(created.statusCode, 201);
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: basicOf('sneaky', 'sneaky-pass-1') })).statusCode, 200, 'create did not turn 2FA on');

  const recovery = (json(await ta.inject('GET', '/api/v2/user/2fa/recoverycodes', { token })) as unknown as { secret: { payload: string } }[])[3]!.secret
    .payload;
  const dump = await ta.inject('GET', '/api/v2/dumpdata?output-data=1', { token: adminToken });
  t.equal(dump.statusCode, 200);
  t.notOk(dump.payload.includes(secret), 'no cleartext TOTP secret in the dump');
  const data = json(dump);
  // the same master key (createTestApp's): the encrypted secrets restore as they are
  const other = await createTestApp();
  t.teardown(() => other.close());
  const load = await other.inject('POST', '/api/v2/loaddata', {
    token: await other.adminToken(),
    payload: { users: data.users.filter((x: { username: string }) => x.username === 'bkp') },
  });
  t.equal(load.statusCode, 200, load.payload);
  const basic = basicOf('bkp', 'bkp-pass-1');
  t.equal((await other.inject('GET', '/api/v2/user/token', { basic })).statusCode, 401, 'restored: a code is asked');
  await freshStep();
  t.equal((await other.inject('GET', '/api/v2/user/token', { basic, headers: { 'x-service-otp': totpNow(secret) } })).statusCode, 200, 'restored secret');
  t.equal((await other.inject('GET', '/api/v2/user/token', { basic, headers: { 'x-service-otp': recovery } })).statusCode, 200, 'restored recovery code');

  // a hand-written backup with the secret in clear: encrypted on restore
  const plainSecret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  const admins = [
    {
      username: 'restored-admin',
      password: 'restored-admin-pass',
      permissions: ['*'],
      filters: {
        totp_config: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: plainSecret } },
        recovery_codes: [{ secret: { status: 'Plain', payload: 'AAAA-BBBB-CCCC-DDDD' }, used: false }],
      },
    },
  ];
  t.equal((await other.inject('POST', '/api/v2/loaddata', { token: await other.adminToken(), payload: { admins } })).statusCode, 200);
  const sealed = await other.app.orm.em.fork().findOneOrFail(Admin, { username: 'restored-admin' });
  t.match(
    sealed.filters,
    { totp_config: { secret: { status: 'AES-256-GCM' } }, recovery_codes: [{ secret: { status: 'AES-256-GCM' }, used: false }] },
    'encrypted at rest',
  );
  t.notOk(JSON.stringify(sealed.filters).includes(plainSecret));
  const rb = basicOf('restored-admin', 'restored-admin-pass');
  t.equal((await other.inject('GET', '/api/v2/token', { basic: rb })).statusCode, 401);
  t.equal((await other.inject('GET', '/api/v2/token', { basic: rb, headers: { 'x-service-otp': totpNow(plainSecret) } })).statusCode, 200);
  t.equal(
    (await other.inject('GET', '/api/v2/token', { basic: rb, headers: { 'x-service-otp': 'aaaabbbbccccdddd' } })).statusCode,
    200,
    'restored recovery code',
  );
  const badSecret = [
    { ...admins[0], username: 'bad-secret', filters: { totp_config: { enabled: true, config_name: 'Default', secret: { status: 'Plain', payload: 'x' } } } },
  ];
  const refused = await other.inject('POST', '/api/v2/loaddata', { token: await other.adminToken(), payload: { admins: badSecret } });
  t.equal(refused.statusCode, 400);
  t.match(JSON.parse(refused.payload).message, /totp_config\.secret/);
});

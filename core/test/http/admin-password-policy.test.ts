import t from 'tap';
import { createTestApp } from '../../src/testing.js';
import { passwordEntropy } from '../../src/accounts/password-policy.js';
import { TestSmtp, type ReceivedMail } from '../helpers/smtp.js';

// admin_password_policy.min_entropy: the admins' password strength rule (users have
// filters.password_strength), enforced on create, update, self password change and reset.
const MIN = 60;
const smtp = await new TestSmtp().start();
const ta = await createTestApp({
  config: {
    admin_password_policy: { min_entropy: MIN },
    smtp: { host: '127.0.0.1', port: smtp.port, from: 'Ferry <ferry@example.com>' },
    password_reset: { max_requests_per_host: 1000 },
  },
});
t.teardown(async () => {
  await ta.close();
  await smtp.stop();
});
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, any>;
const WEAK = 'password1';
const STRONG = 'Tr0ub4dor&3-horse-Battery';
const STRONG2 = 'Correct-Horse-7-Staple!Zq';
const rule = new RegExp(`too weak: about \\d+ bits of entropy, at least ${MIN} are required.*\\(admin_password_policy\\.min_entropy\\)`);

t.ok(passwordEntropy(WEAK) < MIN && passwordEntropy(STRONG) >= MIN && passwordEntropy(STRONG2) >= MIN, 'the passwords are on both sides of the rule');

await t.test('create: a weak password is a 400 naming "password" and the rule; nothing is stored', async (t) => {
  const weak = await ta.inject('POST', '/api/v2/admins', { token: adminToken, payload: { username: 'ann', password: WEAK, permissions: ['*'] } });
  t.equal(weak.statusCode, 400);
  t.match(json(weak), { error: 'Bad Request', message: /^"password": / });
  t.match(json(weak).message, rule);
  t.equal((await ta.inject('GET', '/api/v2/admins/ann', { token: adminToken })).statusCode, 404, 'not created');
  const ok = await ta.inject('POST', '/api/v2/admins', {
    token: adminToken,
    payload: { username: 'ann', password: STRONG, email: 'ann@example.com', permissions: ['*'] },
  });
  t.equal(ok.statusCode, 201, ok.payload);
  const noPassword = await ta.inject('POST', '/api/v2/admins', {
    token: adminToken,
    payload: { username: 'keyonly', permissions: ['*'], filters: { disable_password_auth: true, allow_api_key_auth: true } },
  });
  t.equal(noPassword.statusCode, 201, 'an admin without a password (password login disabled) has nothing to check');
});

await t.test('update: a weak new password is refused and the old one keeps working; no password keeps it', async (t) => {
  const body = { username: 'ann', email: 'ann@example.com', permissions: ['*'] };
  const weak = await ta.inject('PUT', '/api/v2/admins/ann', { token: adminToken, payload: { ...body, password: WEAK } });
  t.equal(weak.statusCode, 400);
  t.match(json(weak).message, rule);
  await ta.adminToken('ann', STRONG);
  t.equal((await ta.inject('PUT', '/api/v2/admins/ann', { token: adminToken, payload: body })).statusCode, 200, 'no password: unchanged');
  t.equal((await ta.inject('PUT', '/api/v2/admins/ann', { token: adminToken, payload: { ...body, password: STRONG2 } })).statusCode, 200);
  await ta.adminToken('ann', STRONG2);
});

await t.test('PUT /admin/changepwd: a weak new password is a 400 naming "new_password"', async (t) => {
  const token = await ta.adminToken('ann', STRONG2);
  const weak = await ta.inject('PUT', '/api/v2/admin/changepwd', { token, payload: { current_password: STRONG2, new_password: WEAK } });
  t.equal(weak.statusCode, 400);
  t.match(json(weak).message, /^"new_password": /);
  t.match(json(weak).message, rule);
  await ta.adminToken('ann', STRONG2);
  const ok = await ta.inject('PUT', '/api/v2/admin/changepwd', { token, payload: { current_password: STRONG2, new_password: STRONG } });
  t.equal(ok.statusCode, 200, ok.payload);
  await ta.adminToken('ann', STRONG);
});

await t.test('reset-password: a weak password is refused after the code, which stays usable', async (t) => {
  const before = smtp.mails.length;
  t.equal((await ta.inject('POST', '/api/v2/admins/ann/forgot-password')).statusCode, 200);
  const mail: ReceivedMail = await smtp.waitFor('ann@example.com', before);
  const code = /Code: ([A-Z0-9]+)/.exec(mail.parsed.text ?? '')?.[1] ?? '';
  t.match(code, /^[2-9A-Z]{12}$/);
  const weak = await ta.inject('POST', '/api/v2/admins/ann/reset-password', { payload: { code, password: WEAK } });
  t.equal(weak.statusCode, 400);
  t.match(json(weak).message, /^"password": /);
  t.match(json(weak).message, rule);
  await ta.adminToken('ann', STRONG);
  const ok = await ta.inject('POST', '/api/v2/admins/ann/reset-password', { payload: { code, password: STRONG2 } });
  t.equal(ok.statusCode, 200, ok.payload);
  await ta.adminToken('ann', STRONG2);
});

await t.test('users are not held to the admins rule', async (t) => {
  const r = await ta.inject('POST', '/api/v2/users', {
    token: adminToken,
    payload: { username: 'bob', password: WEAK, home_dir: `${ta.dataDir}/bob`, permissions: { '/': ['*'] } },
  });
  t.equal(r.statusCode, 201, r.payload);
});

await t.test('the configuration refuses a minimum out of range', async (t) => {
  await t.rejects(createTestApp({ config: { admin_password_policy: { min_entropy: 101 } } }), /admin_password_policy\.min_entropy/);
});

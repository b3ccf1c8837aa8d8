import t from 'tap';
import path from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { createTestApp, type TestApp } from '../../src/testing.js';
import { PasswordResetCode, User } from '../../src/data/entities/index.js';
import { PasswordResetService } from '../../src/auth/password-reset.service.js';
import { TestSmtp, type ReceivedMail } from '../helpers/smtp.js';

const smtp = await new TestSmtp().start();
const ta = await createTestApp({
  config: {
    smtp: { host: '127.0.0.1', port: smtp.port, from: 'Ferry <ferry@example.com>' },
    password_reset: { max_codes_per_account: 2, max_requests_per_host: 1000, max_attempts: 3 },
  },
});
t.teardown(async () => {
  await ta.close();
  await smtp.stop();
});
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, any>;
const resets = ta.app.container.resolve(PasswordResetService);
const codeOf = (m: ReceivedMail) => /Code: ([A-Z0-9]+)/.exec(m.parsed.text ?? '')?.[1] ?? '';

async function createUser(username: string, extra: Record<string, unknown> = {}, on = { app: ta, token: adminToken }) {
  const r = await on.app.inject('POST', '/api/v2/users', {
    token: on.token,
    payload: {
      username,
      password: `${username}-pass-1`,
      email: `${username}@example.com`,
      home_dir: path.join(on.app.dataDir, username),
      permissions: { '/': ['*'] },
      ...extra,
    },
  });
  if (r.statusCode !== 201) throw new Error(`create user: ${r.statusCode} ${r.payload}`);
}
const forgot = (app: TestApp, kind: 'admins' | 'users', username: string) =>
  app.inject('POST', `/api/v2/${kind}/${encodeURIComponent(username)}/forgot-password`);
const reset = (kind: 'admins' | 'users', username: string, payload: unknown) => ta.inject('POST', `/api/v2/${kind}/${username}/reset-password`, { payload });

t.test('admin: forgot → mail → reset → old tokens revoked, the code used once', async (t) => {
  const c = await ta.inject('POST', '/api/v2/admins', {
    token: adminToken,
    payload: { username: 'forgetful', password: 'old-admin-pass', email: 'forgetful@example.com', permissions: ['*'] },
  });
  t.equal(c.statusCode, 201);
  const oldToken = await ta.adminToken('forgetful', 'old-admin-pass');
  const before = smtp.mails.length;
  const r = await forgot(ta, 'admins', 'forgetful');
  t.equal(r.statusCode, 200);
  t.match(json(r), { message: /code has been mailed/ });
  const mail = await smtp.waitFor('forgetful@example.com', before);
  t.match(mail.parsed.subject, /password reset/i);
  const code = codeOf(mail);
  t.match(code, /^[2-9A-Z]{12}$/);
  const stored = await ta.app.orm.em.fork().find(PasswordResetCode, { username: 'forgetful' });
  t.ok(
    stored.length === 1 && stored[0]!.code_hash && stored[0]!.code_hash !== code && !stored[0]!.code_hash.includes(code),
    'only a hash of the code is stored',
  );

  const wrong = await reset('admins', 'forgetful', { code: 'AAAAAAAAAAAA', password: 'new-admin-pass' });
  t.equal(wrong.statusCode, 400);
  t.match(json(wrong), { error: 'Bad Request', message: /code is not valid/ });
  const missing = await reset('admins', 'forgetful', { password: 'x' });
  t.equal(missing.statusCode, 400);
  t.match(json(missing).message, /code/);

  const ok = await reset('admins', 'forgetful', { code: code.toLowerCase(), password: 'new-admin-pass' });
  t.equal(ok.statusCode, 200, ok.payload);
  t.match(json(ok), { message: String });
  const revoked = await ta.inject('GET', '/api/v2/admins', { token: oldToken });
  t.equal(revoked.statusCode, 401, 'a token issued before the reset is refused');
  t.match(json(revoked).message, /revoked/);
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'forgetful', password: 'old-admin-pass' } })).statusCode, 401, 'old password refused');
  const fresh = await ta.adminToken('forgetful', 'new-admin-pass');
  t.equal((await ta.inject('GET', '/api/v2/admins', { token: fresh })).statusCode, 200, 'a token issued after the reset works');
  t.equal((await reset('admins', 'forgetful', { code, password: 'third-admin-pass' })).statusCode, 400, 'a code is single-use');
});

t.test('unknown accounts are indistinguishable; refused accounts get no mail', async (t) => {
  await createUser('restricted', { filters: { web_client: ['password-reset-disabled'] } });
  await createUser('nomail', { email: '' });
  const known = await forgot(ta, 'users', 'restricted');
  const unknown = await forgot(ta, 'users', 'nobody-here');
  const unknownAdmin = await forgot(ta, 'admins', 'nobody-here');
  const noMail = await forgot(ta, 'users', 'nomail');
  for (const r of [unknown, unknownAdmin, noMail]) {
    t.equal(r.statusCode, known.statusCode);
    t.equal(r.payload, known.payload, 'same body');
    t.same(Object.keys(r.headers).sort(), Object.keys(known.headers).sort(), 'same headers');
  }
  const before = smtp.mails.length;
  await resets.idle();
  await new Promise((r) => setTimeout(r, 300));
  t.equal(smtp.mails.length, before, 'nothing mailed for an unknown, restricted or address-less account');
  const badCode = await reset('users', 'nobody-here', { code: 'AAAAAAAAAAAA', password: 'whatever-1' });
  const badKnown = await reset('users', 'restricted', { code: 'AAAAAAAAAAAA', password: 'whatever-1' });
  t.equal(badCode.statusCode, 400);
  t.equal(badCode.payload, badKnown.payload, 'reset answers alike for unknown accounts');
  const slash = await ta.inject('POST', '/api/v2/users/a%5Cb/forgot-password');
  t.equal(slash.statusCode, 400, 'a name with a backslash is refused');
});

t.test('forgot-password: the same queries before the answer whatever the account', async (t) => {
  // every request checks the IP lists' version (one settings read), not only those after the cache's ttl
  const app = await createTestApp({
    config: { common: { ip_lists_cache_ttl: 0 }, smtp: { host: '127.0.0.1', port: smtp.port }, password_reset: { max_requests_per_host: 1000 } },
  });
  t.teardown(() => app.close());
  const admin = await app.adminToken();
  await createUser('present', {}, { app, token: admin });
  await createUser('restricted', { filters: { web_client: ['password-reset-disabled'] } }, { app, token: admin });
  await createUser('no-address', { email: '' }, { app, token: admin });
  t.equal(
    (
      await app.inject('POST', '/api/v2/admins', {
        token: admin,
        payload: { username: 'present-admin', password: 'present-admin-pass', email: 'pa@example.com', permissions: ['*'] },
      })
    ).statusCode,
    201,
  );
  const appResets = app.app.container.resolve(PasswordResetService);

  // each query is counted for the request whose work ran it (the async context of its inject, the
  // deferred work included): before the answer was written, or after
  const traced = new AsyncLocalStorage<{ answered: boolean; before: string[]; after: string[] }>();
  const knex = (app.app.orm.em as unknown as SqlEntityManager).getConnection().getKnex();
  const onQuery = (q: { sql: string }) => {
    const r = traced.getStore();
    if (r) (r.answered ? r.after : r.before).push(q.sql);
  };
  knex.on('query', onQuery);
  t.teardown(() => void knex.off('query', onQuery));
  const queries = async (kind: 'admins' | 'users', username: string) => {
    const r = { answered: false, before: [] as string[], after: [] as string[] };
    const res = await traced.run(r, () => forgot(app, kind, username));
    r.answered = true;
    t.equal(res.statusCode, 200, `${kind}/${username}`);
    await appResets.idle();
    return r;
  };
  const accountTable = /\b(from|join|into|update)\s+["`]?(users|admins|groups|users_groups|roles)\b/i;
  for (const kind of ['users', 'admins'] as const) {
    const unknown = await queries(kind, `nobody-${kind}`);
    t.ok(unknown.before.length > 0, 'the listener sees the queries before the answer');
    t.notOk(
      unknown.before.some((sql) => accountTable.test(sql)),
      'no account table is read before the answer',
    );
    t.ok(
      unknown.after.some((sql) => accountTable.test(sql)),
      'the account lookup runs after the answer (and the listener sees it)',
    );
    for (const username of kind === 'users' ? ['present', 'restricted', 'no-address'] : ['present-admin']) {
      const known = await queries(kind, username);
      t.same(known.before, unknown.before, `${kind}/${username}: the same statements before the answer as an unknown account`);
      if (username.startsWith('present')) {
        t.ok(
          known.after.some((sql) => /^update\s+["`]?password_reset_codes/i.test(sql)),
          `${kind}/${username}: the code is stored after the answer`,
        );
      }
    }
  }
});

t.test('users: password_strength applies, expiration restarts, per-account limit, wrong tries spend the code', async (t) => {
  await createUser('weakling', { filters: { password_strength: 60 } });
  const oldToken = await ta.userToken('weakling', 'weakling-pass-1');
  let before = smtp.mails.length;
  t.equal((await forgot(ta, 'users', 'weakling')).statusCode, 200);
  const code = codeOf(await smtp.waitFor('weakling@example.com', before));
  const weak = await reset('users', 'weakling', { code, password: 'password1' });
  t.equal(weak.statusCode, 400);
  t.match(json(weak).message, /"password".*too weak.*at least 60/);
  const t0 = Date.now();
  const strong = await reset('users', 'weakling', { code, password: 'Tr0ub4dor&3-horse-Battery' });
  t.equal(strong.statusCode, 200, 'the code survives a refused weak password');
  const u = await ta.app.orm.em.fork().findOneOrFail(User, { username: 'weakling' });
  t.ok(u.last_password_change >= t0, 'password expiration counts from the reset');
  t.equal((await ta.inject('GET', '/api/v2/user/profile', { token: oldToken })).statusCode, 401, 'user token revoked');
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'weakling', password: 'Tr0ub4dor&3-horse-Battery' } })).statusCode, 200);
  // the same policy on the self-service password change
  const newToken = await ta.userToken('weakling', 'Tr0ub4dor&3-horse-Battery');
  const weakChange = await ta.inject('PUT', '/api/v2/user/changepwd', {
    token: newToken,
    payload: { current_password: 'Tr0ub4dor&3-horse-Battery', new_password: 'password2' },
  });
  t.equal(weakChange.statusCode, 400);
  t.match(json(weakChange).message, /"new_password".*too weak/);
  t.equal(
    (
      await ta.inject('PUT', '/api/v2/user/changepwd', {
        token: newToken,
        payload: { current_password: 'Tr0ub4dor&3-horse-Battery', new_password: 'Correct-Horse-Battery-Staple-9' },
      })
    ).statusCode,
    200,
  );

  // two codes per window (config), the third request mails nothing
  await createUser('spammed');
  before = smtp.mails.length;
  for (let i = 0; i < 3; i++) t.equal((await forgot(ta, 'users', 'spammed')).statusCode, 200);
  await resets.idle();
  await smtp.waitFor('spammed@example.com', before);
  await new Promise((r) => setTimeout(r, 300));
  const got = smtp.mails.slice(before).filter((m) => m.rcptTo.includes('spammed@example.com'));
  t.equal(got.length, 2, 'max_codes_per_account');

  // max_attempts (3) wrong codes invalidate the pending ones
  const valid = codeOf(got[1]!);
  for (let i = 0; i < 3; i++) t.equal((await reset('users', 'spammed', { code: `WRONG${i}WRONG${i}`, password: 'Another-pass-42!' })).statusCode, 400);
  t.equal((await reset('users', 'spammed', { code: valid, password: 'Another-pass-42!' })).statusCode, 400, 'spent by wrong tries');

  // an expired code
  await createUser('late');
  before = smtp.mails.length;
  await forgot(ta, 'users', 'late');
  const late = codeOf(await smtp.waitFor('late@example.com', before));
  await ta.app.orm.em.fork().nativeUpdate(PasswordResetCode, { username: 'late' }, { expires_at: Date.now() - 1 });
  t.equal((await reset('users', 'late', { code: late, password: 'Another-pass-42!' })).statusCode, 400, 'expired');
});

t.test('per-host limit (429) and no mail server (400)', async (t) => {
  const small = await createTestApp({ config: { smtp: { host: '127.0.0.1', port: smtp.port }, password_reset: { max_requests_per_host: 3 } } });
  t.teardown(() => small.close());
  for (let i = 0; i < 3; i++) t.equal((await forgot(small, 'users', `someone${i}`)).statusCode, 200);
  const limited = await forgot(small, 'admins', 'someone-else');
  t.equal(limited.statusCode, 429);
  t.match(json(limited), { error: 'Too Many Requests', message: /too many password reset requests/ });
  const retry = Number(limited.headers['retry-after']);
  t.ok(retry > 3500 && retry <= 3600, `Retry-After: when the oldest request leaves the 60-minute window (${retry} s)`);
  await small.app.container.resolve(PasswordResetService).idle();

  const noSmtp = await createTestApp();
  t.teardown(() => noSmtp.close());
  // the reference implementation answers 400 for "no SMTP configuration"; the same for every account and kind
  for (const kind of ['users', 'admins'] as const) {
    for (const username of ['anyone', 'admin']) {
      const r = await forgot(noSmtp, kind, username);
      t.equal(r.statusCode, 400, `${kind}/${username}`);
      t.match(json(r), { error: 'Bad Request', message: 'password reset by email is not available: no mail server is configured (config section smtp)' });
    }
  }
});

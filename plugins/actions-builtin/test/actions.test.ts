import t from 'tap';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { TOKENS, type EventBus, type EventManager, type ProviderEvent } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { unzip } from '@ferry/testkit';

// an in-process SMTP receiver; it refuses recipients whose address starts with "reject"
const mails: { to: string[]; raw: string }[] = [];
const smtp = new SMTPServer({
  secure: false,
  disabledCommands: ['STARTTLS'],
  authOptional: true,
  logger: false,
  onRcptTo(address, _session, cb) {
    if (address.address.startsWith('reject')) return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
    cb();
  },
  onData(stream, session, cb) {
    const chunks: Buffer[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', () => {
      mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
      cb();
    });
  },
});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
const smtpPort = (smtp.server.address() as { port: number }).port;
t.teardown(() => new Promise<void>((r) => smtp.close(() => r())));

// provider 0 is @ferry/fs-local behind a gate (test/fixtures/gated-local) to hold a retention check open;
// the test action type 101 (core's fixture) records what later actions of a rule render
const gate = ((globalThis as any).__ferryListGate ??= { gate: null, waiting: 0 }) as { gate: Promise<void> | null; waiting: number };
const LOG = ((globalThis as any).__ferryActionLog ??= []) as {
  app: string;
  rule: string;
  action: string;
  options: Record<string, any>;
  failedActions?: string[];
}[];
const recorded = (rule: string) => LOG.filter((e) => e.app === 'builtin' && e.rule === rule).map((e) => `${e.action}: ${e.options.message}`);
const ta = await createTestApp({
  plugins: [
    { name: 'fixture-gated-local', path: 'plugins/actions-builtin/test/fixtures/gated-local' },
    { name: '@ferry/actions-builtin' },
    { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions', config: { app: 'builtin' } },
  ],
  config: { smtp: { host: '127.0.0.1', port: smtpPort, from: 'ferry@test.local' }, log: { file: '' } },
});
t.teardown(() => ta.close());
const token = await ta.adminToken();
const mgr = ta.app.container.resolve<EventManager>(TOKENS.EventManager);
const sql = (q: string, p: unknown[] = []) => ta.app.orm.em.fork().getConnection().execute(q, p);
const DAY = 86_400_000;
const now = Date.now();

async function addUser(username: string, o: Record<string, unknown> = {}) {
  const home = path.join(ta.dataDir, 'homes', username);
  mkdirSync(home, { recursive: true });
  const u = {
    email: '',
    status: 1,
    expiration_date: 0,
    filters: {},
    last_login: 0,
    created_at: now,
    last_password_change: 0,
    used_upload_data_transfer: 0,
    ...o,
  };
  await sql(
    'insert into users (username, email, status, expiration_date, public_keys, home_dir, permissions, filters, filesystem, custom_placeholders, oidc_custom_fields, created_at, last_login, last_password_change, used_upload_data_transfer, used_download_data_transfer) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      username,
      u.email,
      u.status,
      u.expiration_date,
      '[]',
      home,
      JSON.stringify({ '/': ['*'] }),
      JSON.stringify(u.filters),
      '{"provider":0}',
      '[]',
      '{}',
      u.created_at,
      u.last_login,
      u.last_password_change,
      u.used_upload_data_transfer,
      7,
    ],
  );
  return home;
}
const user = async (username: string) => ((await sql('select * from users where username = ?', [username])) as Record<string, unknown>[])[0];
const mkAction = async (name: string, type: number, options: Record<string, unknown> = {}) => {
  const r = await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name, type, options } });
  t.equal(r.statusCode, 201, `${name}: ${r.payload}`);
};
/** An action name, or `!name` for a failure action. */
const addRule = async (name: string, actions: string[], conditions: Record<string, unknown> = {}) => {
  const links = actions.map((a, i) => ({ name: a.replace(/^!/, ''), order: i, relation_options: { is_failure_action: a.startsWith('!') } }));
  const r = await ta.inject('POST', '/api/v2/eventrules', { token, payload: { name, trigger: 6, conditions, actions: links } });
  if (r.statusCode !== 201) throw new Error(r.payload);
};
const startRule = async (name: string) => {
  const run = await ta.inject('POST', `/api/v2/eventrules/run/${name}`, { token });
  if (run.statusCode !== 202) throw new Error(run.payload);
};
const runRule = async (name: string, actions: string[], conditions: Record<string, unknown> = {}) => {
  await addRule(name, actions, conditions);
  await startRule(name);
  await mgr.idle();
};
/** Test action (type 101) rendering `message` against the rule's context. */
const mkReader = (name: string, message: string) => mkAction(name, 101, { test_config: { message } });
/** Waits (no clock) until `cond` holds, yielding to the event loop between tries. */
const until = async (cond: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 100_000; i++) {
    if (await cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`never happened: ${what}`);
};
const execs: { rule: string; action: string; ok: boolean; error?: string }[] = [];
mgr.onExecution((e) => execs.push(e));
const outcome = (rule: string) => execs.filter((e) => e.rule === rule).map((e) => `${e.action}:${e.ok ? 'ok' : e.error}`);

t.test('type 10 is reserved; types are registered with their options keys', async (t) => {
  t.equal((await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name: 'r10', type: 10 } })).statusCode, 400);
  const bad = await ta.inject('POST', '/api/v2/eventactions', {
    token,
    payload: { name: 'ui', type: 14, options: { user_inactivity_config: { disable_threshold: 5, delete_threshold: 3 } } },
  });
  t.equal(bad.statusCode, 400);
  t.match(bad.payload, /delete_threshold must be greater than disable_threshold/);
  const wrong = await ta.inject('POST', '/api/v2/eventrules', { token, payload: { name: 'x', trigger: 4, actions: [{ name: 'nope' }] } });
  t.equal(wrong.statusCode, 400);
});

t.test('data retention (8) with .RetentionChecks for a later email action, quota updated', async (t) => {
  const home = await addUser('ret1', { email: 'ret1@test.local', filters: {} });
  const old = (now - 48 * 3_600_000) / 1000;
  mkdirSync(path.join(home, 'logs', 'deep'), { recursive: true });
  mkdirSync(path.join(home, 'keep'), { recursive: true });
  for (const f of ['logs/a.log', 'logs/deep/b.log', 'keep/c.txt', 'top.txt']) {
    writeFileSync(path.join(home, f), 'x'.repeat(10));
    utimesSync(path.join(home, f), old, old);
  }
  writeFileSync(path.join(home, 'logs', 'fresh.log'), 'new');
  await mkAction('retention', 8, {
    retention_config: {
      folders: [
        { path: '/', retention: 24 },
        { path: '/logs', retention: 24, delete_empty_dirs: true },
        { path: '/keep', retention: 0 },
      ],
    },
  });
  await mkReader(
    'ret-report',
    '{{range .RetentionChecks}}{{.Username}} {{.ActionName}} {{.Type}}:{{range .Results}} {{.Path}}={{.DeletedFiles}}/{{.DeletedSize}}{{if .Info}} ({{.Info}}){{end}}{{end}}{{if .Error}} error {{.Error}}{{end}}{{end}}',
  );
  await runRule('retention-rule', ['retention', 'ret-report'], { options: { names: [{ pattern: 'ret1' }] } });
  t.same(outcome('retention-rule'), ['retention:ok', 'ret-report:ok']);
  t.same(
    recorded('retention-rule'),
    ['ret-report: ret1 retention Data retention: /=1/10 /logs=2/20 /keep=0/0 (retention 0: nothing deleted)'],
    '.RetentionChecks reach a later action of the rule',
  );
  t.notOk(existsSync(path.join(home, 'logs', 'a.log')));
  t.notOk(existsSync(path.join(home, 'logs', 'deep')), 'empty dir removed');
  t.ok(existsSync(path.join(home, 'logs', 'fresh.log')));
  t.ok(existsSync(path.join(home, 'keep', 'c.txt')), 'retention 0 keeps');
  t.notOk(existsSync(path.join(home, 'top.txt')));
  const u = await user('ret1');
  t.equal(Number(u!.used_quota_files), 2, 'quota rescanned after deletions');
  t.same((await ta.inject('GET', '/api/v2/retention/users/checks', { token })).result, [], 'no check in progress');
});

t.test(
  'data retention (8): GET /retention/users/checks lists a check in progress; a second check of the user fails with .RetentionChecks for the failure action',
  async (t) => {
    const home = await addUser('ret2');
    const old = (now - 10 * 3_600_000) / 1000;
    writeFileSync(path.join(home, 'old.txt'), 'x'.repeat(7));
    utimesSync(path.join(home, 'old.txt'), old, old);
    await mkAction('retention2', 8, { retention_config: { folders: [{ path: '/', retention: 2, delete_empty_dirs: true }] } });
    await mkReader('ret-failed', '{{range .RetentionChecks}}{{.Username}}: {{.Error}}{{end}}');
    await addRule('ret-slow', ['retention2'], { options: { names: [{ pattern: 'ret2' }] } });
    await addRule('ret-again', ['retention2', '!ret-failed'], { options: { names: [{ pattern: 'ret2' }] } });

    let release!: () => void;
    gate.gate = new Promise<void>((r) => (release = r));
    t.teardown(() => {
      gate.gate = null;
      release();
    });
    await startRule('ret-slow');
    await until(() => gate.waiting > 0, 'the retention walk waits on the storage');
    const checks = await ta.inject('GET', '/api/v2/retention/users/checks', { token });
    t.equal(checks.statusCode, 200);
    const list = checks.result as { username: string; folders: unknown[]; start_time: number }[];
    t.same(
      list.map((c) => ({ username: c.username, folders: c.folders })),
      [{ username: 'ret2', folders: [{ path: '/', retention: 2, delete_empty_dirs: true }] }],
      'the check in progress',
    );
    t.ok(list[0]!.start_time > 0 && list[0]!.start_time <= Date.now(), 'start_time in Unix ms');
    t.ok(existsSync(path.join(home, 'old.txt')), 'nothing deleted yet');

    // 401 without credentials, 403 for an admin without the "*" permission
    t.equal((await ta.inject('GET', '/api/v2/retention/users/checks')).statusCode, 401);
    const lim = await ta.inject('POST', '/api/v2/admins', {
      token,
      payload: { username: 'ret-viewer', password: 'viewer-pass-1', permissions: ['view_users', 'quota_scans'] },
    });
    t.equal(lim.statusCode, 201, lim.payload);
    const forbidden = await ta.inject('GET', '/api/v2/retention/users/checks', { token: await ta.adminToken('ret-viewer', 'viewer-pass-1') });
    t.equal(forbidden.statusCode, 403);
    t.notOk(forbidden.payload.includes('ret2'));

    // one check per user at a time: a second one fails, its failure action renders .RetentionChecks
    await startRule('ret-again');
    await until(() => outcome('ret-again').length === 2, 'the second check and its failure action ran');
    t.match(outcome('ret-again'), [/^retention2:user "ret2": a retention check is already running for user "ret2"$/, 'ret-failed:ok']);
    t.same(
      recorded('ret-again'),
      ['ret-failed: ret2: a retention check is already running for user "ret2"'],
      'failure actions see the outputs of the failed action',
    );

    release();
    gate.gate = null;
    await mgr.idle();
    t.same(outcome('ret-slow'), ['retention2:ok']);
    t.notOk(existsSync(path.join(home, 'old.txt')), 'the check completed once released');
    t.same((await ta.inject('GET', '/api/v2/retention/users/checks', { token })).result, [], 'no check in progress any more');
  },
);

t.test('data retention (8): folder paths are validated and normalised at save time', async (t) => {
  const save = (name: string, folders: unknown[]) =>
    ta.inject('POST', '/api/v2/eventactions', { token, payload: { name, type: 8, options: { retention_config: { folders } } } });
  for (const [bad, why] of [
    ['/a/../b', /"folders\[0\]\.path" is not a valid virtual path: path must not contain '\.\.' segments/],
    ['..', /"folders\[0\]\.path" is not a valid virtual path/],
    ['/a\u0001b', /"folders\[0\]\.path" is not a valid virtual path: path contains control characters/],
    ['/a%2e%2e', /"folders\[0\]\.path" is not a valid virtual path: path contains an encoded dot/],
  ] as const) {
    const r = await save('ret-bad', [{ path: bad, retention: 1 }]);
    t.equal(r.statusCode, 400, `${JSON.stringify(bad)} refused`);
    t.match(JSON.parse(r.payload).message, why);
  }
  const dup = await save('ret-dup', [
    { path: '/logs', retention: 1 },
    { path: '/logs/', retention: 2 },
  ]);
  t.equal(dup.statusCode, 400, '/logs and /logs/ are the same folder');
  t.match(JSON.parse(dup.payload).message, /"folders\[1\]" repeats the path of another folder/);
  const dup2 = await save('ret-dup', [
    { path: 'a\\b', retention: 1 },
    { path: '/a/./b', retention: 2 },
  ]);
  t.equal(dup2.statusCode, 400, 'backslashes and "." segments are normalised before the comparison');
  t.equal((await ta.inject('GET', '/api/v2/eventactions/ret-bad', { token })).statusCode, 404, 'nothing saved');

  t.equal(
    (
      await save('ret-norm', [
        { path: 'logs/', retention: 1 },
        { path: '/', retention: 0 },
      ])
    ).statusCode,
    201,
  );
  const stored = (await ta.inject('GET', '/api/v2/eventactions/ret-norm', { token })).result as {
    options: { retention_config: { folders: { path: string }[] } };
  };
  t.same(
    stored.options.retention_config.folders.map((f) => f.path),
    ['/logs', '/'],
    'stored normalised',
  );
});

t.test("data retention (8): files deleted in a virtual folder with its own quota update the folder's quota", async (t) => {
  await addUser('retvf');
  const folderDir = path.join(ta.dataDir, 'folders', 'retvf-folder');
  mkdirSync(folderDir, { recursive: true });
  const old = (now - 48 * 3_600_000) / 1000;
  writeFileSync(path.join(folderDir, 'old.bin'), 'o'.repeat(40));
  utimesSync(path.join(folderDir, 'old.bin'), old, old);
  writeFileSync(path.join(folderDir, 'new.bin'), 'n'.repeat(9));
  await sql('insert into folders (name, mapped_path, filesystem, used_quota_size, used_quota_files) values (?, ?, ?, ?, ?)', [
    'retvf-folder',
    folderDir,
    '{"provider":0}',
    49,
    2,
  ]);
  await sql(
    'insert into users_folders (user_id, folder_id, virtual_path, quota_size, quota_files) values ((select id from users where username = ?), (select id from folders where name = ?), ?, ?, ?)',
    ['retvf', 'retvf-folder', '/vf', 1000, 10],
  );
  await mkAction('retention-vf', 8, { retention_config: { folders: [{ path: '/vf', retention: 24 }] } });
  await runRule('retention-vf-rule', ['retention-vf'], { options: { names: [{ pattern: 'retvf' }] } });
  t.same(outcome('retention-vf-rule'), ['retention-vf:ok']);
  t.notOk(existsSync(path.join(folderDir, 'old.bin')));
  t.ok(existsSync(path.join(folderDir, 'new.bin')));
  const f = ((await sql('select * from folders where name = ?', ['retvf-folder'])) as Record<string, unknown>[])[0]!;
  t.equal(Number(f.used_quota_files), 1, 'folder quota rescanned');
  t.equal(Number(f.used_quota_size), 9);
});

t.test('quota resets (5, 6, 7)', async (t) => {
  const home = await addUser('q1', { used_upload_data_transfer: 500 });
  writeFileSync(path.join(home, 'f1'), 'a'.repeat(100));
  writeFileSync(path.join(home, 'f2'), 'b'.repeat(50));
  const folderDir = path.join(ta.dataDir, 'folders', 'shared');
  mkdirSync(folderDir, { recursive: true });
  writeFileSync(path.join(folderDir, 'x'), 'c'.repeat(30));
  await sql('insert into folders (name, mapped_path, filesystem) values (?, ?, ?)', ['shared', folderDir, '{"provider":0}']);
  await mkAction('uq', 5);
  await mkAction('fq', 6);
  await mkAction('tq', 7);
  await runRule('quota-rule', ['uq', 'fq', 'tq'], { options: { names: [{ pattern: 'q1' }, { pattern: 'shared' }] } });
  t.same(outcome('quota-rule'), ['uq:ok', 'fq:ok', 'tq:ok']);
  const u = await user('q1');
  t.equal(Number(u!.used_quota_size), 150);
  t.equal(Number(u!.used_quota_files), 2);
  t.equal(Number(u!.used_upload_data_transfer), 0);
  t.equal(Number(u!.used_download_data_transfer), 0);
  const f = ((await sql('select * from folders where name = ?', ['shared'])) as Record<string, unknown>[])[0]!;
  t.equal(Number(f.used_quota_size), 30);
  // a provider event on a user resets only that user
  await ta.inject('POST', '/api/v2/eventrules', {
    token,
    payload: { name: 'on-user-add', trigger: 2, conditions: { provider_events: ['add'], options: { provider_objects: ['user'] } }, actions: [{ name: 'tq' }] },
  });
  await sql('update users set used_upload_data_transfer = 9 where username = ?', ['q1']);
  ta.app.container.resolve<import('@ferry/core').EventBus>(TOKENS.EventBus).publish('provider', {
    timestamp: Date.now() * 1e6,
    action: 'add',
    username: 'admin',
    ip: '',
    object_type: 'user',
    object_name: 'q1',
    object_data: {},
    instance_id: 'x',
  });
  await mgr.idle();
  t.equal(Number((await user('q1'))!.used_upload_data_transfer), 0);
  await ta.inject('DELETE', '/api/v2/eventrules/on-user-add', { token });
});

t.test('password expiration (11) mails users; user expiration (12) fails listing expired users', async (t) => {
  await addUser('pw1', { email: 'pw1@test.local', filters: { password_expiration: 10 }, last_password_change: now - 8 * DAY });
  await addUser('pw2', { email: 'pw2@test.local', filters: { password_expiration: 30 }, last_password_change: now - DAY });
  await addUser('pw3', { email: '', filters: { password_expiration: 10 }, last_password_change: now - 9 * DAY });
  await mkAction('pwd', 11, { pwd_expiration_config: { threshold: 5 } });
  await runRule('pwd-rule', ['pwd'], { options: { names: [{ pattern: 'pw*' }] } });
  t.same(outcome('pwd-rule'), ['pwd:ok']);
  t.same(
    mails.map((m) => m.to),
    [['pw1@test.local']],
  );
  t.match(mails[0]!.raw, /Subject: Your password expires in 2 days/);

  // no memory of earlier notices: every run mails again; expired passwords are included; disabled users are not mailed
  await addUser('pw4', { email: 'pw4@test.local', filters: { password_expiration: 10 }, last_password_change: now - 20 * DAY });
  await addUser('pw5', { email: 'pw5@test.local', status: 0, filters: { password_expiration: 10 }, last_password_change: now - 9 * DAY });
  mails.length = 0;
  await runRule('pwd-again', ['pwd'], { options: { names: [{ pattern: 'pw*' }] } });
  t.same(outcome('pwd-again'), ['pwd:ok']);
  t.same(
    mails.map((m) => m.to).sort(),
    [['pw1@test.local'], ['pw4@test.local']],
    'pw1 mailed again, pw4 (expired) too, never pw5 (disabled) or pw3 (no email)',
  );
  t.match(mails.find((m) => m.to[0] === 'pw4@test.local')!.raw, /Subject: Your password has expired/);

  // a user whose mail fails: the failure action still sees who was mailed
  await addUser('pwf-a', { email: 'reject-a@test.local', filters: { password_expiration: 10 }, last_password_change: now - 8 * DAY });
  await addUser('pwf-b', { email: 'pwf-b@test.local', filters: { password_expiration: 10 }, last_password_change: now - 8 * DAY });
  await mkReader('pwd-notified', 'notified: {{stringJoin .NotifiedUsers ","}} ({{.ErrorString}})');
  mails.length = 0;
  await runRule('pwd-partial', ['pwd', '!pwd-notified'], { options: { names: [{ pattern: 'pwf-*' }] } });
  t.match(outcome('pwd-partial'), [/^pwd:user "pwf-a": .*mailbox unavailable/, 'pwd-notified:ok']);
  t.match(recorded('pwd-partial'), [/^pwd-notified: notified: pwf-b \(pwd: user "pwf-a": /], '.NotifiedUsers reaches the failure action');
  t.same(
    mails.map((m) => m.to),
    [['pwf-b@test.local']],
  );

  await addUser('exp1', { expiration_date: now - DAY });
  await addUser('exp2', { expiration_date: now + DAY });
  await mkAction('uexp', 12);
  await mkReader('uexp-failed', 'expired: {{stringJoin .ExpiredUsers ","}} ({{.ErrorString}})');
  await mkReader('uexp-after', 'not reached');
  await runRule('uexp-rule', ['uexp', '!uexp-failed'], { options: { names: [{ pattern: 'exp*' }] } });
  t.same(outcome('uexp-rule'), ['uexp:expired users: exp1', 'uexp-failed:ok']);
  t.same(recorded('uexp-rule'), ['uexp-failed: expired: exp1 (uexp: expired users: exp1)'], 'the failure action sees .ExpiredUsers of the failed check');
  await addUser('exp3', { expiration_date: now + 10 * DAY });
  await runRule('uexp-none', ['uexp', 'uexp-after', '!uexp-failed'], { options: { names: [{ pattern: 'exp3' }] } });
  t.same(outcome('uexp-none'), ['uexp:ok', 'uexp-after:ok'], 'nothing expired: the check succeeds, no failure action');
});

t.test('user inactivity (14) disables then deletes', async (t) => {
  await addUser('idle1', { last_login: now - 40 * DAY });
  await addUser('idle2', { last_login: now - 100 * DAY });
  await addUser('idle3', { last_login: now - DAY });
  await mkAction('inactive', 14, { user_inactivity_config: { disable_threshold: 30, delete_threshold: 90 } });
  await runRule('inactive-rule', ['inactive'], { options: { names: [{ pattern: 'idle*' }] } });
  t.same(outcome('inactive-rule'), ['inactive:ok']);
  t.equal((await user('idle1'))!.status, 0);
  t.equal(await user('idle2'), undefined);
  t.equal((await user('idle3'))!.status, 1);
});

t.test('user inactivity (14): when one user fails, the failure action sees the users already disabled and deleted', async (t) => {
  await addUser('idlef-a', { last_login: now - 100 * DAY });
  await addUser('idlef-b', { last_login: now - 100 * DAY });
  await addUser('idlef-c', { last_login: now - 40 * DAY });
  // the deletion of idlef-a fails (the storage of the accounts port is patched for this test only)
  const proto = Object.getPrototypeOf(ta.app.container.resolve(TOKENS.EventAccounts)) as { deleteUser(this: unknown, username: string): Promise<void> };
  const deleteUser = proto.deleteUser;
  proto.deleteUser = function (this: unknown, username: string) {
    return username === 'idlef-a' ? Promise.reject(new Error('account is locked')) : deleteUser.call(this, username);
  };
  t.teardown(() => void (proto.deleteUser = deleteUser));
  await mkAction('inactive-f', 14, { user_inactivity_config: { disable_threshold: 30, delete_threshold: 90 } });
  await mkReader('inactive-report', 'disabled: {{stringJoin .DisabledUsers ","}} deleted: {{stringJoin .DeletedUsers ","}} ({{.ErrorString}})');
  await runRule('inactive-partial', ['inactive-f', '!inactive-report'], { options: { names: [{ pattern: 'idlef-*' }] } });
  proto.deleteUser = deleteUser;
  t.same(outcome('inactive-partial'), ['inactive-f:user "idlef-a": account is locked', 'inactive-report:ok']);
  t.same(recorded('inactive-partial'), ['inactive-report: disabled: idlef-c deleted: idlef-b (inactive-f: user "idlef-a": account is locked)']);
  t.ok(await user('idlef-a'), 'the failed user is kept');
  t.equal(await user('idlef-b'), undefined);
  t.equal((await user('idlef-c'))!.status, 0);
});

t.test('backup (4) writes backup_<Weekday>_<hour>.json through the backup service', async (t) => {
  await mkAction('backup', 4);
  await runRule('backup-rule', ['backup']);
  t.same(outcome('backup-rule'), ['backup:ok']);
  const files = readdirSync(ta.config.common.backups_dir);
  t.equal(files.length, 1);
  t.match(files[0], /^backup_(Sunday|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday)_\d{1,2}\.json$/);
  const dump = JSON.parse(readFileSync(path.join(ta.config.common.backups_dir, files[0]!), 'utf8')) as { users: { username: string }[] };
  t.ok(
    dump.users.some((u) => u.username === 'q1'),
    'the dump holds the users',
  );
});

t.test('backup (4): a failed write leaves no temporary file', async (t) => {
  const dir = ta.config.common.backups_dir;
  rmSync(dir, { recursive: true, force: true });
  // a directory where every possible backup file would go: the rename into place fails
  const names = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'].flatMap((d) =>
    Array.from({ length: 24 }, (_, h) => `backup_${d}_${h}.json`),
  );
  for (const n of names) mkdirSync(path.join(dir, n), { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await mkReader('backup-failed', 'failed: {{.ErrorString}}');
  await runRule('backup-fail-rule', ['backup', '!backup-failed']);
  t.match(outcome('backup-fail-rule'), [/^backup:(?!ok)/, 'backup-failed:ok']);
  t.same(readdirSync(dir).sort(), [...names].sort(), 'only the blocking directories: no temporary file left');
});

t.test('event report (19): a CSV per kind, or one zip per report; .EventReports for a following action', async (t) => {
  const bus = ta.app.container.resolve<import('@ferry/core').EventBus>(TOKENS.EventBus);
  bus.publish('fs', {
    timestamp: Date.now() * 1e6,
    action: 'upload',
    username: 'q1',
    fs_path: '/x',
    virtual_path: '/a,b.txt',
    file_size: 5,
    elapsed: 1,
    status: 1,
    protocol: 'HTTP',
    ip: '1.1.1.1',
    session_id: 's',
    fs_provider: 0,
    instance_id: 'n',
  });
  bus.publish('log', { timestamp: Date.now() * 1e6, event: 1, protocol: 'SFTP', username: 'q1', ip: '2.2.2.2', message: '=cmd', instance_id: 'n' });
  bus.publish('provider', {
    timestamp: Date.now() * 1e6,
    action: 'add',
    username: 'admin',
    ip: '',
    object_type: 'group',
    object_name: 'g-report',
    object_data: {},
    instance_id: 'n',
  });
  await mkAction('report', 19, { event_report_config: { hours: 1, event_types: ['fs', 'log'] } });
  await mkAction('report-zip', 19, { event_report_config: { hours: 1, event_types: ['fs', 'provider'], compress: true } });
  await mkReader(
    'report-reader',
    '{{range .EventReports}}{{.Name}}|{{.Format}}|{{.Type}}|{{.Rows}}|{{range .Files}}{{.Name}}:{{.Rows}} {{end}}|{{if le .Start.Unix .End.Unix}}ok{{end}}\n{{end}}',
  );
  await runRule('report-rule', ['report', 'report-zip', 'report-reader']);
  t.same(outcome('report-rule'), ['report:ok', 'report-zip:ok', 'report-reader:ok']);
  const dir = path.join(ta.dataDir, 'reports');
  const files = readdirSync(dir).sort();
  t.equal(files.length, 3, 'two CSVs and one zip, no working files left');
  const fsCsvName = files.find((f) => f.endsWith('-fs.csv'))!;
  const logCsvName = files.find((f) => f.endsWith('-log.csv'))!;
  const zipName = files.find((f) => f.endsWith('.zip'))!;
  t.match(fsCsvName, /^report-rule-report-\d{8}T\d{6}-[0-9a-f]{8}-fs\.csv$/);
  t.match(zipName, /^report-rule-report-zip-\d{8}T\d{6}-[0-9a-f]{8}\.zip$/);
  const fsCsv = readFileSync(path.join(dir, fsCsvName), 'utf8').split('\r\n');
  t.match(fsCsv[0], /^timestamp,action,username,virtual_path/);
  t.match(fsCsv[1], /,upload,q1,"\/a,b.txt",/);
  t.match(readFileSync(path.join(dir, logCsvName), 'utf8'), /,'=cmd,/, 'formula cells neutralised');

  // the compressed report is ONE file holding a CSV per kind
  const zip = unzip(readFileSync(path.join(dir, zipName)));
  t.same([...zip.keys()].sort(), ['fs.csv', 'provider.csv']);
  t.match(zip.get('fs.csv')!.toString(), /,upload,q1,"\/a,b.txt",/);
  t.match(zip.get('provider.csv')!.toString(), /,add,group,g-report,admin,/);

  // a following action gets every report file
  // (the recorder also holds the events of the earlier tests: count the rows of the files)
  const rows = (csv: Buffer | string) => csv.toString().split('\r\n').filter(Boolean).length - 1;
  const [nFs, nLog, nZipFs, nZipProv] = [
    rows(readFileSync(path.join(dir, fsCsvName))),
    rows(readFileSync(path.join(dir, logCsvName))),
    rows(zip.get('fs.csv')!),
    rows(zip.get('provider.csv')!),
  ];
  t.ok(nFs >= 1 && nLog >= 1 && nZipProv >= 1);
  t.equal(nZipFs, nFs, 'the same period in both reports');
  const rendered = recorded('report-rule')[0]!
    .replace(/^report-reader: /, '')
    .split('\n')
    .filter(Boolean);
  t.same(rendered, [
    `${fsCsvName}|csv|fs|${nFs}|${fsCsvName}:${nFs} |ok`,
    `${logCsvName}|csv|log|${nLog}|${logCsvName}:${nLog} |ok`,
    `${zipName}|zip|fs,provider|${nZipFs + nZipProv}|fs.csv:${nZipFs} provider.csv:${nZipProv} |ok`,
  ]);
});

t.test('event report (19): two quick runs of the same rule keep both reports', async (t) => {
  await mkAction('report-twice', 19, { event_report_config: { hours: 1, event_types: ['fs'] } });
  await mkAction('report-twice-zip', 19, { event_report_config: { hours: 1, event_types: ['fs'], compress: true } });
  await addRule('twice-rule', ['report-twice', 'report-twice-zip']);
  await startRule('twice-rule');
  await mgr.idle();
  await startRule('twice-rule');
  await mgr.idle();
  t.same(outcome('twice-rule'), ['report-twice:ok', 'report-twice-zip:ok', 'report-twice:ok', 'report-twice-zip:ok']);
  const files = readdirSync(path.join(ta.dataDir, 'reports'));
  t.equal(files.filter((f) => /^twice-rule-report-twice-\d{8}T\d{6}-[0-9a-f]{8}-fs\.csv$/.test(f)).length, 2, 'two CSVs');
  t.equal(files.filter((f) => /^twice-rule-report-twice-zip-\d{8}T\d{6}-[0-9a-f]{8}\.zip$/.test(f)).length, 2, 'two zips');
  t.notOk(
    files.some((f) => f.startsWith('.')),
    'no working directory left',
  );
});

t.test('share expiration (18): expired shares deleted, owners of shares expiring soon notified; rotate logs (15)', async (t) => {
  await mkAction('shares', 18, { share_expiration_config: { advance_notice: 3, delete_after: 0 } });
  await addUser('sh1', { email: 'sh1@test.local' });
  await addUser('sh2', { email: 'sh2@test.local' });
  // shares restored as dumped (a restore keeps expired ones)
  const sh = (id: string, username: string, expires_at: number) => ({ id, name: id, scope: 1, paths: ['/'], username, expires_at });
  const load = await ta.inject('POST', '/api/v2/loaddata', {
    token,
    payload: {
      shares: [
        sh('s-old', 'sh1', now - DAY),
        sh('s-soon', 'sh1', now + DAY),
        sh('s-later', 'sh1', now + 30 * DAY),
        sh('s-never', 'sh1', 0),
        sh('s-other', 'sh2', now - DAY),
      ],
    },
  });
  t.equal(load.statusCode, 200, load.payload);
  const shareIds = async () => {
    const r = await ta.inject('GET', '/api/v2/dumpdata?output-data=1&scopes=shares', { token });
    return (JSON.parse(r.payload).shares as { id: string }[]).map((x) => x.id).sort();
  };
  const provider: ProviderEvent[] = [];
  ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void provider.push(e));
  mails.length = 0;
  await runRule('shares-rule', ['shares'], { options: { names: [{ pattern: 'sh1' }] } });
  t.same(outcome('shares-rule'), ['shares:ok']);
  t.same(await shareIds(), ['s-later', 's-never', 's-other', 's-soon'], "the expired share of sh1 deleted, the other user's kept");
  t.same(
    provider.filter((e) => e.object_type === 'share').map((e) => [e.action, e.object_name]),
    [['delete', 's-old']],
  );
  t.same(
    mails.map((m) => m.to),
    [['sh1@test.local']],
  );
  t.match(mails[0]!.raw, /s-soon: expires/);
  t.notMatch(mails[0]!.raw, /s-later/);

  mails.length = 0;
  await runRule('shares-all', ['shares']);
  t.same(await shareIds(), ['s-later', 's-never', 's-soon'], 'every user without conditions');
  t.same(
    mails.map((m) => m.to),
    [['sh1@test.local']],
  );

  await mkAction('rotate', 15, { rotate_logs_config: { keep: 2 } });
  await runRule('rotate-rule', ['rotate']);
  t.same(outcome('rotate-rule'), ['rotate:ok'], 'stdout logging: nothing to rotate');
});
